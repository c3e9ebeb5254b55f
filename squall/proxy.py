"""`squall proxy`: a secure cluster for clients that cannot speak TLS (as `kubectl proxy`).

It listens on loopback for plain framed Thrift (binary protocol: Storm's and streamparse's
clients) and forwards every call, frame for frame, to the nimbus leader over TLS with the
invoking user's certificate, the one the CLI uses: those tools act as that user under nimbus's
authorizer. Each local connection gets its own TLS connection. A request frame larger than
nimbus.thrift.max_buffer_size ends its connection, as nimbus would.

Storm's clients look for the leader themselves (getLeader, or the leader in getClusterInfo's
nimbuses) and then connect to the host and port it names, which is nimbus's TLS port. So the
leader's address in those two replies is rewritten to the proxy's own: the client stays on
the proxy. When nimbus cannot be reached, the client's first call is answered with a
TApplicationException saying why, not a dropped connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import struct
import time
from dataclasses import dataclass
from typing import Any

from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer

from squall import thrift_api as T
from squall.client import nimbus_address
from squall.nimbus.rpc.tls_refusal import plain_reply, read_plain_call
from squall.security.tls import client_context
from squall.ui.access import is_loopback  # one rule for "loopback only", the UI's too

log = logging.getLogger("squall.proxy")
LEADER_CALLS = ("getLeader", "getClusterInfo")
CONNECT_SECS = 10.0
LEADER_SECS = 10.0  # the leader is looked up again for a connection after this long
COPY_BYTES = 64 * 1024


class ProxyError(ValueError):
    """A proxy setting refused before anything listens."""


@dataclass(frozen=True)
class ProxyTarget:
    """Where the proxy listens and what it forwards to, as its startup line says."""

    host: str
    port: int
    nimbus: tuple[str, int]
    identity: str | None  # None: open mode, plain Thrift upstream too


def check_bind(host: str, allow_remote: bool) -> None:
    """Anyone who reaches the proxy acts as its user: loopback only, unless asked for."""
    if not is_loopback(host) and not allow_remote:
        raise ProxyError(
            f"--host {host} is not a loopback address: whoever reaches the proxy acts as your "
            "identity; pass --allow-remote to listen there anyway"
        )


def rewrite_leader(frame: bytes, host: str, port: int) -> bytes:
    """A reply frame's message, with the leader's address in getLeader's or getClusterInfo's
    result replaced by (host, port); any other message unchanged."""
    proto = TBinaryProtocol(TMemoryBuffer(frame))
    try:
        name, kind, seqid = proto.read_message_begin()
    except Exception:  # noqa: BLE001 - not ours to judge: forwarded as it came
        return frame
    if kind != TMessageType.REPLY or name not in LEADER_CALLS:
        return frame
    result = getattr(T.Nimbus, f"{name}_result")()
    result.read(proto)
    summaries = [result.success] if name == "getLeader" else []
    if name == "getClusterInfo" and result.success is not None:
        summaries = [n for n in result.success.nimbuses or [] if n.isLeader]
    for summary in summaries:
        if summary is not None:
            summary.host, summary.port = host, port
    out = TMemoryBuffer()
    writer = TBinaryProtocol(out)
    writer.write_message_begin(name, kind, seqid)
    result.write(writer)
    writer.write_message_end()
    return out.getvalue()


class NimbusProxy:
    """Serves until close(); run() blocks on the calling thread."""

    def __init__(self, conf: dict[str, Any], host: str = "127.0.0.1", port: int = 6627) -> None:
        self.conf = conf
        self.context: ssl.SSLContext | None = client_context(conf)  # checks the certificate
        self.identity = (conf.get("security.user") or "admin") if self.context else None
        self.max_frame = int(conf["nimbus.thrift.max_buffer_size"])
        leader = nimbus_address(conf)  # before binding: a proxy to nowhere never listens
        self.sock = socket.create_server((host, port))
        self.target = ProxyTarget(host, self.sock.getsockname()[1], leader, self.identity)
        self.looked_up = time.monotonic()
        self.loop = asyncio.new_event_loop()
        self.stop: asyncio.Event | None = None

    def describe(self) -> str:
        t = self.target
        who = f"as {t.identity!r} (TLS)" if t.identity else "without TLS (security is off)"
        return (
            f"squall proxy: plain Thrift on {t.host}:{t.port} -> nimbus leader "
            f"{t.nimbus[0]}:{t.nimbus[1]} {who}; point Storm and streamparse clients at "
            f"{t.host}:{t.port}"
        )

    def run(self) -> None:
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.loop.close()

    def close(self) -> None:
        """Stop serving; safe from any thread."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._stop_soon)

    def _stop_soon(self) -> None:
        if self.stop is not None:
            self.stop.set()

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, sock=self.sock)
        async with server:
            await self.stop.wait()

    async def _leader(self, fresh: bool) -> tuple[str, int]:
        """The leader, looked up again when `fresh` or the last look-up is old: after a
        failover the old leader still answers, as a standby refusing every write."""
        if fresh or time.monotonic() - self.looked_up > LEADER_SECS:
            address = await self.loop.run_in_executor(None, nimbus_address, self.conf)
            self.looked_up = time.monotonic()
            if address != self.target.nimbus:
                log.info("the nimbus leader is now %s:%d", *address)
            self.target = ProxyTarget(self.target.host, self.target.port, address, self.identity)
        return self.target.nimbus

    async def _upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the leader; the leader looked up again when the last one fails."""
        for fresh in (False, True):
            host, port = await self._leader(fresh)
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(
                        host, port, ssl=self.context, server_hostname=host if self.context else None
                    ),
                    CONNECT_SECS,
                )
            except (OSError, asyncio.TimeoutError) as exc:
                if fresh:
                    raise ConnectionError(f"nimbus at {host}:{port}: {exc}") from exc
        raise AssertionError("unreachable")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            up_reader, up_writer = await self._upstream()
        except Exception as exc:  # noqa: BLE001 - told to the client, the proxy serves on
            log.warning("cannot reach nimbus for %s: %s", peer, exc)
            await self._answer_failure(reader, writer, f"squall proxy cannot reach nimbus: {exc}")
            return
        pumps = [
            asyncio.ensure_future(self._requests(reader, up_writer)),
            asyncio.ensure_future(self._replies(up_reader, writer)),
        ]
        try:
            done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is not None and not isinstance(
                    task.exception(), (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError)
                ):
                    log.warning("connection from %s ended: %s", peer, task.exception())
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            up_writer.close()
            writer.close()

    async def _requests(self, reader: asyncio.StreamReader, up: asyncio.StreamWriter) -> None:
        """Local client -> nimbus: whole frames within nimbus.thrift.max_buffer_size."""
        while True:
            header = await reader.read(4)
            if not header:
                return  # the client closed between calls
            header += await reader.readexactly(4 - len(header))
            (size,) = struct.unpack("!i", header)
            if size & 0xFFFF0000 == 0x80010000:  # a strict message, unframed
                log.warning("refused an unframed Thrift call: use the framed transport (Storm's)")
                return
            if size < 0 or size > self.max_frame:
                log.warning(
                    "refused a frame of %d bytes (nimbus.thrift.max_buffer_size %d)",
                    size,
                    self.max_frame,
                )
                return
            up.write(header + await reader.readexactly(size))
            await up.drain()

    async def _replies(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Nimbus -> local client: frame for frame; the leader's address rewritten."""
        while True:
            header = await up.read(4)
            if not header:
                return
            header += await up.readexactly(4 - len(header))
            (size,) = struct.unpack("!i", header)
            if size < 0:
                raise ConnectionError(f"nimbus sent a frame of {size} bytes")
            head = await up.readexactly(min(size, 4 + 4 + 4 + 64))
            if _reply_name(head) in LEADER_CALLS:
                frame = rewrite_leader(head + await up.readexactly(size - len(head)), *self._own())
                writer.write(struct.pack("!i", len(frame)) + frame)
            else:
                writer.write(header + head)
                left = size - len(head)
                while left:
                    chunk = await up.read(min(left, COPY_BYTES))
                    if not chunk:
                        raise asyncio.IncompleteReadError(b"", left)
                    writer.write(chunk)
                    left -= len(chunk)
                    await writer.drain()
            await writer.drain()

    def _own(self) -> tuple[str, int]:
        return self.target.host, self.target.port

    async def _answer_failure(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, message: str
    ) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            call = await asyncio.wait_for(read_plain_call(reader.readexactly, self.max_frame), 5)
            if call is not None:
                kind = TApplicationException.INTERNAL_ERROR
                writer.write(plain_reply(call, message, kind))
                writer.write_eof()
                await writer.drain()
                # the client's unread bytes would reset the connection and lose the answer
                await asyncio.wait_for(reader.read(self.max_frame + 4096), 2)
        writer.close()


def _reply_name(head: bytes) -> str | None:
    """The method a reply's first bytes name (strict binary protocol), if they do."""
    if len(head) < 8:
        return None
    version, length = struct.unpack("!II", head[:8])
    if version & 0xFFFF0000 != 0x80010000 or length > len(head) - 8:
        return None
    return head[8 : 8 + length].decode("utf-8", "replace")
