"""The `squall` command: run daemons, submit and manage topologies, run one locally."""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn
from rich.table import Table
from thriftpy2.thrift import TApplicationException, TException

from squall import thrift_api as T
from squall.client import nimbus_address, nimbus_client
from squall.config import ConfigError, cluster_conf
from squall.tls import CredentialsError
from squall.topology import TopologyFileError

console = Console()
err = Console(stderr=True)

USER_ERRORS = (
    T.AlreadyAliveException,
    T.NotAliveException,
    T.InvalidTopologyException,
    T.IllegalStateException,
    T.AuthorizationException,
)


class SquallGroup(click.Group):
    """Turns the errors a user can cause into one clear line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except USER_ERRORS as exc:
            err.print(f"[red]error:[/red] {type(exc).__name__}: {exc.msg}")
        except TApplicationException as exc:  # a refusal Storm's IDL declares no type for
            err.print(f"[red]error:[/red] {exc.message}")
        except (ConfigError, TopologyFileError, CredentialsError) as exc:
            err.print(f"[red]error:[/red] {exc}")
        except (ConnectionError, OSError, TException) as exc:
            err.print(f"[red]error:[/red] cannot talk to nimbus: {exc}")
        sys.exit(1)


@click.group(cls=SquallGroup)
@click.option("--config", "config_file", type=click.Path(), help="cluster conf file (YAML)")
@click.option("--nimbus", "nimbus", help="nimbus HOST:PORT, overriding nimbus.seeds")
@click.option("-v", "--verbose", is_flag=True)
@click.pass_context
def main(ctx: click.Context, config_file: str | None, nimbus: str | None, verbose: bool) -> None:
    """squall: a Storm-style topology scheduler."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    logging.getLogger("squall.kazoo").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    overrides: dict[str, Any] = {}
    if nimbus:
        host, _, port = nimbus.rpartition(":")
        overrides = {"nimbus.seeds": [host], "nimbus.thrift.port": int(port)}
    ctx.obj = cluster_conf(config_file, **overrides)


def _client(ctx: click.Context):
    return nimbus_client(*nimbus_address(ctx.obj), conf=ctx.obj)


@main.command()
@click.pass_context
def nimbus(ctx: click.Context) -> None:
    """Run the nimbus daemon."""
    from squall.nimbus.daemon import run_nimbus

    run_nimbus(ctx.obj)


@main.command()
@click.pass_context
def supervisor(ctx: click.Context) -> None:
    """Run a supervisor daemon on this host."""
    from squall.supervisor.daemon import DuplicateSupervisorError, run_supervisor

    try:
        run_supervisor(ctx.obj)
    except DuplicateSupervisorError as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(1)


def _parse_settings(settings: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="-c")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _upload_progress() -> Progress:
    return Progress(
        TextColumn("uploading code"), BarColumn(), DownloadColumn(), console=err, transient=True
    )


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--name", help="topology name (default: the Topology's name or the file name)")
@click.option("-c", "settings", multiple=True, help="topology conf KEY=VALUE (JSON value)")
@click.option("--inactive", is_flag=True, help="submit without activating the spouts")
@click.pass_context
def submit(ctx, file: str, name: str | None, settings: tuple[str, ...], inactive: bool) -> None:
    """Submit the topology defined in FILE."""
    from squall.submit import submit_file

    with _client(ctx) as client, _upload_progress() as progress:
        task = progress.add_task("upload", total=None)

        def advance(sent: int, total: int) -> None:
            progress.update(task, completed=sent, total=total)

        submitted = submit_file(
            client, file, ctx.obj, name, _parse_settings(settings), inactive, advance
        )
    console.print(f"submitted topology [bold]{submitted}[/bold]")


@main.command("list")
@click.pass_context
def list_topologies(ctx: click.Context) -> None:
    """List topologies and supervisors."""
    with _client(ctx) as client:
        info = client.getClusterInfo()
    table = Table("name", "id", "status", "tasks", "workers", "uptime (s)")
    for t in info.topologies:
        table.add_row(
            t.name, t.id, t.status, str(t.num_tasks), str(t.num_workers), str(t.uptime_secs)
        )
    console.print(table if info.topologies else "no topologies")
    sups = Table("supervisor", "host", "slots", "used", "uptime (s)")
    for s in info.supervisors:
        sups.add_row(
            s.supervisor_id, s.host, str(s.num_workers), str(s.num_used_workers), str(s.uptime_secs)
        )
    console.print(sups if info.supervisors else "no supervisors")


@main.command()
@click.argument("name")
@click.option("-w", "--wait", "wait_secs", type=int, help="seconds before removal")
@click.pass_context
def kill(ctx: click.Context, name: str, wait_secs: int | None) -> None:
    """Kill topology NAME: spouts stop at once, removal after the wait."""
    with _client(ctx) as client:
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=wait_secs))
    console.print(f"killed topology [bold]{name}[/bold]")


@main.command()
@click.argument("name")
@click.pass_context
def activate(ctx: click.Context, name: str) -> None:
    """Activate topology NAME's spouts."""
    with _client(ctx) as client:
        client.activate(name)
    console.print(f"activated topology [bold]{name}[/bold]")


@main.command()
@click.argument("name")
@click.pass_context
def deactivate(ctx: click.Context, name: str) -> None:
    """Deactivate topology NAME's spouts."""
    with _client(ctx) as client:
        client.deactivate(name)
    console.print(f"deactivated topology [bold]{name}[/bold]")


@main.command()
@click.argument("name")
@click.option("-w", "--wait", "wait_secs", type=int, help="seconds before reassigning")
@click.option("-n", "--num-workers", type=int, help="new number of workers")
@click.option("-e", "executors", multiple=True, help="COMPONENT=N new parallelism")
@click.option("--no-wait", is_flag=True, help="return once nimbus accepted the rebalance")
@click.option("--timeout", default=300, show_default=True, help="seconds to wait for it to run")
@click.pass_context
def rebalance(ctx, name, wait_secs, num_workers, executors, no_wait: bool, timeout: int) -> None:
    """Reassign topology NAME's tasks from scratch, optionally resized, and wait until the
    new assignment is running."""
    counts = {}
    for item in executors:
        component, sep, count = item.partition("=")
        if not sep or not count.isdigit():
            raise click.BadParameter(f"{item!r} is not COMPONENT=N", param_hint="-e")
        counts[component] = int(count)
    options = T.RebalanceOptions(
        wait_secs=wait_secs, num_workers=num_workers, num_executors=counts or None
    )
    with _client(ctx) as client:
        client.rebalance(name, options)
        console.print(f"rebalancing topology [bold]{name}[/bold]")
        if not no_wait:
            _wait_until_running(client, name, timeout)


def _wait_until_running(client: Any, name: str, timeout: int) -> None:
    """Progress until the status is no longer REBALANCING and every task of the new
    assignment is heartbeating from a worker started for it."""
    deadline = time.monotonic() + timeout
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=err,
        transient=True,
    ) as progress:
        bar = progress.add_task("waiting for the rebalance", total=None)
        while time.monotonic() < deadline:
            info = client.getTopologyInfo(name)
            running = sum(1 for e in info.executors if e.stats is not None)
            if info.status == "REBALANCING":
                progress.update(bar, description=f"waiting: {info.status.lower()}")
            else:
                progress.update(
                    bar, description="tasks running", total=len(info.executors), completed=running
                )
                if running == len(info.executors):
                    workers = len({(e.host, e.port) for e in info.executors})
                    console.print(
                        f"[bold]{name}[/bold] runs {len(info.executors)} tasks on "
                        f"{workers} workers ({info.status})"
                    )
                    return
            time.sleep(0.5)
    err.print(f"[red]error:[/red] {name} was not fully running after {timeout}s")
    sys.exit(1)


@main.group()
def config() -> None:
    """Change settings of a running topology."""


@config.command("set")
@click.argument("name")
@click.argument("key")
@click.argument("value")
@click.pass_context
def config_set(ctx: click.Context, name: str, key: str, value: str) -> None:
    """Set KEY to VALUE (JSON, or a plain string) for topology NAME. topology.workers
    rebalances at once; other settings reach workers as they restart."""
    with _client(ctx) as client:
        client.setTopologyConf(name, key, value)
    console.print(f"set {key} = {value} for topology [bold]{name}[/bold]")


@main.group()
def credentials() -> None:
    """The cluster's credentials (security.dir)."""


@credentials.command("init")
@click.pass_context
def credentials_init(ctx: click.Context) -> None:
    """Create what is missing of the CA, the nimbus, admin and supervisor certificates and
    the ZooKeeper role identities."""
    from squall.credentials import ensure_cluster_credentials

    directory = ensure_cluster_credentials(ctx.obj)
    console.print(str(directory) if directory else "security is off: no credentials to make")


@credentials.command("issue")
@click.argument("name")
@click.pass_context
def credentials_issue(ctx: click.Context, name: str) -> None:
    """Issue a client certificate for user NAME (run where the CA key is); NAME is the
    principal nimbus.users, nimbus.admins and topology.users name."""
    from squall.tls import issue

    pem = issue(ctx.obj, name)
    console.print(f"{pem} and {pem.with_suffix('.key')}: give them, with ca.pem, to {name}")


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--output-dir", type=click.Path(file_okay=False), help="where sinks write")
@click.option("--supervisors", default=2, show_default=True)
@click.option("--timeout", default=600, show_default=True, help="seconds to wait for the run")
@click.pass_context
def local(ctx, file: str, output_dir: str | None, supervisors: int, timeout: int) -> None:
    """Run FILE on a throw-away local cluster (ZooKeeper, nimbus, supervisors) until its
    spouts run dry, print what it did, and stop everything."""
    from squall.local import LocalCluster, topology_id, wait_until_quiet
    from squall.submit import submit_file

    out = Path(output_dir or tempfile.mkdtemp(prefix="squall-output-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="squall-local-") as tmp:
        started = time.monotonic()
        err.print(f"starting ZooKeeper, nimbus and {supervisors} supervisors")
        with LocalCluster(Path(tmp), supervisors=supervisors) as cluster:
            conf = cluster.client_conf()
            with cluster.client() as client:
                name = submit_file(client, file, conf, overrides={"topology.output.dir": str(out)})
                tid = topology_id(client, name)
            err.print(f"submitted {name} as {tid}; running until its input is done")
            progress = wait_until_quiet(conf, tid, timeout)
            with cluster.client() as client:
                info = client.getTopologyInfo(tid)
                client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        _print_run(info, progress, out, time.monotonic() - started)


def _print_run(info: Any, progress: dict[str, Any], out: Path, seconds: float) -> None:
    table = Table("component", "tasks", "emitted", "transferred")
    per: dict[str, list[int]] = {}
    for e in info.executors:
        row = per.setdefault(e.component_id, [0, 0, 0])
        row[0] += 1
        if e.stats:
            row[1] += sum(e.stats.emitted.get(":all-time", {}).values())
            row[2] += sum(e.stats.transferred.get(":all-time", {}).values())
    for component, (tasks, emitted, transferred) in sorted(per.items()):
        table.add_row(component, str(tasks), str(emitted), str(transferred))
    console.print(table)
    console.print(
        f"{progress['executed']} tuples processed, {progress['failed']} spout tuples failed "
        f"and replayed, {progress['errors']} errors, "
        f"{seconds:.1f}s including cluster start-up"
    )
    files = sorted(p for p in out.rglob("*") if p.is_file())
    console.print(f"output in {out}: {', '.join(p.name for p in files) or 'no files'}")


if __name__ == "__main__":
    main()
