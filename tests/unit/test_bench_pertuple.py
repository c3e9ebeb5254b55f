"""bench/pertuple_stats.py: the arithmetic behind bench/pertuple.py's figures (percentiles,
rates of running totals over a window, /proc/<pid>/stat, medians of rounds)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))  # names unique to bench/

import pertuple_stats as stats  # noqa: E402


def test_percentile_interpolates_between_ranks_like_numpy():
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert stats.percentile(values, 0) == 1.0
    assert stats.percentile(values, 50) == 3.0
    assert stats.percentile(values, 100) == 5.0
    assert stats.percentile(values, 90) == pytest.approx(4.6)
    assert stats.percentile([1.0, 2.0], 99) == pytest.approx(1.99)


def test_percentile_of_nothing_is_none():
    assert stats.percentile([], 50) is None


RECORDS = [
    {"t": 10.0, "counted": 0},
    {"t": 11.0, "counted": 100},
    {"t": 12.0, "counted": 300},
    {"t": 13.0, "counted": 600},
]


def test_value_at_interpolates_inside_and_is_none_outside():
    assert stats.value_at(RECORDS, "counted", 11.5) == pytest.approx(200)
    assert stats.value_at(RECORDS, "counted", 12.0) == 300
    assert stats.value_at(RECORDS, "counted", 9.9) is None
    assert stats.value_at(RECORDS, "counted", 13.1) is None


def test_rate_between_is_growth_per_second_over_the_window():
    assert stats.rate_between(RECORDS, "counted", 11.0, 13.0) == pytest.approx(250)
    assert stats.rate_between(RECORDS, "counted", 10.5, 12.5) == pytest.approx(200)


def test_rate_between_refuses_a_window_the_records_do_not_span():
    with pytest.raises(ValueError, match="span"):
        stats.rate_between(RECORDS, "counted", 9.0, 12.0)
    with pytest.raises(ValueError, match="positive"):
        stats.rate_between(RECORDS, "counted", 12.0, 12.0)


def test_samples_between_takes_lines_written_inside_the_window():
    records = [{"t": 1.0, "lag_ms": [1, 2]}, {"t": 2.0, "lag_ms": [3]}, {"t": 3.0}]
    assert stats.samples_between(records, "lag_ms", 1.0, 3.0) == [3]
    assert stats.samples_between(records, "lag_ms", 0.0, 2.0) == [1, 2, 3]


def test_parse_proc_stat_counts_fields_after_the_last_parenthesis():
    fields = ["S", "77"] + ["0"] * 9 + ["120", "30"] + ["0"] * 8 + ["2048"] + ["0"] * 20
    line = f"4242 (python (worker) x) {' '.join(fields)}\n"
    parsed = stats.parse_proc_stat(line)
    assert parsed == stats.ProcStat(pid=4242, ppid=77, cpu_ticks=150, rss_pages=2048)


def test_parse_proc_stat_reads_this_process():
    own = stats.parse_proc_stat(Path(f"/proc/{os.getpid()}/stat").read_text())
    assert own.pid == os.getpid()
    assert own.ppid == os.getppid()
    assert own.rss_pages > 0


def test_descendants_follow_children_of_children_and_leave_others_out():
    procs = [
        stats.ProcStat(10, 1, 0, 0),  # a supervisor
        stats.ProcStat(11, 10, 0, 0),  # its worker
        stats.ProcStat(12, 11, 0, 0),  # what the worker started
        stats.ProcStat(20, 1, 0, 0),  # someone else's
        stats.ProcStat(21, 20, 0, 0),
    ]
    assert sorted(p.pid for p in stats.descendants(procs, [10])) == [11, 12]
    assert stats.descendants(procs, [99]) == []


def test_median_row_takes_each_numeric_field_median_and_keeps_labels():
    rounds = [
        {"case": "ack1", "rate": 10.0, "p99_ms": None},
        {"case": "ack1", "rate": 30.0, "p99_ms": 5.0},
        {"case": "ack1", "rate": 20.0, "p99_ms": 7.0},
    ]
    assert stats.median_row(rounds) == {"case": "ack1", "rate": 20.0, "p99_ms": 6.0}


def test_median_row_keeps_the_fields_of_rounds_after_a_failed_one():
    rounds = [
        {"case": "ack1", "rate": None, "error": "TimeoutError"},
        {"case": "ack1", "rate": 30.0, "p99_ms": 5.0},
        {"case": "ack1", "rate": 20.0, "p99_ms": 7.0},
    ]
    row = stats.median_row(rounds)
    assert row == {"case": "ack1", "rate": 25.0, "error": "TimeoutError", "p99_ms": 6.0}


def test_ratio_is_none_without_a_base():
    assert stats.ratio(10.0, 4.0) == 2.5
    assert stats.ratio(10.0, None) is None
    assert stats.ratio(None, 4.0) is None
    assert stats.ratio(10.0, 0.0) is None


def test_table_marks_lag_and_missing_values():
    text = stats.table(
        [
            {"system": "a", "rate": 1234.5, "p50_ms": 1.0, "p99_ms": 2.0, "vs_bytewax": 0.5}
            | {"per_cpu_s": 2469.0, "vs_bytewax_cpu": 0.25},
            {"system": "b", "rate": 10.0, "p50_ms": 3.0, "p99_ms": 4.0, "latency_kind": "lag"},
            {"system": "c", "rate": 10.0},
        ]
    )
    rows = text.splitlines()
    assert rows[2].startswith("| a | 1,234 | 0.50x | 2,469 | 0.25x | 1.0 / 2.0 |")
    assert "3.0 / 4.0 (emit-to-count)" in rows[3]
    assert rows[4].startswith("| c | 10 | - | - | - | - |")


def test_per_cpu_second_divides_by_the_share_of_a_core_used():
    assert stats.per_cpu_second(1000.0, 50.0) == 2000.0
    assert stats.per_cpu_second(1000.0, 200.0) == 500.0
    assert stats.per_cpu_second(None, 50.0) is None
    assert stats.per_cpu_second(1000.0, 0.0) is None


def test_a_throttled_spout_emits_what_is_due_in_bursts_and_forgives_old_backlog():
    import pertuple_topology as topo

    assert topo.emits_due(10.0, 10.0, 0.001) == (1, pytest.approx(10.001))
    n, due = topo.emits_due(10.0, 10.0105, 0.001)  # 10.5 ms late: 11 due
    assert (n, due) == (11, pytest.approx(10.011))
    n, due = topo.emits_due(10.0, 10.05, 0.0001)  # 500 due, but one burst is bounded
    assert n == topo.MAX_BURST and due == pytest.approx(10.0 + topo.MAX_BURST * 0.0001)
    n, due = topo.emits_due(10.0, 15.0, 1.0)  # 5 s behind: only CATCH_UP is made up
    assert n == 1 and due == pytest.approx(15.0 - topo.CATCH_UP + 1.0)


def test_rounds_become_median_rows_with_ratios_to_the_matching_bytewax_case():
    import pertuple

    def rows(ack1: float, item: float, batch: float, bw_batch: float) -> list[dict]:
        return [
            {"case": "ack1", "rate": ack1, "per_cpu_s": ack1 * 2},
            {"case": "batch", "rate": batch, "per_cpu_s": batch},
            {"case": "bytewax-item", "rate": item, "per_cpu_s": item},
            {"case": "bytewax-batch", "rate": bw_batch, "per_cpu_s": bw_batch},
            {"case": "loop", "rate": 1e6, "per_cpu_s": 1e6},
        ]

    rounds = [rows(10, 100, 50, 100), rows(30, 100, 70, 100), rows(20, 100, 60, 100)]
    by_case = {r["case"]: r for r in pertuple.with_ratios(pertuple.medians(rounds))}
    assert by_case["ack1"]["vs_bytewax"] == pytest.approx(0.2)
    assert by_case["ack1"]["vs_bytewax_cpu"] == pytest.approx(0.4)
    assert by_case["batch"]["vs_bytewax"] == pytest.approx(0.6)  # against batches, not items
    assert by_case["loop"]["vs_bytewax"] is None
    assert pertuple.round_ratios(rounds, "ack1") == pytest.approx([0.1, 0.3, 0.2])
    rounds[1] = [r for r in rounds[1] if r["case"] != "bytewax-batch"]  # failed in round 2
    assert pertuple.round_ratios(rounds, "batch") == pytest.approx([0.5, 0.6])
    assert pertuple.round_ratios(rounds, "loop") == []


def test_set_takes_yaml_values_and_refuses_what_is_not_key_value():
    import pertuple

    args = pertuple.parse_args(["--set", "topology.max.spout.pending=100", "--set", "a.b=true"])
    assert args.conf == {"topology.max.spout.pending": 100, "a.b": True}
    with pytest.raises(SystemExit):
        pertuple.parse_args(["--set", "no-equals-sign"])
    with pytest.raises(SystemExit):
        pertuple.parse_args(["--cases", "ack1,nope"])


def test_the_ceiling_case_runs_only_when_named():
    import pertuple

    assert "ack2-near" not in pertuple.parse_args([]).cases
    assert "work2-rr" not in pertuple.parse_args([]).cases
    assert pertuple.parse_args(["--cases", "ack2,ack2-near"]).cases == ["ack2", "ack2-near"]
    assert pertuple.BASE["ack2-near"] == "bytewax-item"  # compared as ack2 is


def test_scaling_ratios_are_taken_within_each_round_and_skip_a_round_missing_a_case():
    import pertuple

    rounds = [
        [
            {"case": "work1", "rate": 10.0, "per_cpu_s": 20.0, "rate_at_equal_speed": 300.0},
            {"case": "work2", "rate": 18.0, "per_cpu_s": 19.0, "rate_at_equal_speed": 600.0},
            {"case": "ack1", "rate": 5.0, "per_cpu_s": 40.0},
            {"case": "ack2", "rate": 9.0, "per_cpu_s": 30.0},
        ],
        [{"case": "work1", "rate": 20.0, "per_cpu_s": 20.0}, {"case": "ack1", "rate": 1.0}],
        [
            {"case": "work1", "rate": 20.0, "per_cpu_s": 10.0},
            {"case": "work2", "rate": 30.0, "per_cpu_s": 10.0},
        ],
    ]
    assert pertuple.scaling_lines(rounds) == [
        "  work2 over work1, tuples/s: 1.80x, 1.50x (median 1.65x)",
        "  work2 over work1, tuples/s at equal busy() speed: 2.00x (median 2.00x)",
        "  work2 over work1, tuples per CPU-second: 0.95x, 1.00x (median 0.97x)",
        "  ack2 over ack1, tuples per CPU-second: 0.75x (median 0.75x)",
    ]
    assert pertuple.scaling_lines([]) == []


def test_the_rate_at_equal_speed_is_the_rate_times_the_windows_busy_call_time():
    """Two work tasks' progress lines: 1 s of busy() over 10,000 timed calls in the window
    (100 us a call); what they did before the window does not count."""
    import pertuple_squall

    works = [
        {"file": "work-3", "t": 0.0, "timed": 0, "busy_s": 0.0},
        {"file": "work-3", "t": 10.0, "timed": 1000, "busy_s": 0.5},
        {"file": "work-3", "t": 20.0, "timed": 5000, "busy_s": 0.9},
        {"file": "work-4", "t": 0.0, "timed": 0, "busy_s": 0.0},
        {"file": "work-4", "t": 10.0, "timed": 2000, "busy_s": 0.2},
        {"file": "work-4", "t": 20.0, "timed": 8000, "busy_s": 0.8},
    ]
    speed = pertuple_squall.busy_speed(works, 10.0, 20.0, rate=1000.0)
    assert speed["busy_us"] == pytest.approx(100.0)
    assert speed["rate_at_equal_speed"] == pytest.approx(100_000.0)


def test_the_work_bolt_times_one_busy_call_in_timed_every_and_logs_the_totals(tmp_path):
    import pertuple_topology

    bolt = pertuple_topology.WorkBolt.__new__(pertuple_topology.WorkBolt)
    bolt.kwargs = {"work": 50}
    context = type("Context", (), {"output_dir": str(tmp_path), "task_id": 7})()
    bolt.initialize({}, context)
    emitted = []
    bolt.emit = emitted.append
    tup = type("Tup", (), {"values": ("word", 1.0)})()
    for _ in range(3 * bolt.TIMED_EVERY):
        bolt.process(tup)
    bolt.cleanup()
    assert len(emitted) == 3 * bolt.TIMED_EVERY and emitted[0] == ["WORD", 1.0]
    last = json.loads((tmp_path / "work-7.jsonl").read_text().splitlines()[-1])
    assert last["timed"] == 3 and last["busy_s"] > 0


def test_the_work_cases_differ_only_in_workers_and_do_work_of_the_size_asked():
    import pertuple_squall
    import pertuple_topology

    (_, one, conf1), (_, two, conf2) = (
        pertuple_squall.CASES["work1"],
        pertuple_squall.CASES["work2"],
    )
    assert one == two and one["work"] == pertuple_squall.WORK_ROUNDS
    assert (conf1["topology.workers"], conf2["topology.workers"]) == (1, 2)
    h = 3
    for i in range(4):
        h = (h * 31 + i) & 0xFFFFF
    assert pertuple_topology.busy(3, 4) == h
    assert pertuple_topology.busy(3, 0) == 3
