"""Workers' cgroups: the limits decided from the confs (pure), and the files the I/O part
writes, against a directory tree standing in for a cgroup v2 or v1 mount (a real kernel's
behaviour is in tests/security/test_cgroups.py)."""

from pathlib import Path

import pytest

from squall.cgroup_names import HIERARCHY, own_cgroups
from squall.supervisor import cgroup_fs, cgroups
from squall.supervisor.cgroups import MB, CgroupConfigError, Limits
from squall.supervisor.launcher import Exit
from squall.supervisor.memory import cgroup_memory_error

SUP = {cgroups.MARGIN: 256.0, cgroups.ENFORCE: True}


def test_memory_is_the_workers_limit_plus_the_margin():
    assert cgroups.worker_limits(SUP, {}, 400, 3) == Limits(656 * MB, None)


def test_storms_memory_override_replaces_the_workers_limit_and_enforcement_can_be_off():
    over = {**SUP, cgroups.MEMORY_OVERRIDE: 1000}
    assert cgroups.worker_limits(over, {}, 400, 1).memory_bytes == 1256 * MB
    off = {**SUP, cgroups.ENFORCE: False}
    assert cgroups.worker_limits(off, {}, 400, 1).memory_bytes is None


def test_cpu_is_the_declared_percent_per_task_times_the_tasks_or_the_supervisors_cap():
    topology = {cgroups.TASK_CPU: 30.0}
    assert cgroups.worker_limits(SUP, topology, 400, 4).cpu_percent == 120.0
    assert cgroups.worker_limits(SUP, {}, 400, 4).cpu_percent is None
    capped = {**SUP, cgroups.CPU_OVERRIDE: 50}
    assert cgroups.worker_limits(capped, topology, 400, 4).cpu_percent == 50.0


@pytest.mark.parametrize(
    ("key", "value"),
    [(cgroups.MARGIN, -1), (cgroups.CPU_OVERRIDE, 0), (cgroups.MEMORY_OVERRIDE, "big")],
)
def test_a_setting_that_cannot_be_a_limit_is_a_typed_error(key, value):
    with pytest.raises(CgroupConfigError, match=key):
        cgroups.worker_limits({**SUP, key: value}, {}, 400, 1)


def test_cpu_quota_per_period_and_its_floor():
    assert cgroups.cpu_quota_us(None) is None
    assert cgroups.cpu_quota_us(250) == 250_000
    assert cgroups.cpu_quota_us(0.01) == cgroups.MIN_QUOTA_US


def test_v2_files_hold_memory_oom_group_and_cpu():
    files = dict(cgroups.v2_files(Limits(512 * MB, 150)))
    assert files["memory.max"] == str(512 * MB)
    assert files["memory.oom.group"] == "1"  # the kernel's OOM kill takes the whole worker
    assert files["cpu.max"] == "150000 100000"
    assert dict(cgroups.v2_files(Limits(None, None))) == {"cpu.max": "max 100000"}


def test_v1_files_set_memsw_after_the_memory_limit_and_cpu_only_when_capped():
    files = cgroups.v1_files(Limits(512 * MB, None))
    assert [f for f, _ in files["memory"]] == [
        "memory.limit_in_bytes",
        "memory.memsw.limit_in_bytes",
    ]
    assert "cpu" not in files and "freezer" in files
    assert cgroups.v1_files(Limits(None, 50))["cpu"] == [
        ("cpu.cfs_period_us", "100000"),
        ("cpu.cfs_quota_us", "50000"),
    ]


def test_own_cgroups_reads_v1_comounted_controllers_and_v2():
    text = "4:memory:/a/b\n3:cpu,cpuacct:/\n0::/user.slice/x\n"
    assert own_cgroups(text) == {
        "memory": "/a/b",
        "cpu": "/",
        "cpuacct": "/",
        "": "/user.slice/x",
    }


def test_the_supervisors_cgroups_sit_under_its_own_unless_the_root_is_absolute():
    assert cgroups.supervisor_path("/a/b", "squall", "s1") == "a/b/squall/s1"
    assert cgroups.supervisor_path("/", "squall", "s1") == "squall/s1"
    assert cgroups.supervisor_path("/a/b", "/storm", "s1") == "storm/s1"
    with pytest.raises(CgroupConfigError):
        cgroups.supervisor_path("/", "../x", "s1")


def test_oom_kills_from_v2_events_and_v1_oom_control():
    assert cgroups.oom_kills("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n") == 2
    assert cgroups.oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n") == 1
    assert cgroups.oom_kills("oom_kill_disable 0\n") == 0


def test_enable_is_true_false_or_null():
    assert cgroups.wanted(None) is None and cgroups.wanted(False) is False
    with pytest.raises(CgroupConfigError):
        cgroups.wanted("yes")


def test_the_warning_says_what_holds_without_cgroups_and_the_setting():
    text = cgroups.unavailable_warning("not root")
    assert "not root" in text and "setsid" in text and cgroups.ENABLE in text


def _v2_mount(root: Path) -> Path:
    """The mount and the supervisor's cgroups, as the kernel would show them once made."""
    for directory in (root, root / "squall", root / "squall" / "s1"):
        directory.mkdir()
        (directory / "cgroup.subtree_control").write_text("")
    (root / "cgroup.controllers").write_text("cpu memory pids\n")
    (root / "squall" / "cgroup.subtree_control").write_text("memory cpu\n")
    return root


def test_v2_worker_cgroup_gets_its_files_and_is_removed(tmp_path):
    """On a plain directory tree: the kernel would make the interface files itself."""
    mount = _v2_mount(tmp_path / "cg")
    base = cgroup_fs._v2_base(mount, "squall/s1")
    assert base == {"": mount / "squall" / "s1"}
    assert (mount / "cgroup.subtree_control").read_text() == "+memory +cpu"
    assert (mount / "squall" / "cgroup.subtree_control").read_text() == "memory cpu\n"
    host = cgroup_fs.Cgroups(2, base)
    group = host.create("worker-t-1", Limits(300 * MB, None))
    assert (group.main / "memory.max").read_text() == str(300 * MB)
    assert [g.name for g in host.leftovers()] == ["worker-t-1"]
    (group.main / "memory.max").unlink()  # a plain directory is not removable with files
    (group.main / "cgroup.kill").write_text("")
    host.end(group)
    assert (group.main / "cgroup.kill").exists()  # the kill was written; rmdir refused
    assert (group.main / "cgroup.kill").read_text() == "1"


def test_v1_base_dirs_per_controller_under_the_supervisors_own(tmp_path):
    for controller in ("memory", "cpu", "freezer"):
        (tmp_path / controller).mkdir()
    own = {"memory": "/box", "cpu": "/", "freezer": "/"}
    base = cgroup_fs._v1_base(tmp_path, own, "squall", "s1")
    assert base == {
        "memory": tmp_path / "memory/box/squall/s1",
        "cpu": tmp_path / "cpu/squall/s1",
        "freezer": tmp_path / "freezer/squall/s1",
    }
    host = cgroup_fs.Cgroups(1, base)
    group = host.create("worker-t-2", Limits(100 * MB, None))
    assert sorted(group.dirs) == ["freezer", "memory"]  # no CPU cap: no cpu cgroup
    assert (group.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(100 * MB)


def test_no_memory_controller_is_a_reason_not_a_crash(tmp_path):
    with pytest.raises(cgroup_fs.CgroupError, match="memory"):
        cgroup_fs._v1_base(tmp_path, {}, "squall", "s1")
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cgroup.controllers").write_text("cpu pids\n")
    with pytest.raises(cgroup_fs.CgroupError, match="memory controller"):
        cgroup_fs._v2_base(tmp_path / "v2", "squall/s1")


def test_false_turns_them_off_and_true_refuses_a_host_without_them(tmp_path, monkeypatch):
    assert cgroup_fs.for_supervisor({cgroups.ENABLE: False}, "s1") is None
    conf = {cgroups.ENABLE: True, HIERARCHY: str(tmp_path / "none")}
    monkeypatch.setattr(cgroup_fs.os, "geteuid", lambda: 0)
    with pytest.raises(cgroup_fs.CgroupError, match="is true but"):
        cgroup_fs.for_supervisor(conf, "s1")


def test_unavailable_by_default_is_one_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(cgroup_fs.os, "geteuid", lambda: 1000)
    assert cgroup_fs.for_supervisor({}, "s1") is None
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "does not run as root" in warnings[0]


def test_a_worker_the_kernel_killed_for_memory_says_so_with_its_limit():
    cause = cgroup_memory_error(300, 556 * MB)
    text = Exit(("t-1", 6700), -9, 3.0, "last", cause=cause).describe()
    assert "killed by signal 9: worker exceeded its memory limit of 300 MB (556 MB" in text


def test_two_supervisors_with_one_id_get_two_directories_and_a_restart_its_own():
    a = cgroups.supervisor_name("supervisor1", "/tmp/a/supervisor")
    assert a != cgroups.supervisor_name("supervisor1", "/tmp/b/supervisor")
    assert a == cgroups.supervisor_name("supervisor1", "/tmp/a/supervisor")
    assert a.startswith("supervisor1-")
