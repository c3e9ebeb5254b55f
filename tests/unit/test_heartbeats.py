"""The heartbeat cache judges liveness on nimbus's clock only."""

from squall.nimbus.core.heartbeats import HeartbeatCache, tokens_from_beats
from squall.records import WorkerBeat


def test_task_dies_when_its_token_stops_changing():
    cache = HeartbeatCache().observe({1: ("n", 1, 1)}, now=0)
    cache = cache.observe({1: ("n", 1, 1)}, now=20)  # same token: time not refreshed
    assert cache.dead_tasks([1], {1: -1000}, now=31, task_timeout=30, launch_timeout=5) == {1}
    cache = cache.observe({1: ("n", 1, 2)}, now=31)
    assert cache.dead_tasks([1], {1: -1000}, now=40, task_timeout=30, launch_timeout=5) == set()


def test_worker_clock_is_never_used():
    # a worker whose clock is far in the past or future is alive as long as its seq moves
    beat = WorkerBeat(seq=7, time_secs=-(10**9), uptime_secs=0, tasks={1: {}})
    tokens = tokens_from_beats({("n", 1): beat}, {1: ("n", 1)})
    assert tokens == {1: ("n", 1, 7)}


def test_new_tasks_get_launch_grace():
    cache = HeartbeatCache()
    assert cache.dead_tasks([1], {1: 100}, now=110, task_timeout=5, launch_timeout=30) == set()
    assert cache.dead_tasks([1], {1: 100}, now=131, task_timeout=5, launch_timeout=30) == {1}


def test_beats_from_the_wrong_slot_do_not_keep_a_task_alive():
    beat = WorkerBeat(seq=1, time_secs=0, uptime_secs=0, tasks={1: {}, 2: {}})
    tokens = tokens_from_beats({("old", 1): beat}, {1: ("old", 1), 2: ("new", 1)})
    assert tokens == {1: ("old", 1, 1)}


def test_empty_cache_after_failover_counts_beating_tasks_fresh():
    cache = HeartbeatCache().observe({1: ("n", 1, 99)}, now=1000)
    assert cache.dead_tasks([1], {1: 0}, now=1010, task_timeout=30, launch_timeout=5) == set()


def test_forget_drops_tasks():
    cache = HeartbeatCache().observe({1: ("n", 1, 1), 2: ("n", 1, 1)}, now=0).forget([1])
    assert set(cache.beats) == {2}
