"""The topology commands: submit, list, kill, (de)activate, rebalance and `config set`."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

from squall import thrift_api as T
from squall.commands.group import console, err, fail, main, nimbus_client_for


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
@click.option("--dry-run", is_flag=True, help="check and list what would be packed; send nothing")
@click.pass_context
def submit(ctx, file: str, name, settings: tuple[str, ...], inactive: bool, dry_run: bool) -> None:
    """Submit the topology defined in FILE; everything in FILE's directory is packed (but
    caches, VCS and hidden files)."""
    from squall.submit import submit_file

    if dry_run:
        _dry_run(ctx, file, name, _parse_settings(settings))
        return
    with nimbus_client_for(ctx) as client, _upload_progress() as progress:
        task = progress.add_task("upload", total=None)

        def advance(sent: int, total: int) -> None:
            progress.update(task, completed=sent, total=total)

        def warn(message: str) -> None:
            err.print(f"[yellow]warning:[/yellow] {escape(message)}", soft_wrap=True)

        submitted = submit_file(
            client, file, ctx.obj, name, _parse_settings(settings), inactive, advance, warn
        )
    console.print(f"submitted topology [bold]{escape(submitted)}[/bold]", soft_wrap=True)


def _dry_run(ctx: click.Context, file: str, name: str | None, overrides: dict) -> None:
    """The files a submit would pack, with sizes, and the package's size; nimbus is not
    asked (whether the name is free is the submit's question)."""
    from squall.submit import prepare, size_warning

    packed, _, _ = prepare(file, ctx.obj, name, overrides)
    for rel, size in packed.files:
        click.echo(f"{size:>12}  {rel}")
    click.echo(
        f"{len(packed.files)} files, {sum(s for _, s in packed.files)} bytes, packed to "
        f"{len(packed.package)} bytes: topology {packed.name} (dry run: nothing submitted)"
    )
    warning = size_warning(packed)
    if warning:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="topologies and supervisors as JSON")
@click.pass_context
def list_topologies(ctx: click.Context, as_json: bool) -> None:
    """List topologies (Storm's columns) and supervisors. Plain text, never cut: an id
    copied from it, or from a pipe, is whole."""
    from squall.commands.listing import listing_json, listing_lines

    with nimbus_client_for(ctx) as client:
        info = client.getClusterInfo()
    for line in [listing_json(info)] if as_json else listing_lines(info, time.time()):
        click.echo(line)


@main.command()
@click.argument("name")
@click.option(
    "-w", "--wait", "--wait-time-secs", "wait_secs", type=int, help="seconds before removal"
)
@click.pass_context
def kill(ctx: click.Context, name: str, wait_secs: int | None) -> None:
    """Kill topology NAME: spouts stop at once, removal after the wait."""
    with nimbus_client_for(ctx) as client:
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=wait_secs))
    console.print(f"killed topology [bold]{escape(name)}[/bold]", soft_wrap=True)


@main.command()
@click.argument("name")
@click.pass_context
def activate(ctx: click.Context, name: str) -> None:
    """Activate topology NAME's spouts."""
    with nimbus_client_for(ctx) as client:
        client.activate(name)
    console.print(f"activated topology [bold]{escape(name)}[/bold]", soft_wrap=True)


@main.command()
@click.argument("name")
@click.pass_context
def deactivate(ctx: click.Context, name: str) -> None:
    """Deactivate topology NAME's spouts."""
    with nimbus_client_for(ctx) as client:
        client.deactivate(name)
    console.print(f"deactivated topology [bold]{escape(name)}[/bold]", soft_wrap=True)


@main.command()
@click.argument("name")
@click.option(
    "-w", "--wait", "--wait-time-secs", "wait_secs", type=int, help="seconds before reassigning"
)
@click.option("-n", "--num-workers", type=int, help="new number of workers")
@click.option("-e", "--executor", "executors", multiple=True, help="COMPONENT=N new parallelism")
@click.option(
    "-r",
    "--resources",
    help='per component, resources from now on: \'{"split": {"onheap.memory.mb": 512}}\'',
)
@click.option(
    "-t", "--topology-conf", "topology_conf", help="topology conf to merge: '{\"key\": value}'"
)
@click.option("--no-wait", is_flag=True, help="return once nimbus accepted the rebalance")
@click.option("--timeout", default=300, show_default=True, help="seconds to wait for it to run")
@click.pass_context
def rebalance(
    ctx,
    name,
    wait_secs,
    num_workers,
    executors,
    resources: str | None,
    topology_conf: str | None,
    no_wait: bool,
    timeout: int,
) -> None:
    """Reassign topology NAME's tasks from scratch, optionally resized, with new resources
    for its components or new settings (Storm's -r and -t), and wait until the new
    assignment is running."""
    counts = {}
    for item in executors:
        component, sep, count = item.partition("=")
        if not sep or not count.isdigit():
            raise click.BadParameter(f"{item!r} is not COMPONENT=N", param_hint="-e")
        counts[component] = int(count)
    options = T.RebalanceOptions(
        wait_secs=wait_secs,
        num_workers=num_workers,
        num_executors=counts or None,
        topology_resources_overrides=_resources_option(resources),
        topology_conf_overrides=_json_object(topology_conf, "-t") and topology_conf,
    )
    with nimbus_client_for(ctx) as client:
        client.rebalance(name, options)
        console.print(
            f"rebalancing topology [bold]{escape(name)}[/bold]: every worker of it restarts, "
            "as in Storm (spouts that keep their place only in memory start over; see "
            "docs/reliability.md)",
            soft_wrap=True,
        )
        if not no_wait:
            _wait_until_running(client, name, timeout)


def _json_object(text: str | None, hint: str) -> dict | None:
    """A JSON object given on the command line (BadParameter otherwise), or None."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=hint) from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint=hint)
    return value


def _resources_option(text: str | None) -> dict | None:
    """Storm's -r: {component: {resource: amount}}, amounts as numbers."""
    given = _json_object(text, "-r")
    if given is None:
        return None
    out = {}
    for component, wanted in given.items():
        if not isinstance(wanted, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in wanted.values()
        ):
            raise click.BadParameter(f"{component!r} needs {{resource: amount}}", param_hint="-r")
        out[str(component)] = {str(k): float(v) for k, v in wanted.items()}
    return out


def _wait_until_running(client: Any, name: str, timeout: int) -> None:
    """Progress until the status is no longer REBALANCING and every task of the new
    assignment is heartbeating from a worker started for it; the outcome is printed after
    the bar is gone, not into it."""
    deadline = time.monotonic() + timeout
    outcome = None
    with Progress(
        TextColumn("{task.description}"), BarColumn(), console=err, transient=True
    ) as progress:
        bar = progress.add_task("rebalancing: waiting for nimbus", total=None)
        while outcome is None and time.monotonic() < deadline:
            info = client.getTopologyInfo(name)
            running = sum(1 for e in info.executors if e.stats is not None)
            total = len(info.executors)
            if info.status == "REBALANCING":
                progress.update(bar, description=f"rebalancing: {info.status.lower()}")
            elif running == total:
                outcome = info
            else:
                progress.update(
                    bar,
                    description=f"{running} of {total} tasks restarted",
                    total=total,
                    completed=running,
                )
            if outcome is None:
                time.sleep(0.5)
    if outcome is None:
        fail(f"{name} was not fully running after {timeout}s")
        sys.exit(1)
    workers = len({(e.host, e.port) for e in outcome.executors})
    console.print(
        f"[bold]{escape(name)}[/bold] runs {len(outcome.executors)} tasks on "
        f"{workers} workers ({outcome.status})",
        soft_wrap=True,
    )


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
    with nimbus_client_for(ctx) as client:
        client.setTopologyConf(name, key, value)
    console.print(f"set {key} = {value} for topology {name}", markup=False, soft_wrap=True)
