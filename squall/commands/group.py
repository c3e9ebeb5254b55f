"""The `squall` command group: global options, the cluster conf, and the one place that turns
a user's mistake into a clear line instead of a traceback."""

from __future__ import annotations

import logging
import sys
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from thriftpy2.thrift import TApplicationException, TException

from squall import thrift_api as T
from squall.client import nimbus_address, nimbus_client
from squall.commands.storm_args import StormArgError
from squall.config import ConfigError, cluster_conf
from squall.security.certificates import CertificateFilesError
from squall.topology import TopologyFileError
from squall.zk.connection import ZooKeeperUnreachable

console = Console()
err = Console(stderr=True)

USER_ERRORS = (
    T.AlreadyAliveException,
    T.NotAliveException,
    T.InvalidTopologyException,
    T.IllegalStateException,
    T.AuthorizationException,
    T.KeyNotFoundException,
    T.KeyAlreadyExistsException,
)


class SquallGroup(click.Group):
    """Turns the errors a user can cause into one clear line and exit status 1. The line's
    text is escaped: a YAML error or a refusal quoting user input may hold "[...]", which
    rich would otherwise take for markup and eat."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except USER_ERRORS as exc:
            fail(f"{type(exc).__name__}: {exc.msg}")
        except TApplicationException as exc:  # a refusal Storm's IDL declares no type for
            fail(str(exc.message))
        except (ConfigError, TopologyFileError, CertificateFilesError, StormArgError) as exc:
            fail(str(exc))
        except ZooKeeperUnreachable as exc:  # a daemon's start, or a command that reads it
            fail(str(exc))
        except (ConnectionError, OSError, TException) as exc:
            fail(f"cannot talk to nimbus: {exc}")
        sys.exit(1)


def fail(message: str) -> None:
    """One error line on stderr, the message shown as it is (never as markup)."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)


def version_text() -> str:
    """`squall --version`'s line (`squall version` says more)."""
    from squall import __version__
    from squall.hot_path import describe
    from squall.storm_version import storm_compatible

    path = describe()
    return f"squall {__version__} (Storm {storm_compatible(__version__)}), per-tuple path {path}"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


@click.group(cls=SquallGroup)
@click.option("--config", "config_file", type=click.Path(), help="cluster conf file (YAML)")
@click.option("--nimbus", "nimbus", help="nimbus HOST:PORT, overriding nimbus.seeds")
@click.option("-v", "--verbose", is_flag=True)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="print squall's version and exit",
)
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
