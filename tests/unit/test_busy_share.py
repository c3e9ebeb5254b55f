"""A worker's shared thread's busy share: the time it did not wait in its poll, per window."""

import pytest

from squall.worker.busy_share import BusyShare


def test_the_share_is_the_last_complete_windows():
    b = BusyShare(window=1.0)
    assert b.roll(10.0) == 0.0  # nothing measured yet
    b.waited(10.0, 10.25)
    b.waited(10.5, 10.75)
    assert b.share == 0.0  # the window is not complete yet
    b.waited(10.875, 11.0)
    assert b.share == pytest.approx(0.375)  # waited 0.625 of 1 s
    assert b.roll(11.5) == pytest.approx(0.375)
    assert b.roll(12.0) == 1.0  # no wait in the next window: saturated


def test_a_long_wait_makes_it_idle_and_shares_stay_between_0_and_1():
    b = BusyShare(window=1.0)
    b.roll(0.0)
    b.waited(0.0, 5.0)
    assert b.share == 0.0
    b.waited(5.0, 5.0)
    assert 0.0 <= b.roll(6.0) <= 1.0
