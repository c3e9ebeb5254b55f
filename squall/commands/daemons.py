"""`squall nimbus|supervisor|ui`: the long-running daemons; each imports its package only when
run, so a client command does not pay for them."""

from __future__ import annotations

import sys

import click

from squall.commands.group import err, fail, main
from squall.config import report_file


@main.command()
@click.pass_context
def nimbus(ctx: click.Context) -> None:
    """Run the nimbus daemon."""
    from squall.nimbus.daemon import run_nimbus

    report_file(ctx.find_root().params.get("config_file"))  # what it accepts but ignores
    run_nimbus(ctx.obj)


@main.command()
@click.pass_context
def supervisor(ctx: click.Context) -> None:
    """Run a supervisor daemon on this host."""
    from squall.processes import SUPERVISOR_UNHEALTHY
    from squall.supervisor.daemon import run_supervisor
    from squall.supervisor.health_check import NodeUnhealthy
    from squall.supervisor.identity import DuplicateSupervisorError

    report_file(ctx.find_root().params.get("config_file"))  # what it accepts but ignores
    try:
        run_supervisor(ctx.obj)
    except DuplicateSupervisorError as exc:
        fail(str(exc))
        sys.exit(1)
    except NodeUnhealthy as exc:
        fail(str(exc))
        sys.exit(SUPERVISOR_UNHEALTHY)


@main.command("node-health-check")
@click.pass_context
def node_health_check(ctx: click.Context) -> None:
    """Run this node's health checks once (the executable files in storm.health.check.dir),
    as a supervisor runs them: each script's result, and exit status 1 if the node fails."""
    from squall.supervisor.health_check import check_dir, described, run_checks, verdict

    try:
        results = run_checks(ctx.obj)
    except OSError as exc:  # e.g. storm.local.dir unreadable
        fail(f"cannot run the health checks: {exc}")
        sys.exit(1)
    for r in results:
        click.echo(described(r))
    if not results:
        click.echo(f"no health-check scripts in {check_dir(ctx.obj)}")
    why = verdict(results, bool(ctx.obj["storm.health.check.fail.on.timeouts"]))
    if why is not None:
        fail(f"the node fails its health checks: {why}")
        sys.exit(1)


@main.command()
@click.pass_context
def ui(ctx: click.Context) -> None:
    """Run the UI daemon: web page, Storm's UI REST API and /metrics on ui.host:ui.port."""
    from squall.ui.server import run_ui

    try:
        run_ui(ctx.obj, announce=lambda line: err.print(line, soft_wrap=True))
    except ValueError as exc:
        fail(str(exc))
        sys.exit(1)
