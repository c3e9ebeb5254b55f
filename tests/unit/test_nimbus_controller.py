"""The controller shell refuses what it does not know and what another epoch decided; the
ZooKeeper side of fencing is tested against a real server in test_fault_tolerance."""

from types import SimpleNamespace

import pytest

from squall.config import load_defaults
from squall.nimbus import instructions as ins
from squall.nimbus.cluster_state import FencedOut
from squall.nimbus.controller import Controller, Decide
from squall.records import StormBase


def controller(epoch=5, written=None):
    state = SimpleNamespace(epoch=epoch, write_base=lambda tid, base: written.append(tid))
    code = SimpleNamespace(store=None)
    return Controller(load_defaults(), state, inbox=None, code=code, later=None)


def test_an_unknown_instruction_raises():
    with pytest.raises(TypeError, match="unknown nimbus instruction"):
        controller()._execute(object())


def test_an_instruction_of_another_epoch_is_fenced_out():
    written = []
    shell = controller(epoch=5, written=written)
    base = StormBase("t", "active", 0, 1, {})
    with pytest.raises(FencedOut):
        shell._execute(ins.WriteBase("t-1", base, 4))
    shell._execute(ins.WriteBase("t-1", base, 5))
    assert written == ["t-1"]


def test_an_unknown_job_fails_its_caller_and_the_loop_goes_on():
    shell = controller()
    shell.start()
    try:
        with pytest.raises(TypeError, match="unknown controller job"):
            shell.call(object(), timeout=10)
        with pytest.raises(TypeError, match="no decision"):
            shell.call(Decide(object()), timeout=10)
    finally:
        shell.stop()
        shell.thread.join(10)
    assert not shell.thread.is_alive()
