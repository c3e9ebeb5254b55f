"""A bolt's anchoring and acking, asserted as instruction lists."""

import itertools

from squall.worker.acking import (
    AckTree,
    FailTree,
    Send,
)
from squall.worker.anchoring import Anchoring


def anchoring(ackers=(10, 11)):
    ids = itertools.count(1)
    return Anchoring(ackers, lambda: next(ids))


def test_untracked_inputs_give_untracked_outputs_and_no_acks():
    a = anchoring()
    a.taken(({},))
    assert a.emitted_to((3, 4)) == [Send(3), Send(4)]
    assert a.processed(True) == []
    assert a.processed(False) == []


def test_an_output_is_anchored_to_the_input_and_the_ack_xors_what_was_emitted():
    a = anchoring()
    a.taken(({100: 7},))
    assert a.emitted_to((3, 4)) == [Send(3, (100,), (1,)), Send(4, (100,), (2,))]
    assert a.emitted_to((5,)) == [Send(5, (100,), (3,))]
    # root 100 -> acker ackers[100 % 2] == 10
    assert a.processed(True) == [AckTree(10, 100, 7 ^ 1 ^ 2 ^ 3)]


def test_every_root_of_the_input_anchors_the_output_with_the_same_edge():
    a = anchoring()
    a.taken(({100: 7, 101: 8},))
    assert a.emitted_to((3,)) == [Send(3, (100, 101), (1, 1))]
    assert a.processed(True) == [AckTree(10, 100, 7 ^ 1), AckTree(11, 101, 8 ^ 1)]


def test_a_failed_input_fails_every_root():
    a = anchoring()
    a.taken(({100: 7, 101: 8},))
    a.emitted_to((3,))
    assert a.processed(False) == [FailTree(10, 100), FailTree(11, 101)]


def test_a_root_on_an_even_number_of_inputs_does_not_anchor_the_output():
    a = anchoring()
    a.taken(({100: 5}, {100: 6, 101: 9}))
    assert a.emitted_to((3,)) == [Send(3, (101,), (1,))]
    assert a.processed(True) == [
        AckTree(10, 100, 5 ^ 1),
        AckTree(10, 100, 6 ^ 1),
        AckTree(11, 101, 9 ^ 1),
    ]


def test_each_processing_starts_afresh():
    a = anchoring()
    a.taken(({100: 7},))
    a.emitted_to((3,))
    a.processed(True)
    a.taken(({102: 4},))
    assert a.processed(True) == [AckTree(10, 102, 4)]
    a.taken(({104: 5},))
    a.emitted_to((3,))  # edge 2
    a.processed(True)
    a.taken(({106: 6}, {107: 9}))  # a micro-batch's inputs: the edges of before count not
    assert a.processed(True) == [AckTree(10, 106, 6), AckTree(11, 107, 9)]
    a.taken(({},))
    assert a.emitted_to((3,)) == [Send(3)]
    a.processed(True)
    assert a.emitted_to((3,)) == [Send(3)]  # emits outside any processing


def test_emits_before_or_after_a_processing_are_untracked():
    a = anchoring()
    assert a.emitted_to((3,)) == [Send(3)]
    assert a.processed(True) == []
    a.taken(({100: 7},))
    a.processed(True)
    assert a.emitted_to((3,)) == [Send(3)]


def test_without_ackers_nothing_is_acked():
    a = anchoring(ackers=())
    a.taken(({100: 7},))
    assert a.processed(True) == []
    a.taken(({100: 7},))
    assert a.processed(False) == []


def test_untracked_outputs_draw_no_acking_ids():
    """An id costs a draw from the executor's generator: untracked traffic pays none."""

    def no_ids():
        raise AssertionError("an untracked emit drew an acking id")

    a = Anchoring((10,), no_ids)
    a.taken(({}, {}))  # taking inputs draws nothing
    assert a.emitted_to((3,)) == [Send(3)]
