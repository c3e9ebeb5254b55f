"""One Thrift request: decoded from exactly one frame, checked, run, and its reply encoded.

A request never spans frames, so what it can decode is bounded by the frame
(nimbus.thrift.max_buffer_size). thriftpy2's decoders trust length prefixes: its Cython
memory buffer pads short reads with zeros, so a list claiming 2**31 booleans decodes into
2**31 objects from a few bytes. Here every read must be satisfied by the frame, and a
request may make at most nimbus.thrift.max.request.values reads: each decoded object costs
at least one read, so a frame of 1 MiB can never become more than that many objects.
thriftpy2 skips a container of a type it has no value for (VOID, 5, UTF8...) by reading
nothing per element, so a list's or map's header is checked too: only types that read bytes,
and no more elements than bytes left (`_checked_list_begin`). Without that 36 bytes held a
decoder for minutes looping over 2**31 elements of nothing.

Only CALL messages for declared two-way methods run the handler. Any other message type
(REPLY, EXCEPTION, ONEWAY sent to a server) is answered with a TApplicationException and
ends the connection; an unknown method is answered and the connection kept, as Thrift does.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any

from thriftpy2.protocol import binary
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TException, TMessageType, TType

log = logging.getLogger("squall.nimbus.rpc.thrift_call")


class BadRequest(Exception):
    """The frame is not one well-formed Thrift call within the limits. `reply`, when the
    call's name and sequence id were read, is a PROTOCOL_ERROR for the client to see why."""

    def __init__(self, message: str, reply: bytes | None = None) -> None:
        super().__init__(message)
        self.reply = reply


class FrameReader:
    """A read-only transport over one frame that refuses short reads and too many reads."""

    def __init__(self, frame: bytes, max_reads: int) -> None:
        self.frame = memoryview(frame)
        self.pos = 0
        self.reads_left = max_reads

    def read(self, n: int) -> bytes:
        self.reads_left -= 1
        if self.reads_left < 0:
            raise BadRequest("request exceeds nimbus.thrift.max.request.values reads")
        if n < 0 or self.pos + n > len(self.frame):
            raise BadRequest(f"request reads {n} bytes past the end of its frame")
        data = bytes(self.frame[self.pos : self.pos + n])
        self.pos += n
        return data

    @property
    def remaining(self) -> int:
        return len(self.frame) - self.pos

    def check_container(self, size: int, types: tuple[int, ...]) -> None:
        """Refuse a container header whose elements could not each take a byte of the frame
        (thriftpy2 would loop `size` times reading nothing)."""
        if size <= 0:
            return
        unknown = [t for t in types if t not in _VALUE_TYPES]
        if unknown:
            raise BadRequest(f"a container of {size} values of Thrift type {unknown[0]}")
        if size * len(types) > self.remaining:
            raise BadRequest(f"a container of {size} values in {self.remaining} bytes")


# The types thriftpy2 reads (or skips) at least one byte for; `binary.skip` reads nothing
# for the rest (VOID, STOP, UTF8, UTF16, unassigned codes).
_VALUE_TYPES = frozenset(
    {
        TType.BOOL,
        TType.BYTE,
        TType.DOUBLE,
        TType.I16,
        TType.I32,
        TType.I64,
        TType.STRING,
        TType.STRUCT,
        TType.MAP,
        TType.SET,
        TType.LIST,
        TType.BINARY,
    }
)
_read_list_begin, _read_map_begin = binary.read_list_begin, binary.read_map_begin


def _checked_list_begin(inbuf: Any) -> tuple[int, int]:
    e_type, size = _read_list_begin(inbuf)
    if isinstance(inbuf, FrameReader):
        inbuf.check_container(size, (e_type,))
    return e_type, size


def _checked_map_begin(inbuf: Any) -> tuple[int, int, int]:
    k_type, v_type, size = _read_map_begin(inbuf)
    if isinstance(inbuf, FrameReader):
        inbuf.check_container(size, (k_type, v_type))
    return k_type, v_type, size


# binary.read_val and binary.skip look these up as module globals on every container; any
# other transport (a client's reply) passes through unchecked.
binary.read_list_begin = _checked_list_begin
binary.read_map_begin = _checked_map_begin


class ReplyWriter:
    """A write-only transport collecting one reply."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def flush(self) -> None:
        pass


@dataclass(frozen=True)
class Call:
    api: str
    seqid: int
    args: tuple[Any, ...]
    missing: tuple[str, ...] = ()  # arguments the client left out (None to the handler)


@dataclass(frozen=True)
class Refusal:
    """A frame answered without running the handler; `close` ends the connection."""

    reply: bytes
    close: bool
    reason: str
    kind: str  # what the server's log throttles on, per peer (reason varies per call)


def _encode(api: str, kind: int, seqid: int, payload: Any) -> bytes:
    out = ReplyWriter()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(api, kind, seqid)
    payload.write(proto)
    proto.write_message_end()
    return bytes(out.data)


def exception_reply(api: str, seqid: int, kind: int, message: str) -> bytes:
    return _encode(api, TMessageType.EXCEPTION, seqid, TApplicationException(kind, message))


def decode_call(service: Any, frame: bytes, max_reads: int) -> Call | Refusal:
    """Decode and check one request; raises BadRequest when the frame is not Thrift at all."""
    reader = FrameReader(frame, max_reads)
    proto = TBinaryProtocol(reader, decode_response=True)
    try:
        api, kind, seqid = proto.read_message_begin()
    except BadRequest:
        raise
    except Exception as exc:  # noqa: BLE001 - bad version, bad UTF-8, struct errors
        raise BadRequest(f"not a Thrift message: {exc}") from exc
    if kind != TMessageType.CALL:
        reason = f"message type {kind} sent to a server; only CALL ({TMessageType.CALL}) is served"
        reply = exception_reply(api, seqid, TApplicationException.INVALID_MESSAGE_TYPE, reason)
        return Refusal(reply, close=True, reason=reason, kind="a message that is not a call")
    if api not in service.thrift_services:
        reason = f"unknown method {api[:100]!r}"
        reply = exception_reply(api, seqid, TApplicationException.UNKNOWN_METHOD, reason)
        return Refusal(reply, close=False, reason=reason, kind="a call of an unknown method")
    result_cls = getattr(service, api + "_result")
    if getattr(result_cls, "oneway", False):
        reason = f"{api} is oneway; nimbus serves no oneway calls"
        reply = exception_reply(api, seqid, TApplicationException.INVALID_MESSAGE_TYPE, reason)
        return Refusal(reply, close=True, reason=reason, kind="a oneway call")
    args = getattr(service, api + "_args")()
    try:
        proto.read_struct(args)
        if reader.remaining:
            raise BadRequest(f"{reader.remaining} bytes after the arguments in its frame")
    except Exception as exc:  # noqa: BLE001 - limits, RecursionError, struct errors
        problem = f"{api}: arguments refused: {exc}"
        reply = exception_reply(api, seqid, TApplicationException.PROTOCOL_ERROR, problem)
        raise BadRequest(problem, reply) from exc
    names = [spec[1] for spec in args.thrift_spec.values()]
    values = tuple(getattr(args, name) for name in names)
    missing = tuple(name for name, value in zip(names, values, strict=True) if value is None)
    return Call(api, seqid, values, missing)


def run_call(service: Any, handler: Any, call: Call) -> bytes:
    """Run the handler method and encode its reply; declared exceptions go to the client as
    Thrift declares them, anything else as an INTERNAL_ERROR TApplicationException.

    A refusal the method does not declare (IllegalStateException from activate, say: Storm
    declares none there) must not travel as a result field: a Storm client skips a field it
    does not know and reads a normal return. It goes as a TApplicationException carrying the
    refusal's type and message, which is what Storm's nimbus answers (its RuntimeException)."""
    result = getattr(service, call.api + "_result")()
    try:
        result.success = getattr(handler, call.api)(*call.args)
    except TApplicationException as exc:
        return _encode(call.api, TMessageType.EXCEPTION, call.seqid, exc)
    except Exception as exc:  # noqa: BLE001 - a failed call never ends the server
        if call.missing and not isinstance(exc, TException):
            return _missing_reply(call, exc)
        if not _declared(result, exc):
            message = undeclared_message(call.api, exc)
            if isinstance(exc, TException):
                log.info("%s", message)  # a refusal, not a fault
            else:
                log.exception("%s failed", call.api)
            return exception_reply(
                call.api, call.seqid, TApplicationException.INTERNAL_ERROR, message
            )
    try:
        return _encode(call.api, TMessageType.REPLY, call.seqid, result)
    except Exception as exc:  # noqa: BLE001 - a reply the IDL cannot carry
        log.exception("%s: reply does not encode", call.api)
        return exception_reply(
            call.api, call.seqid, TApplicationException.INTERNAL_ERROR, f"{call.api}: {exc}"
        )


def _missing_reply(call: Call, exc: Exception) -> bytes:
    """A call whose handler failed on arguments the client left out: the IDL marks none
    required (Thrift's default requiredness), so thriftpy2 hands the handler None, which
    some methods accept (a kill's options) and others fail on. That failure is the
    client's, answered with a PROTOCOL_ERROR naming what is missing, and logged without
    a traceback (Storm's Java nimbus would answer a NullPointerException's)."""
    names = ", ".join(call.missing)
    message = f"{call.api}: missing argument(s) {names}"
    log.info("%s (%s: %s)", message, type(exc).__name__, exc)
    return exception_reply(call.api, call.seqid, TApplicationException.PROTOCOL_ERROR, message)


def undeclared_message(api: str, exc: Exception) -> str:
    """`api: Type: message` for a squall refusal (a Thrift exception with `msg`), so a Storm
    client and squall's CLI both read what was refused and why."""
    msg = getattr(exc, "msg", None)
    if isinstance(exc, TException) and isinstance(msg, str):
        return f"{api}: {type(exc).__name__}: {msg}"
    return f"{api}: {exc}"


def _declared(result: Any, exc: Exception) -> bool:
    for spec in result.thrift_spec.values():
        if spec[1] != "success" and spec[0] == TType.STRUCT and isinstance(exc, spec[2]):
            setattr(result, spec[1], exc)
            return True
    return False


def frame_length(header: bytes) -> int:
    """The length a 4-byte frame header announces (may be negative: the caller refuses it)."""
    return struct.unpack("!i", header)[0]
