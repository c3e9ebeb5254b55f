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
    from squall.supervisor.daemon import run_supervisor
    from squall.supervisor.identity import DuplicateSupervisorError

    report_file(ctx.find_root().params.get("config_file"))  # what it accepts but ignores
    try:
        run_supervisor(ctx.obj)
    except DuplicateSupervisorError as exc:
        fail(str(exc))
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
