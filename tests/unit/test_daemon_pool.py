"""The Thrift server's call pool: results and exceptions reach the awaiting coroutine, calls
run only on its `threads` threads, and those never hold the process open (daemons)."""

import asyncio
import threading

import pytest

from squall.nimbus.rpc.daemon_pool import DaemonPool


def test_results_and_exceptions_reach_the_coroutine():
    pool = DaemonPool(2, "test-pool")

    def fail():
        raise ValueError("refused")

    async def main():
        assert await pool.run(asyncio.get_running_loop(), lambda a, b: a + b, 2, 3) == 5
        with pytest.raises(ValueError, match="refused"):
            await pool.run(asyncio.get_running_loop(), fail)

    try:
        asyncio.run(main())
        assert all(thread.daemon for thread in pool.threads)
    finally:
        pool.shutdown()


def test_calls_run_only_on_the_pools_threads():
    pool = DaemonPool(2, "test-pool")
    ran_on: list[str] = []

    def call():
        ran_on.append(threading.current_thread().name)

    async def main():
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(asyncio.gather(*(pool.run(loop, call) for _ in range(20))), 10)

    try:
        asyncio.run(main())
        assert len(ran_on) == 20
        assert set(ran_on) <= {"test-pool-0", "test-pool-1"}
        assert [t.name for t in pool.threads] == ["test-pool-0", "test-pool-1"]
    finally:
        pool.shutdown()
