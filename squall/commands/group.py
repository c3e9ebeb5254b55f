"""The `squall` command group: global options, the cluster conf, and the one place that turns
a user's mistake into a clear line instead of a traceback."""

from __future__ import annotations

import logging
import sys
from typing import Any

import click
from rich.console import Console
from thriftpy2.thrift import TApplicationException, TException

from squall import thrift_api as T
from squall.certificates import CredentialsError
from squall.client import nimbus_address, nimbus_client
from squall.config import ConfigError, cluster_conf
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


def nimbus_client_for(ctx: click.Context):
    return nimbus_client(*nimbus_address(ctx.obj), conf=ctx.obj)
