"""worker.sampling_profiler's pure parts: collapsed stacks, a frame's stack, the dumps."""

import sys
import threading

from squall.worker import sampling_profiler as sp


def test_collapsed_stacks_most_seen_first():
    counts = {("main", "work"): 3, ("main", "idle"): 5, ("main",): 1}
    assert sp.collapsed(counts) == "main;idle 5\nmain;work 3\nmain 1\n"
    assert sp.collapsed({}) == ""


def test_a_frames_stack_is_outermost_first_and_bounded():
    def inner():
        return sp.stack_of(sys._getframe())

    stack = inner()
    assert stack[-1].startswith("inner (") and "test_sampling_profiler.py" in stack[-1]
    assert len(stack) <= sp.MAX_DEPTH


def test_dumps_name_every_thread_and_the_heap():
    ready, done = threading.Event(), threading.Event()

    def parked():
        ready.set()
        done.wait(10)

    thread = threading.Thread(target=parked, name="parked-thread")
    thread.start()
    try:
        ready.wait(10)
        dump = sp.thread_dump()
        assert '"parked-thread"' in dump and '"MainThread"' in dump and "in parked" in dump
    finally:
        done.set()
        thread.join(10)
    assert "objects tracked by gc" in sp.heap_summary() and " dict\n" in sp.heap_summary()
