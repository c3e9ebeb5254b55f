"""nimbus/rpc/tls_refusal.py: what a plain client on the TLS port is answered, how a failed
handshake is named, and the per-peer, per-reason rate limit of the refusal log."""

import asyncio
import logging
import ssl
import struct

from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer

from squall import thrift_api as T
from squall.nimbus.rpc.tls_refusal import (
    UNSUPPORTED_CLIENT_TYPE,
    PlainCall,
    RefusalLog,
    handshake_refusal,
    plain_reply,
    read_plain_call,
    speaks_tls,
)


def _call_bytes(name: str, seqid: int, framed: bool) -> bytes:
    out = TMemoryBuffer()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(name, TMessageType.CALL, seqid)
    T.Nimbus.getClusterInfo_args().write(proto)
    proto.write_message_end()
    body = out.getvalue()
    return struct.pack("!i", len(body)) + body if framed else body


def _read(data: bytes, max_frame: int = 1 << 20) -> PlainCall | None:
    async def read() -> PlainCall | None:
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        return await read_plain_call(stream.readexactly, max_frame)

    return asyncio.run(read())


def test_framed_and_unframed_calls_are_read_up_to_their_sequence_id():
    assert _read(_call_bytes("getClusterInfo", 7, True)) == PlainCall("getClusterInfo", 7, True)
    assert _read(_call_bytes("getLeader", -3, False)) == PlainCall("getLeader", -3, False)


def test_what_is_not_a_thrift_call_is_not_answered():
    assert _read(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") is None
    assert _read(_call_bytes("getClusterInfo", 1, True), max_frame=8) is None  # too big
    reply = bytearray(_call_bytes("getClusterInfo", 1, True))
    reply[7] = TMessageType.REPLY  # the version word's type byte
    assert _read(bytes(reply)) is None
    huge_name = struct.pack("!iII", 100, 0x80010001, 1 << 30)
    assert _read(huge_name) is None


def test_the_answer_is_an_exception_a_thrift_client_reads_naming_the_way_out():
    framed = plain_reply(PlainCall("getClusterInfo", 42, True))
    (length,) = struct.unpack("!i", framed[:4])
    assert length == len(framed) - 4
    proto = TBinaryProtocol(TMemoryBuffer(framed[4:]))
    name, kind, seqid = proto.read_message_begin()
    assert (name, kind, seqid) == ("getClusterInfo", TMessageType.EXCEPTION, 42)
    exc = TApplicationException()
    exc.read(proto)
    assert exc.type == UNSUPPORTED_CLIENT_TYPE
    assert "requires TLS" in exc.message and "squall proxy" in exc.message
    assert "SECURITY.md" in exc.message
    unframed = plain_reply(PlainCall("getClusterInfo", 42, False))
    assert unframed == framed[4:]


def _verify_error(code: int) -> ssl.SSLCertVerificationError:
    exc = ssl.SSLCertVerificationError(1, "certificate verify failed")
    exc.verify_code, exc.verify_message = code, f"code {code}"
    exc.reason = "CERTIFICATE_VERIFY_FAILED"
    return exc


def _ssl_error(reason: str) -> ssl.SSLError:
    exc = ssl.SSLError(1, reason)
    exc.reason = reason
    return exc


def test_handshake_failures_are_named():
    assert handshake_refusal(_verify_error(10)) == "expired certificate"
    assert handshake_refusal(_verify_error(20)).startswith("unknown CA")
    assert handshake_refusal(_verify_error(19)).startswith("unknown CA")
    assert "not yet valid" in handshake_refusal(_verify_error(9))
    assert "verify code 26" in handshake_refusal(_verify_error(26))
    assert handshake_refusal(_ssl_error("PEER_DID_NOT_RETURN_A_CERTIFICATE")) == "no certificate"
    assert "does not trust" in handshake_refusal(_ssl_error("TLSV1_ALERT_UNKNOWN_CA"))
    assert handshake_refusal(_ssl_error("NO_SHARED_CIPHER")) == "other: NO_SHARED_CIPHER"
    assert "timeout" in handshake_refusal(TimeoutError())
    assert speaks_tls(b"\x16\x03\x01") and not speaks_tls(b"\x00") and not speaks_tls(b"")


def test_the_log_says_each_reason_of_each_peer_once_a_minute_with_a_count(caplog):
    refusals = RefusalLog(logging.getLogger("test.refusals"), interval=60.0, max_keys=2)
    with caplog.at_level(logging.WARNING, "test.refusals"):
        assert refusals.note("10.0.0.1", "expired certificate", 0.0)
        assert not refusals.note("10.0.0.1", "expired certificate", 1.0)
        assert not refusals.note("10.0.0.1", "expired certificate", 59.0)
        assert refusals.note("10.0.0.1", "no certificate", 2.0)  # another reason
        assert refusals.note("10.0.0.1", "expired certificate", 61.0)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "refused a Thrift connection from 10.0.0.1: expired certificate",
        "refused a Thrift connection from 10.0.0.1: no certificate",
        "refused a Thrift connection from 10.0.0.1: expired certificate"
        " (2 more from this peer since the last line)",
    ]
    refusals.note("10.0.0.2", "no certificate", 62.0)  # a third pair: the oldest forgotten
    assert len(refusals.seen) == 2


def test_refused_requests_are_keyed_on_their_kind_not_their_varying_detail(caplog):
    """10,000 unknown-method calls with 10,000 names are one line a minute per peer."""
    calls = RefusalLog(logging.getLogger("test.calls"), what="a Thrift request")
    with caplog.at_level(logging.WARNING, "test.calls"):
        for i in range(10_000):
            calls.note("10.0.0.1", "a call of an unknown method", i / 1000, f"'m{i}'")
        calls.note("10.0.0.1", "a call of an unknown method", 61.0, "'last'")
    assert [r.getMessage() for r in caplog.records] == [
        "refused a Thrift request from 10.0.0.1: a call of an unknown method ('m0')",
        "refused a Thrift request from 10.0.0.1: a call of an unknown method ('last')"
        " (9999 more from this peer since the last line)",
    ]
