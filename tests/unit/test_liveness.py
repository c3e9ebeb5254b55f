"""The one liveness rule shared by nimbus's tasks, the supervisor's workers and the stats
nimbus reports."""

from squall.liveness import beat_is_current, is_alive


def test_launch_grace_is_inclusive_then_the_start_counts_as_the_last_beat():
    assert is_alive(100, None, now=130, timeout=10, launch_grace=30)
    assert not is_alive(100, None, now=131, timeout=10, launch_grace=30)
    # a grace shorter than the timeout: the start counts as a beat until the timeout
    assert is_alive(100, None, now=110, timeout=10, launch_grace=5)
    assert not is_alive(100, None, now=111, timeout=10, launch_grace=5)


def test_a_beat_keeps_alive_for_the_timeout_inclusive():
    assert is_alive(0, 50, now=60, timeout=10, launch_grace=5)
    assert not is_alive(0, 50, now=61, timeout=10, launch_grace=5)


def test_a_beat_from_before_the_start_does_not_count():
    assert not is_alive(100, 99, now=111, timeout=10, launch_grace=5)
    assert is_alive(100, 100, now=110, timeout=10, launch_grace=5)


def test_current_beats_with_slack():
    assert beat_is_current(10, 10) and not beat_is_current(9.9, 10)
    assert beat_is_current(8, 10, slack=2) and not beat_is_current(7.9, 10, slack=2)
