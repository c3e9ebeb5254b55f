"""The conf fetcher keeps each topology's newest conf (by when it was asked for) and forgets
gone topologies; which conf a worker start may use is the slot's rule (test_slot.py)."""

import threading

from squall.supervisor.conf_fetcher import ConfFetcher, FetchedConf


def test_a_late_result_never_replaces_a_newer_conf_and_gone_topologies_are_forgotten():
    fetcher = ConfFetcher(lambda tid, code_dir: {}, threading.Event())
    fetcher.jobs.start("a", lambda: {"v": 2}, now=20.0)
    _wait_ended(fetcher, "a")
    assert fetcher.collect(now=21.0) == []
    fetcher.jobs.start("a", lambda: {"v": 1}, now=15.0)  # asked for earlier, ended later
    _wait_ended(fetcher, "a")
    fetcher.collect(now=22.0)
    assert fetcher.fetched["a"] == FetchedConf(20.0, {"v": 2})
    fetcher.jobs.start("a", lambda: 1 / 0, now=23.0)
    _wait_ended(fetcher, "a")
    assert fetcher.collect(now=24.0) == [("a", "ZeroDivisionError: division by zero")]
    assert fetcher.retries["a"].not_before == 25.0
    fetcher.forget(["b"])
    assert fetcher.fetched == {} and fetcher.retries == {}


def _wait_ended(fetcher: ConfFetcher, tid: str) -> None:
    for _ in range(100):
        if fetcher.jobs.ended(tid):
            return
        fetcher.jobs.wake.wait(0.1)
        fetcher.jobs.wake.clear()
    raise AssertionError(f"{tid}'s job did not end")
