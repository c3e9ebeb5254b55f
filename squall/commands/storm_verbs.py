"""Storm's CLI verbs that act on one topology or say what runs: `version`, `set_log_level`,
`get-errors`, `upload-credentials` and `localconfvalue` / `remoteconfvalue`, with Storm's
argument shapes and output (the classes of org.apache.storm.command), each also under the
spelling Storm's other commands use."""

from __future__ import annotations

import copy
import json
import platform
import sys
import time
from pathlib import Path

import click

from squall import thrift_api as T
from squall.commands.group import err, main, nimbus_client_for
from squall.commands.storm_args import (
    StormArgError,
    credential_pairs,
    log_config,
    properties,
)
from squall.java_text import java_string
from squall.staleness import stale_mark, stale_note


def alias(command: click.Command, name: str) -> None:
    """Register `command` under Storm's other spelling too, hidden from the command list."""
    twin = copy.copy(command)
    twin.hidden = True
    main.add_command(twin, name)


@main.command()
def version() -> None:
    """Print squall's version, the Storm version it reports to Storm clients, Python's, and
    which per-tuple path this installation runs."""
    from squall import __version__
    from squall.hot_path import describe
    from squall.storm_version import STORM_WIRE_VERSION, storm_compatible

    click.echo(f"squall {__version__}")
    click.echo(
        f"Storm {storm_compatible(__version__)} (speaks Storm {STORM_WIRE_VERSION}'s Thrift)"
    )
    click.echo(f"Python {platform.python_version()} ({platform.python_implementation()})")
    click.echo(f"per-tuple path: {describe()}")


def _topology_id(client, name: str) -> str:
    """Storm's Utils.getTopologyId: the id of the topology named `name`, or a clear error."""
    try:
        return client.getTopologySummaryByName(name).id
    except T.NotAliveException:
        raise StormArgError(f"{name} is not a running topology") from None


@main.command("localconfvalue")
@click.argument("conf_name")
@click.pass_context
def localconfvalue(ctx: click.Context, conf_name: str) -> None:
    """Print CONF_NAME's value in this machine's cluster conf (squall's defaults with the
    --config file or $SQUALL_CONF over them), as Storm prints it: "name: value", a list's
    items joined by spaces, "null" for a key that is not set. remoteconfvalue is the same:
    Storm's reads the cluster conf on the machine it runs on, not nimbus's."""
    value = ctx.obj.get(conf_name)
    if isinstance(value, (list, tuple)):  # Storm's ConfigValue joins a list's items
        click.echo(f"{conf_name}: {' '.join(map(java_string, value))}")
    else:
        click.echo(f"{conf_name}: {java_string(value)}")


alias(localconfvalue, "remoteconfvalue")


@main.command("set_log_level")
@click.option("-l", "updates", multiple=True, metavar="LOGGER=LEVEL[:TIMEOUT]")
@click.option("-r", "removals", multiple=True, metavar="LOGGER")
@click.argument("name")
@click.pass_context
def set_log_level(ctx, updates: tuple[str, ...], removals: tuple[str, ...], name: str) -> None:
    """Change topology NAME's log levels while it runs. -l ROOT=DEBUG:30 sets the root
    logger to DEBUG for 30 seconds; -l com.myapp=WARN sets it for good (LEVEL: ALL, TRACE,
    DEBUG, INFO, WARN, ERROR, FATAL, OFF); -r com.myapp puts a logger back to its level."""
    config = log_config(updates, removals)
    with nimbus_client_for(ctx) as client:
        client.setLogConfig(_topology_id(client, name), config)
    loggers = ", ".join(sorted(config.named_logger_level))
    err.print(f"Log config for {loggers} is sent for topology {name}", markup=False)


@main.command("get-errors")
@click.argument("name")
@click.pass_context
def get_errors(ctx: click.Context, name: str) -> None:
    """Print topology NAME's latest error of each component in error, as JSON:
    {"Topology Name": NAME, "Comp-Errors": {COMPONENT: ERROR}}. While nimbus answers from
    what it last read (ZooKeeper unreachable), a line on stderr says so and since when."""
    options = T.GetInfoOptions(num_err_choice=T.NumErrorsChoice.ONE)
    with nimbus_client_for(ctx) as client:
        try:
            info = client.getTopologyInfoByNameWithOpts(name, options)
        except T.NotAliveException:
            click.echo(_json({"Failure": f"No topologies running with name {name}"}))
            sys.exit(1)
    mark = stale_mark(info)
    if mark is not None:  # the JSON keeps Storm's shape; the note goes beside it
        err.print(stale_note(*mark, time.time()), markup=False)
    latest = {c: max(e, key=lambda x: x.error_time_secs) for c, e in info.errors.items() if e}
    errors = {c: e.error for c, e in sorted(latest.items())}
    click.echo(_json({"Topology Name": info.name, "Comp-Errors": errors}))


def _json(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))  # json-simple's JSONValue: no spaces


@main.command("upload-credentials")
@click.argument("name")
@click.argument("pairs", nargs=-1, metavar="[KEY VALUE]...")
@click.option("-f", "--file", "file", type=click.Path(exists=True, dir_okay=False))
@click.option("-u", "--user", help="the topology's owner, checked by nimbus (a precaution)")
@click.option("-e", "--exception-when-empty", "strict", is_flag=True, help="fail if none")
@click.pass_context
def upload_credentials(ctx, name: str, pairs, file: str | None, user, strict: bool) -> None:
    """Upload credentials to running topology NAME: a Java properties FILE and KEY VALUE
    pairs (the pairs win). Its spouts and bolts get them merged into what they have."""
    creds = properties(Path(file).read_text()) if file else {}
    creds |= credential_pairs(pairs)
    with nimbus_client_for(ctx) as client:
        _topology_id(client, name)
        if not creds:
            if strict:
                raise StormArgError(f"No credentials were uploaded for {name}")
            err.print(f"No credentials were found to push to {name}", markup=False)
            return
        client.uploadNewCredentials(name, T.Credentials(creds=creds, topoOwner=user))
    err.print(f"Uploaded new creds to topology: {name}", markup=False)


alias(set_log_level, "set-log-level")
alias(get_errors, "get_errors")
alias(upload_credentials, "upload_credentials")
