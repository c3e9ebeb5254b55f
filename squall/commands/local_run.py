"""`squall local`: run one topology file on a throw-away local cluster and summarise the run."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import click
from rich.progress import Progress, TextColumn
from rich.table import Table

from squall import thrift_api as T
from squall.commands.group import console, err, main

PLAIN_EVERY = 5.0  # seconds between progress lines where standard error is not a terminal


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--output-dir", type=click.Path(file_okay=False), help="where sinks write")
@click.option("--supervisors", default=2, show_default=True)
@click.option("--timeout", default=600, show_default=True, help="seconds to wait for the run")
@click.option("--ui/--no-ui", "with_ui", default=True, show_default=True, help="run `squall ui`")
@click.pass_context
def local(
    ctx, file: str, output_dir: str | None, supervisors: int, timeout: int, with_ui: bool
) -> None:
    """Run FILE on a throw-away local cluster (ZooKeeper, nimbus, supervisors and the web
    UI) until its spouts run dry, print what it did, and stop everything."""
    from squall.cluster_waits import topology_id, wait_until_quiet
    from squall.local import LocalCluster
    from squall.submit import submit_file

    out = Path(output_dir or tempfile.mkdtemp(prefix="squall-output-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="squall-local-") as tmp:
        started = time.monotonic()
        err.print(f"starting ZooKeeper, nimbus and {supervisors} supervisors")
        cluster = LocalCluster(Path(tmp), supervisors=supervisors, ui=with_ui)
        cluster.ui_port = _free_or_any(ctx.obj["ui.port"]) if with_ui else 0
        with cluster:
            if with_ui:
                err.print(
                    f"web UI and Storm UI REST API: {cluster.ui_address} (while it runs)",
                    soft_wrap=True,  # one line: the address must copy whole
                )
            conf = cluster.client_conf()
            with cluster.client() as client:
                name = submit_file(client, file, conf, overrides={"topology.output.dir": str(out)})
                tid = topology_id(client, name)
            if tid is None:
                raise click.ClickException(
                    f"nimbus does not list {name} right after its submission"
                )
            err.print(f"submitted {name} as {tid}; running until its input is done", markup=False)
            with Progress(TextColumn("{task.description}"), console=err, transient=True) as bar:
                line = bar.add_task("tasks starting")
                said_at = 0.0

                def show(now: dict[str, Any] | None) -> None:
                    nonlocal said_at
                    bar.update(line, description=progress_line(now))
                    if not err.is_terminal and time.monotonic() - said_at >= PLAIN_EVERY:
                        said_at = time.monotonic()  # a log or a pipe: a line now and then
                        err.print(progress_line(now), markup=False, highlight=False)

                progress = wait_until_quiet(conf, tid, timeout, show)
            with cluster.client() as client:
                info = client.getTopologyInfo(tid)
                client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        _print_run(info, progress, out, time.monotonic() - started)


def progress_line(now: dict[str, Any] | None) -> str:
    """One line of how far a run is, from topology_progress's sums."""
    if now is None:
        return "tasks starting"
    spouts = "input done" if now["spouts_idle"] else "spouts emitting"
    return (
        f"{now['executed']} tuples processed, {now['pending']} pending, "
        f"{now['failed']} failed, {now['errors']} errors; {spouts}"
    )


def _free_or_any(port: int) -> int:
    """`port` (ui.port) when nothing listens on it here, else any free loopback port."""
    import socket

    from squall.zk.server import free_port

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port


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
    names = ", ".join(p.name for p in files) or "no files"
    console.print(f"output in {out}: {names}", markup=False, soft_wrap=True)
