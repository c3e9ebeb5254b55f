"""A supervisor whose certificate nimbus refuses takes no slots; nimbus remembers the
refusal and names it as the likely cause on a topology with tasks placed nowhere."""

import logging

from squall.nimbus.reads.run_state import has_unplaced, refusal_cause
from squall.nimbus.rpc.tls_refusal import RefusalLog

from .test_run_state import topology


def test_certificate_refusals_are_remembered_newest_first_and_forgotten_after_a_while():
    refusals = RefusalLog(logging.getLogger("test"), interval=60)
    refusals.note("10.0.0.5", "expired certificate", 100.0)
    refusals.note("10.0.0.6", "unknown CA (certificate not issued by this cluster's CA)", 110.0)
    refusals.note("10.0.0.7", "plain Thrift client (no TLS): answered ...", 115.0)  # not one
    refusals.note("10.0.0.5", "expired certificate", 120.0)  # unlogged, still seen
    assert refusals.refused_certificates(130.0, 120) == [
        ("10.0.0.5", "expired certificate"),
        ("10.0.0.6", "unknown CA (certificate not issued by this cluster's CA)"),
    ]
    assert refusals.refused_certificates(235.0, 120) == [("10.0.0.5", "expired certificate")]


def test_the_cause_names_the_peer_the_reason_and_the_fix():
    assert refusal_cause([]) is None
    cause = refusal_cause([("10.0.0.5", "expired certificate"), ("10.0.0.6", "no certificate")])
    assert cause is not None
    assert cause.startswith("nimbus refused the certificate of 10.0.0.5: expired certificate")
    assert "(and 1 more)" in cause and "squall credentials issue supervisor" in cause


def test_a_topology_with_a_task_in_no_slot_is_unplaced():
    t = topology({}, {})
    assert not has_unplaced(t)
    t.assignment.task_slots.pop(3)
    assert has_unplaced(t)
