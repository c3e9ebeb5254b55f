"""Shared by the tests that run topologies/gated.py on clusters of several hosts or on a
ZooKeeper ensemble: submitting it, opening its gate, reading its exact output, and what a
test needs to tell that no process was restarted and what each one listens on."""

from __future__ import annotations

import json
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.records import Assignment, decode
from squall.submit import submit_file

from .conftest import TOPOLOGIES

GATED = TOPOLOGIES / "gated.py"


@dataclass(frozen=True)
class GatedRun:
    name: str
    tid: str
    gate: Path  # holds the limit: the spouts emit every number below it
    out: Path  # the sink's output directory

    def open_to(self, limit: int) -> None:
        self.gate.write_text(str(limit))


def submit_gated(
    cluster: LocalCluster, tmp_path: Path, monkeypatch, conf: dict | None = None
) -> GatedRun:
    """Submit gated.py with its gate shut (and `conf` over its own); wait until every
    executor runs."""
    gate, out = tmp_path / "gate", tmp_path / "out"
    gate.write_text("0")
    monkeypatch.setenv("SQUALL_TEST_GATE", str(gate))
    with cluster.client() as client:
        overrides = {"topology.output.dir": str(out), **(conf or {})}
        name = submit_file(client, GATED, cluster.client_conf(), overrides=overrides)
        tid = topology_id(client, name)
        wait_for(lambda: running(client, tid), 90, "every executor of gated running")
    return GatedRun(name, tid, gate, out)


def running(client, tid: str) -> bool:
    return all(e.stats is not None for e in client.getTopologyInfo(tid).executors)


def kill(cluster: LocalCluster, run: GatedRun) -> None:
    with cluster.client() as client:
        client.killTopologyWithOpts(run.name, T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed(run.name), 60, f"{run.tid} removed")


def sink_rows(out: Path) -> dict[int, list[int]]:
    """The numbers each sink task wrote, by task id (from sink-<task>.jsonl)."""
    rows: dict[int, list[int]] = {}
    for path in out.glob("sink-*.jsonl"):
        task = int(path.stem.split("-")[1])
        lines = path.read_text().splitlines()
        rows[task] = [json.loads(line)["row"]["n"] for line in lines if line.endswith("}")]
    return rows


def numbers(out: Path) -> list[int]:
    return sorted(n for ns in sink_rows(out).values() for n in ns)


def wait_for_numbers(out: Path, count: int, timeout: float) -> list[int]:
    """Wait until the sink holds `count` numbers (or more: then the result shows copies)."""
    wait_for(lambda: len(numbers(out)) >= count, timeout, f"{count} numbers in the sink")
    return numbers(out)


def assignment(cluster: LocalCluster, tid: str) -> Assignment:
    zk = cluster.zk_client("nimbus")
    try:
        return decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)
    finally:
        zk.stop()
        zk.close()


def workers(cluster: LocalCluster) -> dict[str, tuple[int, str]]:
    """Every running worker: pid file name -> (pid, start time from /proc/<pid>/stat). A
    restarted worker has another pid, or the same pid reused with another start time."""
    found = {}
    for pid_file in cluster.directory.glob("supervisor*/supervisor/workers/*.pid"):
        pid = int(pid_file.read_text())
        found[f"{pid_file.parent.parent.parent.name}/{pid_file.name}"] = (pid, start_time(pid))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_time(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, counted after the command name


def listening(pid: int) -> set[tuple[str, int]]:
    """The (address, port) pairs process `pid` listens on, from /proc/<pid>/fd and
    /proc/net/tcp{,6}: what a stranger could connect to."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                hex_address, hex_port = fields[1].split(":")
                raw = bytes.fromhex(hex_address)
                words = struct.unpack(f"<{len(raw) // 4}I", raw)  # each word little-endian
                packed = struct.pack(f">{len(words)}I", *words)
                address = socket.inet_ntop(family, packed).removeprefix("::ffff:")  # Java's
                found.add((address, int(hex_port, 16)))
    return found
