"""Workers' cgroups on disk: find a usable hierarchy, create a worker's cgroup with its
limits (cgroups.py decides them), put the worker in, kill all it holds, remove it.

cgroup v2: one directory per worker in the unified hierarchy (memory.max, cpu.max,
cgroup.procs; cgroup.kill to end it). cgroup v1: one directory per controller (memory,
cpu, freezer); ending one freezes it, SIGKILLs every process in it and thaws it, so a
process forking as it is killed cannot leave a child behind. A supervisor's worker cgroups
sit under <its cgroup>/storm.supervisor.cgroup.rootdir/<supervisor id>, so it finds the ones
a dead run left and ends them at its start.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall.cgroup_names import hierarchy, own_cgroups

from . import cgroups
from .cgroups import Limits

log = logging.getLogger("squall.supervisor")

V1_CONTROLLERS = ("memory", "cpu", "freezer")


class CgroupError(RuntimeError):
    """A worker's cgroup could not be made, entered or ended."""


@dataclass(frozen=True)
class Group:
    """One worker's cgroup: its directory per controller ("" for v2's unified one)."""

    name: str
    dirs: dict[str, Path]

    @property
    def main(self) -> Path:
        """The directory whose cgroup.procs lists the worker's processes."""
        return self.dirs.get("", self.dirs.get("memory", next(iter(self.dirs.values()))))


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:  # one write(2) per value: cgroup files take one at a time
        f.write(value)


def _read_pids(path: Path) -> set[int]:
    try:
        return {int(x) for x in path.read_text().split()}
    except FileNotFoundError:
        return set()


class Cgroups:
    """This supervisor's worker cgroups under `base` (controller -> its directory)."""

    def __init__(self, version: int, base: dict[str, Path]) -> None:
        self.version = version
        self.base = base

    def _dirs(self, name: str, controllers: Any) -> dict[str, Path]:
        return {c: self.base[c] / name for c in controllers if c in self.base}

    def create(self, name: str, limits: Limits) -> Group:
        """The worker's cgroup with its limits (one a dead run left is ended first)."""
        v2 = self.version == 2
        files = {"": cgroups.v2_files(limits)} if v2 else cgroups.v1_files(limits)
        group = Group(name, self._dirs(name, files))
        self.end(group)
        try:
            for controller, directory in group.dirs.items():
                # a directory end() emptied but the kernel has not let go of yet is reused:
                # nothing runs in it any more (a restart in the same slot met "File exists")
                directory.mkdir(exist_ok=True)
                for file, value in files[controller]:
                    target = directory / file
                    if target.exists() or file in ("memory.max", "memory.limit_in_bytes"):
                        _write(target, value)
        except OSError as exc:
            self.end(group)
            raise CgroupError(f"cannot create cgroup {name}: {exc}") from exc
        return group

    def enter(self, group: Group, pid: int) -> None:
        """Move `pid` (a worker not yet running topology code) into its cgroup."""
        try:
            for directory in group.dirs.values():
                _write(directory / "cgroup.procs", str(pid))
        except OSError as exc:
            raise CgroupError(f"cannot put pid {pid} in cgroup {group.name}: {exc}") from exc

    def pids(self, group: Group) -> set[int]:
        return _read_pids(group.main / "cgroup.procs")

    def oom_kills(self, group: Group) -> int:
        """How often the kernel killed a process in it for its memory limit."""
        file = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            return cgroups.oom_kills((group.main / file).read_text())
        except OSError:
            return 0

    def end(self, group: Group, timeout: float = 10) -> None:
        """Kill every process in the worker's cgroup and remove it; a group not there is
        fine. Logs (never raises) when the kernel does not let go within `timeout`."""
        if not any(d.exists() for d in group.dirs.values()):
            return
        deadline = time.monotonic() + timeout
        try:
            self._kill_all(group, deadline)
            self._remove(group, deadline)
        except OSError as exc:
            log.warning("cannot remove cgroup %s: %s", group.name, exc)

    def _kill_all(self, group: Group, deadline: float) -> None:
        kill_file = group.main / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            _write(kill_file, "1")
        else:
            freezer = self._freezer(group)
            if freezer is not None:
                _write(freezer[0], freezer[1])
                _await(lambda: _frozen(freezer[0]), deadline)
            for pid in self.pids(group):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if freezer is not None:
                _write(freezer[0], "THAWED" if self.version == 1 else "0")
        # what the kill cannot stop (a fork racing it without a freezer) is killed again
        while self.pids(group) and time.monotonic() < deadline:
            for pid in self.pids(group):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def _freezer(self, group: Group) -> tuple[Path, str] | None:
        if self.version == 2:
            return (group.main / "cgroup.freeze", "1") if "" in group.dirs else None
        directory = group.dirs.get("freezer")
        return (directory / "freezer.state", "FROZEN") if directory is not None else None

    def _remove(self, group: Group, deadline: float) -> None:
        for directory in group.dirs.values():
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # EBUSY: a killed process not yet released
                    if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                        raise
                    time.sleep(0.01)

    def close(self) -> None:
        """At supervisor stop, its workers ended: its own cgroup directories go too."""
        for directory in self.base.values():
            with contextlib.suppress(OSError):
                directory.rmdir()

    def leftovers(self) -> list[Group]:
        """Worker cgroups a dead run of this supervisor left."""
        names = set()
        for directory in self.base.values():
            if directory.is_dir():
                names |= {p.name for p in directory.iterdir() if p.is_dir()}
        return [Group(n, self._dirs(n, self.base)) for n in sorted(names)]


def _frozen(state_file: Path) -> bool:
    """v1: freezer.state reads FROZEN; v2: cgroup.events says "frozen 1" (cgroup.freeze
    only says what was asked)."""
    if state_file.name == "cgroup.freeze":
        return "frozen 1" in (state_file.parent / "cgroup.events").read_text().splitlines()
    return state_file.read_text().strip() == "FROZEN"


def _await(done: Any, deadline: float) -> None:
    while not done() and time.monotonic() < deadline:
        time.sleep(0.005)


def _v2_base(mount: Path, path: str) -> dict[str, Path]:
    """Make the supervisor's v2 cgroup with the memory and cpu controllers handed down to
    its workers: each ancestor under the mount must enable them for its children."""
    controllers = (mount / "cgroup.controllers").read_text().split()
    if "memory" not in controllers:
        raise CgroupError(f"the memory controller is not enabled at {mount}")
    wanted = [c for c in ("memory", "cpu") if c in controllers]
    current = mount
    for part in [*path.split("/"), ""]:
        _hand_down(current, wanted)
        if not part:
            break
        current = current / part
        current.mkdir(exist_ok=True)
    return {"": current}


def _hand_down(directory: Path, controllers: Sequence[str]) -> None:
    enabled = (directory / "cgroup.subtree_control").read_text().split()
    missing = " ".join(f"+{c}" for c in controllers if c not in enabled)
    if not missing:
        return
    try:
        _write(directory / "cgroup.subtree_control", missing)
    except OSError as exc:
        raise CgroupError(
            f"cannot hand the memory controller down at {directory} ({exc}): a cgroup holding "
            f"processes cannot; run the supervisor in a cgroup of its own (systemd: "
            f"Delegate=yes) or set {cgroups.ROOT} to an absolute path"
        ) from exc


def _v1_base(mount: Path, own: dict[str, str], rootdir: str, sid: str) -> dict[str, Path]:
    if not (mount / "memory").is_dir():
        raise CgroupError(f"no memory controller mounted at {mount / 'memory'}")
    base = {}
    for controller in V1_CONTROLLERS:
        if (mount / controller).is_dir() and controller in own:
            path = cgroups.supervisor_path(own[controller], rootdir, sid)
            base[controller] = mount / controller / path
            base[controller].mkdir(parents=True, exist_ok=True)
    return base


def open_cgroups(conf: dict[str, Any], supervisor_id: str) -> Cgroups:
    """This supervisor's worker cgroups, made ready (CgroupError, with the reason, where
    the host does not allow them)."""
    if os.geteuid() != 0:
        raise CgroupError(f"the supervisor does not run as root (euid {os.geteuid()})")
    mount = hierarchy(conf)
    rootdir = conf.get(cgroups.ROOT) or "squall"
    try:
        own = own_cgroups(Path("/proc/self/cgroup").read_text())
        if (mount / "cgroup.controllers").exists():  # v2: the unified hierarchy
            path = cgroups.supervisor_path(own.get("", "/"), rootdir, supervisor_id)
            host = Cgroups(2, _v2_base(mount, path))
        else:
            host = Cgroups(1, _v1_base(mount, own, rootdir, supervisor_id))
        probe = host.create(".probe", Limits(64 * cgroups.MB, None))  # read-only? no memory?
        host.end(probe)
        return host
    except OSError as exc:
        raise CgroupError(f"cannot use {mount}: {exc}") from exc


def for_supervisor(conf: dict[str, Any], supervisor_id: str) -> Cgroups | None:
    """At supervisor start: its workers' cgroups, or None (then one warning line says what
    that means, unless storm.resource.isolation.plugin.enable is false). With the setting
    true, a host without usable cgroups stops the supervisor (CgroupError)."""
    want = cgroups.wanted(conf.get(cgroups.ENABLE))
    cgroups.worker_limits(conf, {}, 64, 0)  # the supervisor's own settings, checked once
    if want is False:
        log.info("cgroups off (%s: false): workers run without them", cgroups.ENABLE)
        return None
    try:
        host = open_cgroups(conf, supervisor_id)
    except (CgroupError, cgroups.CgroupConfigError) as exc:
        if want:
            raise CgroupError(f"{cgroups.ENABLE} is true but cgroups are unusable: {exc}") from exc
        log.warning("%s", cgroups.unavailable_warning(str(exc)))
        return None
    log.info("workers run in cgroup v%d under %s", host.version, host.base)
    return host
