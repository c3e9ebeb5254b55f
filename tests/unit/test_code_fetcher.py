"""The code fetcher runs one job per topology, each on its own thread: a topology whose
download hangs holds up no other, and a failed one is retried only after its back-off."""

import threading

from squall.supervisor.backoff import Retry
from squall.supervisor.code_fetcher import CodeFetcher


def test_a_hanging_topology_holds_up_no_other_and_a_failure_backs_off(tmp_path):
    release = threading.Event()
    calls: list[str] = []

    def fetch(tid, code_dir):
        calls.append(tid)
        if tid == "slow":
            assert release.wait(30)
        if tid == "bad":
            raise ValueError("package has more than 10 entries")
        (code_dir / "code").mkdir()

    wake = threading.Event()
    fetcher = CodeFetcher(tmp_path, fetch, wake)
    try:
        fetcher.request(["slow", "good", "bad"], now=100.0)
        fetcher.request(["slow"], now=100.0)  # one job in flight per topology
        for _ in range(100):
            wake.wait(5)
            wake.clear()
            if fetcher.jobs.ended("good") and fetcher.jobs.ended("bad"):
                break
        assert fetcher.collect(now=101.0) == [
            ("bad", "ValueError: package has more than 10 entries")
        ]
        assert fetcher.ready("good") and not fetcher.ready("slow") and not fetcher.ready("bad")
        assert not (tmp_path / "bad").exists()
        assert fetcher.retries["bad"] == Retry(1, 102.0)
        fetcher.request(["bad"], now=101.5)  # still backing off: no new job
        assert not fetcher.busy("bad")
        release.set()
        for _ in range(100):
            if fetcher.jobs.ended("slow"):
                break
            wake.wait(5)
            wake.clear()
        assert fetcher.collect(now=103.0) == []
        assert fetcher.ready("slow")
        assert sorted(calls) == ["bad", "good", "slow"]
        fetcher.forget(["slow", "good"])
        assert "bad" not in fetcher.retries
    finally:
        release.set()
