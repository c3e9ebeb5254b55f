"""squall/proxy.py's pure rules: where it may listen, and the leader's address it rewrites in
getLeader and getClusterInfo replies (every other reply passes byte for byte)."""

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from squall import thrift_api as T
from squall.proxy import ProxyError, check_bind, is_loopback, rewrite_leader


def _reply(name: str, success: object, seqid: int = 9) -> bytes:
    out = TMemoryBuffer()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(name, TMessageType.REPLY, seqid)
    getattr(T.Nimbus, f"{name}_result")(success=success).write(proto)
    proto.write_message_end()
    return out.getvalue()


def _read(name: str, frame: bytes) -> tuple[int, object]:
    proto = TBinaryProtocol(TMemoryBuffer(frame))
    _, _, seqid = proto.read_message_begin()
    result = getattr(T.Nimbus, f"{name}_result")()
    result.read(proto)
    return seqid, result.success


def _nimbus(host: str, port: int, leader: bool) -> T.NimbusSummary:
    return T.NimbusSummary(host=host, port=port, uptime_secs=1, isLeader=leader, version="v")


def test_only_loopback_unless_allowed():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not is_loopback("example.com")
    check_bind("127.0.0.1", allow_remote=False)
    check_bind("0.0.0.0", allow_remote=True)
    with pytest.raises(ProxyError, match="--allow-remote"):
        check_bind("0.0.0.0", allow_remote=False)


def test_the_leader_is_the_proxy_and_other_replies_pass_unchanged():
    seqid, leader = _read(
        "getLeader",
        rewrite_leader(_reply("getLeader", _nimbus("n1", 6627, True)), "127.0.0.1", 7000),
    )
    assert seqid == 9 and (leader.host, leader.port) == ("127.0.0.1", 7000)
    info = T.ClusterSummary(
        supervisors=[], topologies=[], nimbuses=[_nimbus("n1", 1, False), _nimbus("n2", 2, True)]
    )
    _, rewritten = _read("getClusterInfo", rewrite_leader(_reply("getClusterInfo", info), "h", 5))
    assert [(n.host, n.port) for n in rewritten.nimbuses] == [("n1", 1), ("h", 5)]
    other = _reply("getNimbusConf", "{}")
    assert rewrite_leader(other, "h", 5) == other
    assert rewrite_leader(b"\x00garbage", "h", 5) == b"\x00garbage"
