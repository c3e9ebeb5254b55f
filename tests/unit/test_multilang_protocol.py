"""Storm's multilang protocol as pure data (worker/multilang_protocol.py, the messages, and
worker/multilang_exchanges.py, the rules of each exchange): every message kind decodes to its
typed event, every malformed or out-of-order message is a ProtocolError that says what was
wrong, and the worker's messages are the ones Storm's ShellBolt/ShellSpout write."""

from __future__ import annotations

import json

import pytest

from squall.worker import multilang_exchanges as X
from squall.worker import multilang_protocol as P


def frame(text: str) -> object:
    framer = P.Framer()
    result = None
    for line in (text + "\nend\n").splitlines(keepends=True):
        result = framer.feed(line)
    return result


def test_encode_is_json_then_end_and_frames_back():
    message = {"command": "next"}
    wire = P.encode(message)
    assert wire == b'{"command":"next"}\nend\n'
    framer = P.Framer()
    lines = wire.decode().splitlines(keepends=True)
    assert framer.feed(lines[0]) is None
    assert framer.feed(lines[1]) == message


def test_a_message_may_span_lines():
    assert frame('{"command":\n "sync"}') == {"command": "sync"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [("not json", "is not JSON"), ("", "an empty message")],
)
def test_framing_errors(text, problem):
    with pytest.raises(P.ProtocolError, match=problem):
        frame(text)


def test_a_message_without_end_is_bounded():
    framer = P.Framer(max_lines=3)
    for _ in range(3):
        framer.feed("{\n")
    with pytest.raises(P.ProtocolError, match="over 3 lines without 'end'"):
        framer.feed("{\n")
    framer = P.Framer(max_chars=10)
    framer.feed("x" * 10)
    with pytest.raises(P.ProtocolError, match="over 10 characters"):
        framer.feed("x")


@pytest.mark.parametrize(
    ("message", "event"),
    [
        ({"pid": 42}, P.Pid(42)),
        ({"command": "sync"}, P.Sync()),
        ({"command": "ack", "id": "7"}, P.Ack("7")),
        ({"command": "ack", "id": 7}, P.Ack("7")),
        ({"command": "fail", "id": "7"}, P.Fail("7")),
        ({"command": "log", "msg": "hi"}, P.Log("hi", "INFO")),
        ({"command": "log", "msg": "hi", "level": 4}, P.Log("hi", "ERROR")),
        ({"command": "log", "msg": "hi", "level": 0}, P.Log("hi", "TRACE")),
        ({"command": "error", "msg": "boom"}, P.ReportError("boom")),
        ({"command": "metrics", "name": "m", "params": [1, 2]}, P.Metrics("m", [1, 2])),
        ({"command": "emit", "tuple": [1, "a"]}, P.Emit((1, "a"))),
        (
            {
                "command": "emit",
                "tuple": ["w"],
                "stream": "words",
                "anchors": ["3"],
                "task": 5,
                "need_task_ids": False,
                "id": {"any": "json"},
            },
            P.Emit(("w",), "words", ("3",), 5, False, {"any": "json"}),
        ),
        ({"command": "emit", "tuple": [], "stream": None}, P.Emit(())),
    ],
)
def test_every_message_kind_decodes(message, event):
    assert P.decode(message) == event


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ([1, 2], "never sends a task id list"),
        ("sync", "must be a JSON object"),
        ({"hello": 1}, "without a 'command'"),
        ({"command": "dance"}, "unknown command 'dance'"),
        ({"pid": "42"}, "'pid' must be int"),
        ({"pid": True}, "'pid' must be int"),
        ({"command": "emit"}, "emit: 'tuple' must be list"),
        ({"command": "emit", "tuple": "abc"}, "emit: 'tuple' must be list"),
        ({"command": "emit", "tuple": [], "stream": 3}, "emit: 'stream' must be str"),
        ({"command": "emit", "tuple": [], "anchors": "1"}, "'anchors' must be a list"),
        ({"command": "emit", "tuple": [], "anchors": [1]}, "'anchors' must be a list"),
        ({"command": "emit", "tuple": [], "task": "5"}, "emit: 'task' must be int"),
        ({"command": "emit", "tuple": [], "need_task_ids": "no"}, "'need_task_ids' must be"),
        ({"command": "ack"}, "ack: 'id' must be str or int"),
        ({"command": "fail", "id": None}, "fail: 'id' must be str or int"),
        ({"command": "log"}, "log: 'msg' must be str"),
        ({"command": "log", "msg": "x", "level": 9}, "'level' must be 0-4"),
        ({"command": "log", "msg": "x", "level": True}, "'level' must be 0-4"),
        ({"command": "error"}, "error: 'msg' must be str"),
        ({"command": "metrics", "params": 1}, "metrics: 'name' must be str"),
    ],
)
def test_every_malformed_message_is_a_protocol_error(message, problem):
    with pytest.raises(P.ProtocolError, match=problem.replace("(", r"\(")):
        P.decode(message)


def test_the_worker_messages_are_storms():
    context = P.topology_context({2: "split", 1: "split"}, 1, "split")
    assert context == {
        "task->component": {"1": "split", "2": "split"},
        "taskid": 1,
        "componentid": "split",
    }
    assert P.handshake({"a": 1}, context, "/p") == {
        "conf": {"a": 1},
        "context": context,
        "pidDir": "/p",
    }
    assert P.bolt_tuple("4", "spout", "default", 9, ["x"]) == {
        "id": "4",
        "comp": "spout",
        "stream": "default",
        "task": 9,
        "tuple": ["x"],
    }
    beat = P.heartbeat_tuple("h1")
    assert (beat["stream"], beat["task"], beat["tuple"]) == ("__heartbeat", -1, [])
    assert P.spout_command("next") == {"command": "next"}
    assert P.spout_command("ack", 12) == {"command": "ack", "id": 12}
    json.dumps(P.handshake({}, context, "/p"))  # all of it is JSON


def test_the_handshake_answer_is_a_pid():
    assert X.check_pid(P.Pid(9)) == 9
    with pytest.raises(P.ProtocolError, match="expected the handshake's answer"):
        X.check_pid(P.Sync())


def test_a_bolt_exchange_ends_with_the_ack_or_fail_of_its_tuple():
    assert X.bolt_step("1", P.Ack("1")) == X.Done(True)
    assert X.bolt_step("1", P.Fail("1")) == X.Done(False)
    for event in (
        P.Emit(("x",), anchors=("1",)),
        P.Emit(("x",)),
        P.Log("l"),
        P.ReportError("e"),
        P.Metrics("m", 1),
        P.Sync(),
    ):
        assert X.bolt_step("1", event) == event


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (P.Ack("2"), "acks tuple '2' while tuple '1' is in process"),
        (P.Fail("0"), "fails tuple '0' while tuple '1' is in process"),
        (P.Emit(("x",), anchors=("1", "2")), "emit anchored to tuple '2'"),
        (P.Pid(5), "a pid 5 after the handshake"),
    ],
)
def test_out_of_order_in_a_bolt_exchange(event, problem):
    with pytest.raises(P.ProtocolError, match=problem):
        X.bolt_step("1", event)


def test_a_heartbeat_is_answered_by_sync_only():
    assert X.heartbeat_step(P.Sync()) == X.Done(True)
    assert X.heartbeat_step(P.Log("l")) == P.Log("l")
    for event in (P.Emit(("x",)), P.Ack("1"), P.Pid(3)):
        with pytest.raises(P.ProtocolError, match="expected sync"):
            X.heartbeat_step(event)


def test_a_spout_exchange_ends_with_sync():
    assert X.spout_step(P.Sync()) == X.Done(True)
    emit = P.Emit(("x",), msg_id="m1")
    assert X.spout_step(emit) == emit
    assert X.spout_step(P.ReportError("e")) == P.ReportError("e")


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (P.Emit(("x",), anchors=("1",)), "spouts have none"),
        (P.Ack("1"), "a spout cannot ack"),
        (P.Fail("1"), "a spout cannot fail"),
        (P.Pid(5), "a pid 5 after the handshake"),
    ],
)
def test_out_of_order_in_a_spout_exchange(event, problem):
    with pytest.raises(P.ProtocolError, match=problem):
        X.spout_step(event)
