"""Nimbus's Thrift server: framed transport, binary protocol (what Storm clients speak), on
an asyncio loop, with the limits that keep hostile clients from taking nimbus down or
locking others out.

- Each request is one frame, read whole before it is decoded (nimbus/rpc/thrift_call.py bounds
  what it can decode into). A frame larger than nimbus.thrift.max_buffer_size, or with a
  negative length, closes its connection before anything is allocated for it.
- Deadlines: a TLS handshake (nimbus.thrift.handshake.timeout.secs), a request from its
  frame's first byte to its last and the write of its reply
  (nimbus.thrift.request.timeout.secs), the silence between requests
  (nimbus.thrift.client.idle.secs). A connection past one is closed.
- Connections cost a coroutine, not a thread. When nimbus.thrift.max.connections (or
  nimbus.thrift.max.connections.per.address for one host) are open, a newcomer is still
  served: the connection waiting on its client longest is closed (nimbus/rpc/connection_limits.py).
  A connection counts from its accept: it is admitted first, its TLS handshake after (it
  waits on its client meanwhile), so strangers who open connections and never finish a
  handshake close each other's, not nimbus's descriptors. Nothing is read from a socket
  before its handshake starts (`_Unread`), so the client's hello is there for TLS. (asyncio's
  own TLS server hands a connection over only once it is authenticated: uncounted, pending
  handshakes were bounded only by the handshake deadline and the open-files limit, as they
  still are on Python 3.10, which lacks StreamWriter.start_tls.)
- An authenticated connection (a valid client certificate; in open mode, a valid call) is
  never closed for a newcomer; past a cap of only authenticated ones a newcomer is admitted
  over it and, once authenticated, closes the one waiting longest (connection_limits.py).
- Strangers' connections give their memory back: see nimbus/rpc/reclaim.py.
- Refused requests (unknown methods, bad frames) are logged once a minute per peer and kind.
- Before its handshake, a connection's first byte is peeked (MSG_PEEK, so TLS still gets the
  whole hello), within the handshake deadline and as part of the handshake (a connection
  dropped meanwhile is cancelled): a plain Thrift call is answered with a
  TApplicationException saying TLS with a client certificate is required
  (nimbus/rpc/tls_refusal.py), anything else that is not TLS is closed. Refusals and failed
  handshakes are logged with their reason, at most once a minute per peer and reason.
- Handler calls run on nimbus.thrift.threads threads (they block on the controller), each
  inside the caller's RequestContext (principal: the TLS client certificate's CN). A call
  queued for a thread still waits: until a thread takes it, its connection may be closed
  to make room (and the call is dropped, never run). Counted as running from the moment it
  was read, calls queued behind busy threads made every slot unclosable: newcomers were
  refused ("all running calls") while the queue drained.
- Any error in a request closes only that connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import resource
import socket
import ssl
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.connection_limits import (
    ConnectionView,
    ServerLimits,
    admit,
    room_for_authenticated,
)
from squall.nimbus.rpc.daemon_pool import DaemonPool
from squall.nimbus.rpc.reclaim import TRIM_EVERY_SECS, Reclaimer, fix_mmap_threshold, reclaim
from squall.nimbus.rpc.request_context import RequestContext
from squall.nimbus.rpc.thrift_call import BadRequest, Refusal, decode_call, frame_length, run_call
from squall.nimbus.rpc.tls_refusal import (
    NOT_THRIFT,
    PLAIN,
    RefusalLog,
    handshake_refusal,
    plain_reply,
    read_plain_call,
    speaks_tls,
)
from squall.security.tls import peer_principal

log = logging.getLogger("squall.nimbus.rpc.server")
WARN_EVERY_SECS = 10.0
# Requests decoded at once. Decoding is CPU under the GIL, so more at once is no faster, and
# each may hold up to nimbus.thrift.max.request.values objects (about 15 MB at 100,000) until
# it fails: two bound that transient memory however many pool threads there are.
DECODERS = 2
PLAIN_READ_SECS = 5.0  # a plain client's call header (it comes in its first packet)
PLAIN_LINGER_SECS = 2.0  # for a refused plain client to read its answer and close


LATE_TLS = sys.version_info >= (3, 11)  # admitted, then TLS (StreamWriter.start_tls)


class _Unread(asyncio.StreamReaderProtocol):
    """A stream that reads nothing until its connection is admitted and TLS starts (start_tls
    resumes reading): bytes read before would be the client's hello, lost to TLS."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.pause_reading()  # type: ignore[attr-defined]  # a socket transport's
        super().connection_made(transport)


class FrameRefused(Exception):
    """A frame header announced a length nimbus will not read."""


@dataclass
class _Connection:
    id: int
    address: str
    transport: asyncio.WriteTransport  # a StreamWriter's
    waiting_since: float  # since its last reply, or since its queued call was read
    task: asyncio.Task | None = None  # the coroutine serving it
    handshaking: bool = False  # in its TLS handshake: dropped by cancelling `task`
    frame: bytes | None = None  # its queued call's request (None once a thread took it)
    running: bool = False  # a pool thread runs its call: never closed to make room
    dropped: bool = False  # closed to make room (or at shutdown): a queued call never runs
    authenticated: bool = False  # a valid client certificate, or (open mode) a valid call


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit: each connection is a descriptor."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
    return soft


class NimbusServer:
    def __init__(
        self, service: Any, conf: dict[str, Any], ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.service = service
        self.handler: Any = None
        self.ssl_context = ssl_context
        self.limits = ServerLimits.from_conf(conf)
        self.address = (conf["nimbus.host"], conf["nimbus.thrift.port"])
        self.sock: socket.socket | None = None
        self.loop = asyncio.new_event_loop()
        self.pool: DaemonPool | None = None
        self.connections: dict[int, _Connection] = {}
        self.tasks: set[asyncio.Task] = set()
        self.ids = itertools.count(1)
        self.decoders = threading.BoundedSemaphore(DECODERS)
        self.calls = threading.Lock()  # a queued call starts, or its connection is dropped
        self.closed = threading.Event()
        self.stop: asyncio.Event | None = None
        self.cut = 0  # connections closed to make room since the last warning
        self.warned_at = 0.0
        self.refusals = RefusalLog(log)
        # unknown methods and bad requests: a line per peer and kind a minute, not per call
        self.call_refusals = RefusalLog(log, what="a Thrift request")
        self.reclaimer = Reclaimer()  # strangers' ended connections: memory back (reclaim.py)
        self.reclaim_timer: asyncio.TimerHandle | None = None

    def listen(self) -> int:
        """Bind and listen; returns the port (useful when configured as 0)."""
        files = raise_open_files_limit()
        fix_mmap_threshold()
        if files < self.limits.max_connections + 64:
            log.warning(
                "open files limit %d is low for %d connections", files, self.limits.max_connections
            )
        self.sock = socket.create_server(self.address, backlog=128)
        return self.sock.getsockname()[1]

    def serve_forever(self, handler: Any) -> None:
        """Serve until close(); runs the event loop on the calling thread."""
        self.handler = handler
        self.pool = DaemonPool(self.limits.threads, "nimbus-thrift")
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.pool.shutdown()
            self.loop.close()

    def close(self) -> None:
        """Stop serving; safe from any thread and from signal handlers."""
        self.closed.set()
        with contextlib.suppress(RuntimeError):  # the loop already ended
            self.loop.call_soon_threadsafe(self._stop_soon)
        if not self.loop.is_running() and self.sock is not None:
            self.sock.close()

    def _stop_soon(self) -> None:
        if self.stop is not None:
            self.stop.set()

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        if self.closed.is_set() or self.sock is None:
            return
        if self.ssl_context is not None and LATE_TLS:
            loop = asyncio.get_running_loop()

            def unread() -> _Unread:
                return _Unread(asyncio.StreamReader(loop=loop), self._connection, loop=loop)

            server = await loop.create_server(unread, sock=self.sock)
        else:  # plain, or Python 3.10: asyncio's TLS server (handshakes uncounted)
            server = await asyncio.start_server(
                self._connection,
                sock=self.sock,
                ssl=self.ssl_context,
                ssl_handshake_timeout=self.limits.handshake_secs if self.ssl_context else None,
            )
        try:
            await self.stop.wait()
        finally:
            server.close()
            with self.calls:
                for conn in list(self.connections.values()):
                    self._drop(conn)
            await self._end_tasks()

    async def _end_tasks(self) -> None:
        """Let connection tasks see their aborted transports, then cancel what remains (a
        call still running): none is left pending when the loop closes."""
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=2)
        for task in set(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def _views(self) -> list[ConnectionView]:
        return [
            ConnectionView(
                c.id,
                c.address,
                None if c.running else c.waiting_since,
                c.frame is not None,
                c.authenticated,
            )
            for c in self.connections.values()
        ]

    def _authenticated(self, conn: _Connection) -> None:
        """`conn` authenticated: from now on no stranger closes it; admitted over a cap full
        of authenticated connections, it closes the one of them waiting longest."""
        if conn.authenticated or conn.dropped or conn.id not in self.connections:
            return
        conn.authenticated = True
        with self.calls:
            views = self._views()
            me = next(v for v in views if v.id == conn.id)
            victim = room_for_authenticated(
                views, me, self.limits.max_connections, self.limits.max_per_address
            )
            if victim is not None:
                self._drop(self.connections.pop(victim))

    def _admit(self, conn: _Connection) -> bool:
        with self.calls:  # no queued call starts between the decision and the drop
            views = self._views()
            decision = admit(
                views, conn.address, self.limits.max_connections, self.limits.max_per_address
            )
            if decision.evict is not None:
                self._drop(self.connections.pop(decision.evict))
        if decision.evict is not None or not decision.admit:
            self.cut += 1
            now = time.monotonic()
            if now - self.warned_at > WARN_EVERY_SECS:
                log.warning("%s (%d connections closed or refused)", decision.reason, self.cut)
                self.warned_at, self.cut = now, 0
        return decision.admit

    def _reclaim_later(self) -> None:
        """Churn that stops short of RECLAIM_EVERY ends is reclaimed once things are quiet."""
        if self.reclaim_timer is None:
            self.reclaim_timer = self.loop.call_later(TRIM_EVERY_SECS, self._reclaim_now)

    def _reclaim_now(self) -> None:
        self.reclaim_timer = None
        self.reclaimer.ended = 0
        reclaim(quiet=True)

    def _drop(self, conn: _Connection) -> None:
        """Close `conn` (under `calls` where a queued call may start). One in its TLS
        handshake is cancelled: its transport is still the raw one, whose abort asyncio
        reports as a handshake that succeeded with no transport."""
        conn.dropped, conn.frame = True, None
        if conn.handshaking and conn.task is not None:
            conn.task.cancel()
        else:
            conn.transport.abort()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is None:  # asyncio.start_server runs each connection's coroutine as a task
            raise RuntimeError("a Thrift connection served outside an asyncio task")
        if self.closed.is_set():  # accepted as the server closes: _end_tasks would miss it
            writer.transport.abort()
            return
        peer = writer.get_extra_info("peername") or ("?", 0)
        address = f"{peer[0]}:{peer[1]}"
        conn = _Connection(next(self.ids), str(peer[0]), writer.transport, self.loop.time(), task)
        if not self._admit(conn):
            writer.transport.abort()
            return
        self.connections[conn.id] = conn
        self.tasks.add(task)
        try:
            if self.ssl_context is not None and LATE_TLS:
                conn.handshaking = True
                try:
                    tls = await self._handshake(writer, str(peer[0]))
                finally:
                    conn.handshaking = False
                if conn.dropped:  # dropped as the handshake ended (wait_for kept the result)
                    return
                if not tls:
                    await self._refuse_plain(reader, writer, str(peer[0]))
                    return
                conn.transport = writer.transport  # the TLS one, which eviction must abort
            principal = None
            if self.ssl_context is not None:
                principal = peer_principal(writer.get_extra_info("peercert"))
                if principal is not None:  # CERT_REQUIRED verified it
                    self._authenticated(conn)
            ctx = RequestContext(principal=principal, address=address)
            await self._serve(conn, reader, writer, ctx)
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError, ssl.SSLError):
            pass  # the client left, stalled or broke TLS: only its connection ends
        except asyncio.CancelledError:
            if not conn.dropped:
                raise
            # dropped in its handshake, or at shutdown: ends as any closed connection
        except (FrameRefused, BadRequest) as exc:
            log.info("closing Thrift connection from %s: %s", address, exc)
        except Exception:  # noqa: BLE001 - nothing a client does ends the server
            log.exception("Thrift connection from %s failed", address)
        finally:
            self.connections.pop(conn.id, None)
            self.tasks.discard(task)
            (writer.transport or conn.transport).abort()
            if not conn.authenticated and not self.reclaimer.note_ended():
                self._reclaim_later()

    async def _handshake(self, writer: asyncio.StreamWriter, host: str) -> bool:
        """An admitted connection's TLS handshake, within its deadline; False (nothing read)
        when the client's first byte is not a TLS hello. A failed handshake is logged."""
        deadline = self.loop.time() + self.limits.handshake_secs
        first = await self._peek(writer, self.limits.handshake_secs)
        if not first:
            raise ConnectionResetError("the client left before its TLS hello")
        if not speaks_tls(first):
            return False
        try:
            await self._start_tls(writer, max(deadline - self.loop.time(), 0.1))
        except (ssl.SSLError, asyncio.TimeoutError) as exc:
            self.refusals.note(host, handshake_refusal(exc), time.monotonic())
            raise
        return True

    async def _peek(self, writer: asyncio.StreamWriter, timeout: float) -> bytes:
        """The client's first byte, left unread (TLS must get the whole hello). Readiness is
        watched on the connection's own descriptor, whose transport reader is paused (loop.
        add_reader refuses a transport's descriptor; a duplicate held while waiting would
        double the descriptors of silent connections); the byte is peeked on a duplicate
        held for that one call."""
        sock = writer.get_extra_info("socket")
        fd = sock.fileno()
        ready: asyncio.Future[None] = self.loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        self.loop._add_reader(fd, readable)  # type: ignore[attr-defined]  # selector loop
        try:
            await asyncio.wait_for(ready, timeout)
        finally:
            self.loop._remove_reader(fd)  # type: ignore[attr-defined]
        with sock.dup() as peek:
            try:
                return peek.recv(1, socket.MSG_PEEK)
            except BlockingIOError:
                return b""

    async def _refuse_plain(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str
    ) -> None:
        """Answer a plain Thrift call on the TLS port with a TApplicationException that says
        why (anything else is closed), then give the client time to read it: closing with its
        bytes unread would reset the connection and lose the answer."""
        transport = writer.transport
        transport.resume_reading()  # type: ignore[attr-defined]  # a socket transport's
        try:
            call = await asyncio.wait_for(
                read_plain_call(reader.readexactly, self.limits.max_frame), PLAIN_READ_SECS
            )
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
            call = None
        self.refusals.note(host, PLAIN if call else NOT_THRIFT, time.monotonic())
        if call is None:
            return
        writer.write(plain_reply(call))
        writer.write_eof()
        await asyncio.wait_for(writer.drain(), PLAIN_READ_SECS)
        with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
            await asyncio.wait_for(self._discard(reader), PLAIN_LINGER_SECS)

    async def _discard(self, reader: asyncio.StreamReader) -> None:
        """Read and drop what a refused client still sends, until it closes."""
        left = self.limits.max_frame + 4096
        while left > 0 and (data := await reader.read(min(left, 65536))):
            left -= len(data)

    async def _start_tls(self, writer: asyncio.StreamWriter, timeout: float) -> None:
        """The TLS handshake of an admitted connection, within `timeout`."""
        if sys.version_info >= (3, 11):  # LATE_TLS
            assert self.ssl_context is not None
            handshake = writer.start_tls(self.ssl_context, ssl_handshake_timeout=timeout)
            try:
                await asyncio.wait_for(handshake, timeout)
            except AttributeError:  # asyncio (3.11-3.12) ends a handshake whose client left
                if writer.transport is not None:  # as a success with no transport, which
                    raise  # StreamWriter.start_tls then fails to read
                raise ConnectionResetError("the client left during the TLS handshake") from None

    async def _serve(
        self,
        conn: _Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        ctx: RequestContext,
    ) -> None:
        limits = self.limits
        while not self.closed.is_set():
            conn.waiting_since = self.loop.time()
            first = await asyncio.wait_for(reader.readexactly(1), limits.idle_secs)
            conn.frame = await asyncio.wait_for(
                self._rest_of_frame(reader, first), limits.request_secs
            )
            conn.waiting_since = self.loop.time()  # queued: it waits for a thread
            assert self.pool is not None
            reply, close = await self.pool.run(self.loop, self._process, ctx, conn)
            conn.running, conn.waiting_since = False, self.loop.time()
            if reply is not None:
                writer.write(struct.pack("!i", len(reply)) + reply)
                await asyncio.wait_for(writer.drain(), limits.request_secs)
            if close:
                return

    async def _rest_of_frame(self, reader: asyncio.StreamReader, first: bytes) -> bytes:
        size = frame_length(first + await reader.readexactly(3))
        if size < 0 or size > self.limits.max_frame:
            raise FrameRefused(f"frame of {size} bytes refused (nimbus.thrift.max_buffer_size)")
        return await reader.readexactly(size)

    def _process(self, ctx: RequestContext, conn: _Connection) -> tuple[bytes | None, bool]:
        """On a pool thread: decode, check and run `conn`'s queued request; returns
        (reply, close)."""
        with self.calls:
            frame = conn.frame
            if conn.dropped or frame is None:  # closed to make room while it was queued
                return None, True
            conn.running, conn.frame = True, None  # a dropped call's frame is not held
        try:
            with self.decoders:
                call = decode_call(self.service, frame, self.limits.max_values)
        except BadRequest as exc:
            self.call_refusals.note(conn.address, "a bad request", time.monotonic(), str(exc))
            return exc.reply, True
        if isinstance(call, Refusal):
            self.call_refusals.note(conn.address, call.kind, time.monotonic(), call.reason)
            return call.reply, call.close
        if not conn.authenticated:  # open mode: a valid call (TLS: its certificate)
            self.loop.call_soon_threadsafe(self._authenticated, conn)
        with request_context.bind(ctx):
            return run_call(self.service, self.handler, call), False
