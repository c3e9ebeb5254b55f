"""Tick tuples on a real cluster (topologies/tick_tuples.py): with
topology.tick.tuple.freq.secs 1 in the topology conf and 2 in one component's conf, a Python
bolt's process_tick, a plain bolt's process and a pystorm bolt's process_tick (Storm's
multilang) each get Storm's tick tuple at their period, counted over a measured window with
a tolerance of whole ticks either side, and no tick counts as an executed or failed tuple."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from squall import thrift_api as T
from squall.local import topology_id, topology_progress, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES

pytest.importorskip("pystorm")

PERIODS = {"handler": 1, "plain": 2, "shell": 1}  # component -> its tick period (s)
WINDOW = 6.0  # seconds over which ticks are counted


def ticks(out: Path, component: str) -> list[list]:
    """What the component's tasks wrote down, one [component, task, stream, values] a tick."""
    seen = []
    for path in out.glob(f"{component}-*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                seen.append(json.loads(line))
            except ValueError:
                continue  # a torn last line
    return seen


def counts(out: Path) -> dict[str, int]:
    return {c: len(ticks(out, c)) for c in PERIODS}


def test_ticks_reach_python_and_multilang_bolts_at_their_period(cluster, tmp_path):
    out = tmp_path / "ticks"
    conf = cluster.client_conf()
    with cluster.client() as client:
        name = submit_file(
            client,
            TOPOLOGIES / "tick_tuples.py",
            conf,
            name="tick-tuples",
            overrides={"topology.output.dir": str(out)},
        )
        tid = topology_id(client, name)
    try:
        wait_for(lambda: all(counts(out).values()), 180, "every bolt's first tick")
        started = time.monotonic()
        before = counts(out)
        wait_for(lambda: time.monotonic() - started >= WINDOW, WINDOW + 60, f"{WINDOW} s of ticks")
        after = counts(out)
        elapsed = time.monotonic() - started
        for component, period in PERIODS.items():
            got = after[component] - before[component]
            expected = elapsed / period
            assert expected - 2 <= got <= expected + 1, (component, got, elapsed)
            assert all(
                tick == ["__system", -1, "__tick", [period]] for tick in ticks(out, component)
            ), ticks(out, component)
        progress = wait_for(lambda: topology_progress(conf, tid), 60, "the tasks' beats")
        assert (progress["executed"], progress["failed"]) == (0, 0), progress
        with cluster.client() as client:
            errors = client.getTopologyInfo(tid).errors or {}
            assert not any(errors.values()), errors
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
