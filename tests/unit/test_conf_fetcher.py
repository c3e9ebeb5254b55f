"""Which conf a worker start may use: one whose download was asked for no earlier than the
start became possible, so `squall config set` before a worker died always reaches its
replacement, while the download itself never runs on the sync loop."""

import threading

from squall.supervisor.conf_fetcher import (
    ConfFetcher,
    FetchedConf,
    confs_to_fetch,
    serves,
    waiting_since,
)
from squall.supervisor.sync import WorkerSpec


def spec(tid: str, port: int) -> WorkerSpec:
    return WorkerSpec(tid, port, (1,), 0)


def test_a_start_keeps_the_time_it_first_could_go_and_drops_out_once_gone():
    first = waiting_since({}, [spec("a", 1), spec("b", 2)], now=10.0)
    assert first == {("a", 1): 10.0, ("b", 2): 10.0}
    later = waiting_since(first, [spec("a", 1), spec("a", 3)], now=12.0)
    assert later == {("a", 1): 10.0, ("a", 3): 12.0}  # b started or backs off: gone


def test_only_a_conf_asked_for_after_the_start_became_possible_serves_it():
    assert not serves(None, 10.0)
    assert not serves(FetchedConf(9.9, {}), 10.0)  # older than the need: maybe stale
    assert serves(FetchedConf(10.0, {}), 10.0)  # asked for on the same pass
    assert serves(FetchedConf(11.0, {}), 10.0)


def test_confs_are_fetched_for_the_topologies_no_fetched_conf_serves():
    waiting = {("a", 1): 10.0, ("a", 2): 12.0, ("b", 1): 10.0, ("c", 1): 10.0}
    fetched = {"a": FetchedConf(11.0, {}), "b": FetchedConf(10.5, {})}
    # a's conf serves port 1 but not port 2 (which died after it was asked for)
    assert confs_to_fetch(waiting, fetched) == ["a", "c"]
    assert confs_to_fetch({}, fetched) == []


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
