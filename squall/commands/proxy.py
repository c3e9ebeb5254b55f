"""`squall proxy`: plain Thrift on loopback for Storm and streamparse tools, forwarded to
the nimbus leader over TLS as the invoking user (squall/proxy.py)."""

from __future__ import annotations

import signal

import click

from squall.commands.group import console, main


@main.command("proxy")
@click.option("--port", default=6627, show_default=True, help="local port (Storm's nimbus port)")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option(
    "--allow-remote",
    is_flag=True,
    help="listen on a non-loopback --host (whoever reaches it acts as you)",
)
@click.pass_context
def proxy(ctx: click.Context, port: int, host: str, allow_remote: bool) -> None:
    """Let plain-Thrift clients (Storm, streamparse) reach a secure cluster as you: like
    `kubectl proxy`, calls to HOST:PORT go to the nimbus leader over TLS with your
    certificate (security.user)."""
    from squall.proxy import NimbusProxy, ProxyError, check_bind

    try:
        check_bind(host, allow_remote)
        server = NimbusProxy(ctx.obj, host, port)
    except ProxyError as exc:
        raise click.UsageError(str(exc)) from exc
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: server.close())
    console.print(server.describe(), soft_wrap=True, markup=False, highlight=False)
    server.run()
