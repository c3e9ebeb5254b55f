"""One request per frame: decoding is bounded by the frame, message types are checked before
any handler runs, and handler outcomes become the replies Thrift declares."""

import logging
import struct

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType, TType

from squall import thrift_api as T
from squall.nimbus.rpc.thrift_call import (
    BadRequest,
    Call,
    FrameReader,
    Refusal,
    ReplyWriter,
    decode_call,
    run_call,
)

MAX_VALUES = 100_000


def message(api: str, kind: int = TMessageType.CALL, seqid: int = 7) -> bytes:
    out = ReplyWriter()
    TBinaryProtocol(out).write_message_begin(api, kind, seqid)
    return bytes(out.data)


def call_frame(api: str, args, kind: int = TMessageType.CALL) -> bytes:
    out = ReplyWriter()
    args.write(TBinaryProtocol(out))
    return message(api, kind) + bytes(out.data)


def read_reply(reply: bytes):
    proto = TBinaryProtocol(FrameReader(reply, MAX_VALUES))
    api, kind, seqid = proto.read_message_begin()
    if kind == TMessageType.EXCEPTION:
        payload = TApplicationException()
    else:
        payload = getattr(T.Nimbus, api + "_result")()
    proto.read_struct(payload)
    return api, kind, seqid, payload


def test_a_call_decodes_into_its_arguments():
    frame = call_frame("uploadChunk", T.Nimbus.uploadChunk_args(location="loc", chunk=b"\x00x"))
    call = decode_call(T.Nimbus, frame, MAX_VALUES)
    assert call == Call("uploadChunk", 7, ("loc", b"\x00x"))


@pytest.mark.parametrize("kind", [TMessageType.ONEWAY, TMessageType.REPLY, TMessageType.EXCEPTION])
def test_non_call_messages_are_refused_and_end_the_connection(kind):
    frame = call_frame("beginFileUpload", T.Nimbus.beginFileUpload_args(), kind)
    refusal = decode_call(T.Nimbus, frame, MAX_VALUES)
    assert isinstance(refusal, Refusal) and refusal.close
    api, reply_kind, seqid, exc = read_reply(refusal.reply)
    assert (api, reply_kind, seqid) == ("beginFileUpload", TMessageType.EXCEPTION, 7)
    assert exc.type == TApplicationException.INVALID_MESSAGE_TYPE


def test_an_unknown_method_is_answered_and_the_connection_kept():
    refusal = decode_call(T.Nimbus, message("noSuchMethod") + b"\x00", MAX_VALUES)
    assert isinstance(refusal, Refusal) and not refusal.close
    exc = read_reply(refusal.reply)[3]
    assert exc.type == TApplicationException.UNKNOWN_METHOD and "noSuchMethod" in exc.message


def test_a_huge_map_length_prefix_is_refused_at_its_header():
    """submitTopology's topology.spouts map claims 2**31-1 entries; the frame holds two."""
    spouts = bytes([TType.STRING, TType.STRUCT]) + struct.pack("!i", 2**31 - 1)
    entry = struct.pack("!i", 1) + b"s" + b"\x00"
    topology = bytes([TType.MAP]) + struct.pack("!h", 1) + spouts + entry * 2
    frame = message("submitTopology") + bytes([TType.STRUCT]) + struct.pack("!h", 4) + topology
    with pytest.raises(BadRequest, match="2147483647 values in 12 bytes"):
        decode_call(T.Nimbus, frame, MAX_VALUES)


@pytest.mark.parametrize(
    "header",
    [
        bytes([TType.LIST, TType.VOID]),  # skipping a VOID reads nothing
        bytes([TType.SET, TType.UTF8]),  # nor does skipping a UTF8
        bytes([TType.MAP, TType.STRING, 5]),  # nor an unassigned type code
    ],
)
def test_a_container_of_values_that_read_nothing_is_refused_at_once(header):
    """36 bytes that made thriftpy2 skip 2**31-1 elements of nothing, minutes of a decoder
    (before authorization) per frame; the values budget never saw them."""
    unknown_field = header[:1] + struct.pack("!h", 99) + header[1:]
    frame = message("getClusterInfo") + unknown_field + struct.pack("!i", 2**31 - 1) + b"\x00"
    with pytest.raises(BadRequest, match="of Thrift type"):
        decode_call(T.Nimbus, frame, MAX_VALUES)


def test_empty_containers_of_any_type_still_decode():
    """An empty list says nothing about its elements; clients write them with odd types."""
    unknown_field = bytes([TType.LIST]) + struct.pack("!h", 99) + bytes([TType.VOID])
    frame = message("getClusterInfo") + unknown_field + struct.pack("!i", 0) + b"\x00"
    assert decode_call(T.Nimbus, frame, MAX_VALUES) == Call("getClusterInfo", 7, ())


def test_a_list_of_two_billion_booleans_is_not_padded_from_nothing():
    """thriftpy2's Cython memory buffer pads short reads with zeros; this reader refuses them."""
    args_list = bytes([TType.LIST]) + struct.pack("!h", 2)
    body = bytes([TType.BOOL]) + struct.pack("!i", 2**31 - 1)
    frame = message("getClusterInfo") + args_list + body + b"\x01"
    with pytest.raises(BadRequest):
        decode_call(T.Nimbus, frame, MAX_VALUES)


def test_a_frame_of_a_million_empty_structs_exceeds_the_values_budget():
    """1 MiB of STOP bytes in a list<JavaObjectArg> would be a million objects (145 MB)."""
    n = 1_000_000
    # a field unknown to the args struct is skipped, which reads as much as decoding it
    skipped = bytes([TType.LIST]) + struct.pack("!h", 99) + bytes([TType.STRUCT])
    frame = message("getClusterInfo") + skipped + struct.pack("!i", n) + b"\x00" * n + b"\x00"
    with pytest.raises(BadRequest, match="nimbus.thrift.max.request.values") as refused:
        decode_call(T.Nimbus, frame, MAX_VALUES)
    api, kind, seqid, exc = read_reply(refused.value.reply)  # the client learns why
    assert (api, kind, seqid) == ("getClusterInfo", TMessageType.EXCEPTION, 7)
    assert exc.type == TApplicationException.PROTOCOL_ERROR
    assert "nimbus.thrift.max.request.values" in exc.message


def test_bytes_after_the_arguments_are_refused():
    frame = call_frame("getClusterInfo", T.Nimbus.getClusterInfo_args()) + b"junk"
    with pytest.raises(BadRequest, match="4 bytes after"):
        decode_call(T.Nimbus, frame, MAX_VALUES)


def test_garbage_is_a_bad_request():
    for frame in (b"", b"\x80\x01", b"GET / HTTP/1.1\r\n", b"\x80\x01\x00\x01\x7f\xff\xff\xff"):
        with pytest.raises(BadRequest):
            decode_call(T.Nimbus, frame, MAX_VALUES)


class Handler:
    def getLeader(self):
        raise T.AuthorizationException(msg="not you")

    def isTopologyNameAllowed(self, name):
        raise ValueError("boom")

    def getNimbusConf(self):
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, "said so")

    def beginFileUpload(self):
        return "upload-1"

    def activate(self, name):
        raise T.IllegalStateException(msg=f"{name} is rebalancing")

    def uploadChunk(self, location, chunk):
        raise T.InvalidTopologyException(msg=f"no upload in progress at {location!r}")


def test_declared_exceptions_go_back_as_thrift_declares_them():
    _, kind, _, result = read_reply(run_call(T.Nimbus, Handler(), Call("getLeader", 1, ())))
    assert kind == TMessageType.REPLY and result.aze.msg == "not you"
    _, kind, _, result = read_reply(run_call(T.Nimbus, Handler(), Call("beginFileUpload", 2, ())))
    assert kind == TMessageType.REPLY and result.success == "upload-1"


def test_other_failures_become_internal_errors():
    for api, args, text in (
        ("isTopologyNameAllowed", ("x",), "boom"),
        ("getNimbusConf", (), "said so"),
    ):
        _, kind, _, exc = read_reply(run_call(T.Nimbus, Handler(), Call(api, 3, args)))
        assert kind == TMessageType.EXCEPTION
        assert exc.type == TApplicationException.INTERNAL_ERROR and text in exc.message


def test_a_refusal_the_method_does_not_declare_is_an_error_with_its_message():
    """Storm declares no IllegalStateException on activate and no InvalidTopologyException on
    uploadChunk: as a result field a Storm client would skip it and read a normal return."""
    for api, args, text in (
        ("activate", ("wc",), "activate: IllegalStateException: wc is rebalancing"),
        ("uploadChunk", ("nowhere", b"x"), "InvalidTopologyException: no upload in progress"),
    ):
        _, kind, _, exc = read_reply(run_call(T.Nimbus, Handler(), Call(api, 4, args)))
        assert kind == TMessageType.EXCEPTION
        assert exc.type == TApplicationException.INTERNAL_ERROR and text in exc.message


def test_missing_arguments_are_a_protocol_error_without_a_traceback(caplog):
    """A call that leaves out an argument the handler cannot do without is the client's
    error: a TApplicationException naming it, logged as one line, not a traceback."""
    frame = call_frame("isTopologyNameAllowed", T.Nimbus.isTopologyNameAllowed_args())
    call = decode_call(T.Nimbus, frame, MAX_VALUES)
    assert call == Call("isTopologyNameAllowed", 7, (None,), ("name",))
    with caplog.at_level(logging.INFO, "squall.nimbus.rpc.thrift_call"):
        _, kind, _, exc = read_reply(run_call(T.Nimbus, Handler(), call))
    assert kind == TMessageType.EXCEPTION
    assert exc.type == TApplicationException.PROTOCOL_ERROR
    assert exc.message == "isTopologyNameAllowed: missing argument(s) name"
    assert caplog.records and not any(r.exc_info for r in caplog.records)
    # a handler that accepts the missing argument still answers normally
    call = Call("beginFileUpload", 8, (), ())
    assert read_reply(run_call(T.Nimbus, Handler(), call))[1] == TMessageType.REPLY
