"""Which workers are over their memory limit, from plain numbers and /proc stat lines."""

import os

from squall.supervisor.memory import (
    MB,
    limit_mb,
    memory_error,
    over_limit,
    parse_stat,
    resident_by_session,
)

PAGE = os.sysconf("SC_PAGE_SIZE")


def test_parse_stat_counts_fields_after_the_command_name():
    rest = " ".join(["S", "1", "2", "777"] + ["0"] * 17 + ["300"] + ["0"] * 20)
    assert parse_stat(f"42 (a b) (c)) {rest}") == (777, 300 * PAGE)


def test_this_process_is_found_in_its_own_session():
    sessions = resident_by_session()
    assert sessions[os.getsid(0)] > 1 * MB


def test_over_limit_and_the_supervisor_cap():
    assert limit_mb(4096, 2048) == 2048
    assert limit_mb(512, 2048) == 512
    resident = {("a", 1): 100 * MB, ("b", 2): 100 * MB + 1, ("c", 3): 10**12}
    assert over_limit(resident, {("a", 1): 100, ("b", 2): 100}) == [("b", 2)]
    assert "memory limit of 100 MB (150 MB resident)" in memory_error(100, 150 * MB)
