"""The Spark host's end of the tunnel (squall/spark_tunnel.py says why): a mutual-TLS
listener that admits clients whose certificate comes from the cluster's CA and names an
allowed identity, greets each with the Connect server's token, and relays its bytes to the
Connect server on loopback. Every refusal is logged with its reason, once a minute per peer
address and reason (a scanner must not flood the log)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from typing import Any

from squall import spark_tunnel as st
from squall.security.tls import peer_principal

log = logging.getLogger("squall.spark")
HANDSHAKE_SECS = 10.0
LOG_EVERY_SECS = 60.0


class TunnelListener:
    """Serves until close(); run() blocks on the calling thread. `upstream` gives the Connect
    server's loopback port and token, or None while it is not ready."""

    def __init__(
        self,
        context: ssl.SSLContext,
        host: str,
        port: int,
        allowed: Sequence[str],
        upstream: Callable[[], tuple[int, str] | None],
    ) -> None:
        self.context = context
        self.allowed = tuple(allowed)
        self.upstream = upstream
        self.sock = socket.create_server((host, port))
        self.address = self.sock.getsockname()[:2]
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(self._loop_error)
        self.stop: asyncio.Event | None = None
        self.logged: dict[tuple[str, str], float] = {}

    def run(self) -> None:
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.loop.close()
            self.sock.close()

    def close(self) -> None:
        """Stop serving; safe from any thread and from a signal handler."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._stop_soon)

    def _stop_soon(self) -> None:
        if self.stop is not None:
            self.stop.set()

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        server = await asyncio.start_server(
            self._serve, sock=self.sock, ssl=self.context, ssl_handshake_timeout=HANDSHAKE_SECS
        )
        async with server:
            await self.stop.wait()
        tunnels = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tunnels:  # the connections still open end with the listener
            task.cancel()
        await asyncio.gather(*tunnels, return_exceptions=True)

    def _refused(self, peer: Any, reason: str) -> None:
        host = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
        now = time.monotonic()
        if now - self.logged.get((host, reason), -LOG_EVERY_SECS) >= LOG_EVERY_SECS:
            self.logged[(host, reason)] = now
            log.warning("Spark tunnel: refused %s: %s", host, reason)

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """A failed handshake surfaces here (asyncio logs it with a traceback otherwise)."""
        exc = context.get("exception")
        transport = context.get("transport")
        peer = transport.get_extra_info("peername") if transport is not None else "?"
        if isinstance(exc, (ssl.SSLError, ConnectionError, TimeoutError)):
            self._refused(peer, f"TLS handshake failed: {getattr(exc, 'reason', None) or exc}")
        else:
            loop.default_exception_handler(context)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        who = peer_principal(writer.get_extra_info("peercert"))
        upstream = self.upstream()
        reason = None
        if who not in self.allowed:
            reason = f"identity {who!r} is not allowed here (allowed: {', '.join(self.allowed)})"
        elif upstream is None:
            reason = "the Spark Connect server behind it is not ready"
        if reason is None:
            assert upstream is not None
            try:
                local = await asyncio.open_connection("127.0.0.1", upstream[0])
            except OSError as exc:
                reason = f"the Spark Connect server behind it does not answer: {exc}"
        if reason is not None:
            self._refused(peer, reason)
            with contextlib.suppress(Exception):
                writer.write(st.refusal(reason))
                await writer.drain()
            writer.close()
            return
        writer.write(st.greeting(upstream[1]))  # type: ignore[index]
        await st.relay((reader, writer), local)
