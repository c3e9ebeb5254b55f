"""bench/perf_summary.py: perf script's call stacks read into samples, inclusive shares and
what a function spends its samples on (the calling machinery and mypyc's wrappers skipped)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))  # names unique to bench/

import perf_summary  # noqa: E402

# two samples as `perf script -F ip,sym` prints them: a blank header, frames leaf first
SCRIPT = """
\t           803e9 Py_DECREF (inlined)
\t           80fa7 CPyDef_receiver___Receiver___ready+0x17
\t          158ba2 PyObject_Vectorcall
\t           5d975 CPyDef_transport___Transport___drain
\t           5d975 CPyPy_transport___Transport___drain
\t          1a7331 CPyDef_executor_group___ExecutorGroup____turns
\t           11111 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)

\t           5d975 CPyDef_transport___Transport___drain
\t           5d975 CPyPy_transport___Transport___drain
\t          1a7331 CPyDef_executor_group___ExecutorGroup____turns
"""


def test_parse_stacks_gives_each_sample_its_frames_leaf_first():
    stacks = perf_summary.parse_stacks(SCRIPT)
    assert len(stacks) == 2
    assert stacks[0][:2] == ["Py_DECREF", "CPyDef_receiver___Receiver___ready"]
    assert stacks[0][-1] == "start_thread"
    assert stacks[1][-1] == "CPyDef_executor_group___ExecutorGroup____turns"


def test_inclusive_counts_a_function_once_per_sample_and_skips_the_machinery():
    counts = perf_summary.inclusive(perf_summary.parse_stacks(SCRIPT))
    assert counts["CPyDef_executor_group___ExecutorGroup____turns"] == 2
    assert counts["CPyDef_receiver___Receiver___ready"] == 1
    assert "PyObject_Vectorcall" not in counts and "start_thread" not in counts


def test_callees_skip_the_functions_own_wrapper_and_say_self():
    counts = perf_summary.callees(perf_summary.parse_stacks(SCRIPT), "Transport___drain")
    assert counts == {"CPyDef_receiver___Receiver___ready": 1, "(self)": 1}


def test_a_sample_goes_to_the_part_of_the_worker_its_stack_is_in():
    user = ["PyNumber_And", "_PyEval_EvalFrameDefault", "CPyDef_bolt___BoltExecutor___execute_all"]
    emit = ["PyList_Append", "CPyDef_emitting___Emitter___emit", *user[1:]]
    drain = perf_summary.parse_stacks(SCRIPT)[0]
    assert perf_summary.part(user) == "bolts: own code"
    assert perf_summary.part(emit) == "bolts: squall's part (emit, ack, flush)"
    assert perf_summary.part(drain) == "transport: receive (decode, queue)"
    assert perf_summary.part(["zmq::io_thread_t::in_event", "start_thread"]) == perf_summary.OTHER


def test_a_spouts_own_ack_and_fail_are_its_own_code_not_tree_tracking():
    settle = "CPyDef_spout_executor___SpoutExecutor___settle"
    user_ack = ["PyDict_Pop", "_PyEval_EvalFrameDefault", settle]
    tracking = ["PyDict_Pop", "CPyDef_spout_tracking___Pending___complete", settle]
    assert perf_summary.part(user_ack) == "spout: own code"
    assert perf_summary.part(tracking) == "spout: tree tracking (acks in)"


def test_the_parts_table_counts_per_hundred_samples_of_the_bolts_own_code():
    user = ["PyNumber_And", "CPyDef_bolt___BoltExecutor___execute_all"]
    send = ["CPyDef_sender___Sender___pump", "CPyDef_transport___Transport___pump"]
    rows = perf_summary.parts_table({"one": [user] * 4, "two": [user] * 4 + [send]})
    assert rows[0] == "| part | one | two |"
    assert "| transport: send (encode, ZeroMQ) | 0.0 | 25.0 |" in rows
    assert "| total | 100.0 | 125.0 |" in rows
    assert rows[-1] == "| (samples) | 4 | 5 |"
