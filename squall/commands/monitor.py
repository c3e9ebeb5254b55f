"""`squall monitor NAME -m COMPONENT`: Storm's Monitor (org.apache.storm.utils.Monitor), a
component's throughput polled from nimbus every interval until Ctrl-C (or `--count` rows),
one tab-separated line per poll as Storm prints it."""

from __future__ import annotations

import time
from typing import Any

import click

from squall import thrift_api as T
from squall.commands.group import main, nimbus_client_for
from squall.commands.storm_args import StormArgError, component_count, throughput
from squall.thrift_api import DEFAULT_STREAM

_NO_ERRORS = T.GetInfoOptions(num_err_choice=T.NumErrorsChoice.NONE)


def _components(info: Any) -> list[str]:
    return sorted({e.component_id for e in info.executors or ()})


def _list_components(name: str, info: Any) -> None:
    click.echo(f"Available components for {name} :")
    click.echo("------------------")
    for component in _components(info):
        click.echo(component)
    click.echo("------------------")


def _positive(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value <= 0:
        raise click.BadParameter(f"{value} is not a positive integer")
    return value


@main.command()
@click.argument("name")
@click.option("-i", "--interval", default=4, show_default=True, callback=_positive, type=int)
@click.option("-m", "--component", help="the component to watch (none: list them)")
@click.option("-s", "--stream", default=DEFAULT_STREAM, show_default=True)
@click.option("-w", "--watch", type=click.Choice(["emitted", "transferred"]), default="emitted")
@click.option("--count", type=int, callback=_positive, help="stop after this many lines")
@click.pass_context
def monitor(ctx, name: str, interval: int, component, stream: str, watch: str, count) -> None:
    """Print topology NAME's throughput of COMPONENT's STREAM every INTERVAL seconds: the
    tuples emitted (or transferred) since the last line and thousands of them per second."""
    with nimbus_client_for(ctx) as client:
        if not component:
            _list_components(name, client.getTopologyInfoByNameWithOpts(name, _NO_ERRORS))
            click.echo("Please use -m to specify one component")
            return
        click.echo(
            f"topology\tcomponent\tparallelism\tstream\ttime-diff ms\t{watch}\tthroughput (Kt/s)"
        )
        start_ms = last_ms = _now_ms()
        last_count, rows = 0, 0
        try:
            while True:
                now_ms = _now_ms()
                info = client.getTopologyInfoByNameWithOpts(name, _NO_ERRORS)
                parallelism, total = component_count(info, component, watch, stream)
                if parallelism == 0:
                    _list_components(name, info)
                    raise StormArgError(f"component: {component} not found")
                if total is None:
                    raise StormArgError(f"stream: {stream} not found")
                delta_ms, delta = now_ms - last_ms, total - last_count
                last_ms, last_count = now_ms, total
                rate = throughput(delta, delta_ms)
                click.echo(
                    f"{name}\t{component}\t{parallelism}\t{stream}\t{delta_ms}\t{delta}\t{rate}"
                )
                rows += 1
                if count is not None and rows >= count:
                    return
                _sleep_until_next_poll(start_ms, interval * 1000)
        except KeyboardInterrupt:
            return


def _now_ms() -> int:
    return int(time.time() * 1000)


def _sleep_until_next_poll(start_ms: int, poll_ms: int) -> None:
    """Storm's Poller: wake at the next multiple of the interval since the start, so a slow
    answer from nimbus does not drift the lines."""
    now = _now_ms()
    wake = start_ms + poll_ms * ((now - start_ms) // poll_ms + 1)
    time.sleep(max(0, wake - now) / 1000)
