"""The restart back-off rule of workers and code downloads: 1, 2, 4 ... 60 s, reset by a
long healthy run."""

from squall.supervisor.backoff import (
    MAX_DELAY_SECS,
    RESET_AFTER_SECS,
    Retry,
    after_failure,
    due,
    next_wake,
    retry_delay,
)


def test_delays_double_from_one_second_up_to_the_cap():
    assert [retry_delay(n) for n in range(0, 9)] == [0, 1, 2, 4, 8, 16, 32, 60, 60]
    assert retry_delay(10_000) == MAX_DELAY_SECS


def test_failures_in_a_row_grow_the_delay():
    r = after_failure(None, 100.0)
    assert r == Retry(1, 101.0)
    r = after_failure(r, 101.5, ran_for=0.5)
    assert r == Retry(2, 103.5)
    r = after_failure(r, 104.0, ran_for=RESET_AFTER_SECS - 1)
    assert r == Retry(3, 108.0)


def test_a_long_healthy_run_resets_the_count():
    r = Retry(7, 0.0)
    assert after_failure(r, 500.0, ran_for=RESET_AFTER_SECS) == Retry(1, 501.0)


def test_due_only_once_the_delay_has_passed():
    assert due(None, 0.0)
    r = Retry(3, 10.0)
    assert not due(r, 9.99)
    assert due(r, 10.0)


def test_the_loop_wakes_when_the_first_back_off_ends():
    assert next_wake([], 0.0, 3) == 3.0
    assert next_wake([Retry(1, 1.5), Retry(2, 10.0)], 1.0, 3) == 0.5
    assert next_wake([Retry(1, 0.5)], 1.0, 3) == 3.0  # already due: the loop runs now anyway
    assert next_wake([Retry(1, 1.0001)], 1.0, 3) == 0.05
