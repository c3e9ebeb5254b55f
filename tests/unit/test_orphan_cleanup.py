"""An orphaned worker ends only what is in its own squall worker cgroup (pure path rules,
and the kill loop over a cgroup.procs file in a temporary directory)."""

import os
import subprocess
from pathlib import Path

from squall.cgroup_names import own_cgroups, worker_group
from squall.worker.orphan_cleanup import end_the_rest, worker_cgroup

MOUNT = Path("/sys/fs/cgroup")
V1 = "9:memory:/squall/s1-abc/worker-t-1-6700\n4:cpu:/squall/s1-abc/worker-t-1-6700\n0::/\n"


def test_v1_uses_the_memory_hierarchy():
    assert worker_cgroup(V1, MOUNT) == MOUNT / "memory/squall/s1-abc/worker-t-1-6700"


def test_v2_uses_the_unified_hierarchy():
    assert worker_cgroup("0::/system.slice/x/worker-t-1-6700\n", MOUNT) == (
        MOUNT / "system.slice/x/worker-t-1-6700"
    )


def test_a_worker_outside_a_worker_cgroup_touches_nothing():
    assert worker_cgroup("9:memory:/system.slice/squall-supervisor.service\n0::/\n", MOUNT) is None
    assert worker_cgroup("0::/user.slice\n", MOUNT) is None
    assert worker_cgroup("", MOUNT) is None


def test_names_agree_with_the_supervisors():
    assert worker_group("t-1", 6700) == "worker-t-1-6700"
    assert own_cgroups("4:cpu,cpuacct:/a\n")["cpuacct"] == "/a"


def test_every_other_listed_process_is_killed(tmp_path):
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        (tmp_path / "cgroup.procs").write_text(f"{sleeper.pid}\n{os.getpid()}\n")
        assert end_the_rest(tmp_path) == 1
        assert sleeper.wait(10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()


def test_an_unreadable_cgroup_kills_nothing(tmp_path):
    assert end_the_rest(tmp_path / "gone") == 0
