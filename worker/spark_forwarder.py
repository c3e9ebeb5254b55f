"""The worker's end of the Spark tunnel (squall/spark_tunnel.py says why): a loopback port
that PySpark's Connect client talks to as `sc://localhost:<port>/`, each of its connections
carried over mutual TLS, as this host's identity, to `squall spark connect-server` on the
Spark host.

open() first makes one connection of its own, in the calling thread and within the timeout:
it learns the server's token from the greeting, and a server that cannot be reached (refused,
no answer, not TLS, a certificate either side does not accept, an identity not allowed)
fails here at once with a SparkUnreachable that says which, instead of PySpark retrying for
minutes until the task counts as stalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading

from squall import spark_tunnel as st

log = logging.getLogger("squall.worker")


class Forwarder:
    def __init__(
        self, context: ssl.SSLContext, remote: tuple[str, int], timeout: float = 10.0
    ) -> None:
        self.context = context
        self.remote = remote
        self.timeout = timeout
        self.token = ""
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.sock: socket.socket | None = None
        self.stop: asyncio.Event | None = None

    def where(self) -> str:
        host, port = self.remote
        return f"the Spark Connect server at {host}:{port} ({st.REMOTE})"

    def probe(self) -> str:
        """The server's token, by one connection; SparkUnreachable saying why if none."""
        host, port = self.remote
        try:
            with (
                socket.create_connection((host, port), self.timeout) as raw,
                self.context.wrap_socket(raw, server_hostname=host) as tls,
            ):
                tls.settimeout(self.timeout)
                return st.read_greeting(_read_line(tls))
        except Exception as exc:  # noqa: BLE001 - every way of not getting through, in words
            why = st.explain(exc, self.timeout)
            if isinstance(exc, ConnectionRefusedError):
                why += " (is `squall spark connect-server` running there, on that port?)"
            raise st.SparkUnreachable(f"cannot reach {self.where()}: {why}") from exc

    def open(self) -> int:
        """Probe, then listen on a free loopback port; returns it."""
        self.token = self.probe()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(ready,), name="spark-forwarder", daemon=True
        )
        self.thread.start()
        ready.wait(self.timeout)
        log.info("Spark tunnel: localhost:%d -> %s:%d over TLS", self.port, *self.remote)
        return self.port

    def close(self) -> None:
        """Stop listening and end the tunnels still open."""
        if self.loop is not None and self.stop is not None:
            with contextlib.suppress(RuntimeError):  # already closed
                self.loop.call_soon_threadsafe(self.stop.set)
        if self.thread is not None:
            self.thread.join(10)
        if self.sock is not None:
            self.sock.close()

    def _run(self, ready: threading.Event) -> None:
        assert self.loop is not None
        try:
            self.loop.run_until_complete(self._main(ready))
        finally:
            self.loop.close()

    async def _main(self, ready: threading.Event) -> None:
        self.stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, sock=self.sock)
        ready.set()
        async with server:
            await self.stop.wait()
        tunnels = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tunnels:
            task.cancel()
        await asyncio.gather(*tunnels, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = self.remote
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=self.context, server_hostname=host),
                self.timeout,
            )
            line = await asyncio.wait_for(up_reader.readline(), self.timeout)
            if st.read_greeting(line) != self.token:
                raise st.SparkUnreachable("its token changed: the server was restarted")
        except Exception as exc:  # noqa: BLE001 - the local client sees its connection end
            log.warning("Spark tunnel: cannot reach %s: %s", self.where(), st.explain(exc, 0))
            writer.close()
            return
        await st.relay((reader, writer), (up_reader, up_writer))


def _read_line(tls: ssl.SSLSocket) -> bytes:
    """The greeting line (up to MAX_LINE bytes; what came before the end of the stream)."""
    data = b""
    while not data.endswith(b"\n") and len(data) < st.MAX_LINE:
        chunk = tls.recv(1)
        if not chunk:
            break
        data += chunk
    return data
