"""Groupings pick the right target tasks, the same way in every process."""

import zlib
from collections import Counter

import pyarrow as pa

from squall import Bolt, Grouping, Spout, Topology
from squall.structure import assign_task_ids
from squall.worker.routing import Router, fields_hash


class S(Spout):
    outputs = ["key", "n"]


class B(Bolt):
    pass


def router(grouping, par=3, local=()):
    src = S.spec()
    topo = type("T", (Topology,), {"src": src, "dst": B.spec(inputs={src: grouping}, par=par)})
    structure = topo.structure()
    tasks = assign_task_ids(structure.task_counts())  # dst: 1..3, src: 4
    return Router(structure, tasks, local)


def test_fields_grouping_is_stable_and_consistent():
    r = router(Grouping.fields("key"))
    first = [r.targets("src", 4, "default", [f"k{i}", i]) for i in range(50)]
    again = [r.targets("src", 4, "default", [f"k{i}", 0]) for i in range(50)]
    assert first == again  # depends on the key only
    assert fields_hash(["x"]) == zlib.crc32(b"sx")  # not Python's per-process hash()
    assert {t for [t] in first} == {1, 2, 3}


def test_shuffle_spreads_evenly():
    r = router(Grouping.shuffle)
    hits = Counter(t for i in range(30) for t in r.targets("src", 4, "default", ["k", i]))
    assert hits == {1: 10, 2: 10, 3: 10}


def test_all_global_and_direct():
    assert router(Grouping.all).targets("src", 4, "default", ["k", 1]) == [1, 2, 3]
    assert router(Grouping.global_).targets("src", 4, "default", ["k", 1]) == [1]
    direct = router(Grouping.direct)
    assert direct.targets("src", 4, "default", ["k", 1], direct_task=2) == [2]
    assert direct.targets("src", 4, "default", ["k", 1]) == []


def test_local_or_shuffle_prefers_local_tasks():
    r = router(Grouping.local_or_shuffle, local={2, 4})
    assert {t for i in range(6) for t in r.targets("src", 4, "default", ["k", i])} == {2}


def test_a_batch_splits_by_key_exactly_as_single_tuples_route():
    r = router(Grouping.fields("key"))
    keys = [f"k{i % 37}" for i in range(500)] + [None]
    table = pa.table({"key": keys, "n": list(range(len(keys)))})
    parts = r.split("src", 4, "default", table)
    assert sum(part.num_rows for _, part in parts) == len(keys)
    for target, part in parts:
        for key in part.column("key").to_pylist():
            assert r.targets("src", 4, "default", [key, 0]) == [target]
    assert {t for t, _ in parts} == {1, 2, 3}


def test_a_batch_goes_whole_to_shuffle_targets_in_turn():
    r = router(Grouping.shuffle)
    table = pa.table({"key": ["a", "b"], "n": [1, 2]})
    turns = [r.split("src", 4, "default", table) for _ in range(3)]
    assert [t for [(t, part)] in turns] == [1, 2, 3]
    assert all(part is table for [(_, part)] in turns)
    assert [t for t, _ in router(Grouping.all).split("src", 4, "default", table)] == [1, 2, 3]


def test_fields_hash_is_defined_bytes_per_type():
    """Every process (and a shell component's host) can compute it: CRC-32 of tagged bytes."""
    assert fields_hash([7]) == zlib.crc32(b"i" + (7).to_bytes(8, "little", signed=True))
    assert fields_hash([-1]) == zlib.crc32(b"i" + b"\xff" * 8)
    assert fields_hash([b"ab"]) == zlib.crc32(b"bab")
    assert fields_hash([2.5]) == zlib.crc32(b"j2.5")
    assert fields_hash(["1"]) != fields_hash([1])  # a str and an int do not collide by design
    big = 1 << 70
    assert fields_hash([big]) == zlib.crc32(b"i" + big.to_bytes(9, "little", signed=True))
    assert fields_hash(["a", 1]) == zlib.crc32(
        b"i" + (1).to_bytes(8, "little", signed=True), zlib.crc32(b"sa")
    )


def test_int_and_compound_keys_route_batches_as_tuples():
    r = router(Grouping.fields("n"))
    table = pa.table({"key": [f"k{i}" for i in range(300)], "n": [i * 7919 for i in range(300)]})
    for target, part in r.split("src", 4, "default", table):
        for n in part.column("n").to_pylist():
            assert r.targets("src", 4, "default", ["?", n]) == [target]
    both = router(Grouping.fields("key", "n"))
    parts = both.split("src", 4, "default", table)
    assert {t for t, _ in parts} == {1, 2, 3}
    for target, part in parts:
        for key, n in zip(
            part.column("key").to_pylist(), part.column("n").to_pylist(), strict=True
        ):
            assert both.targets("src", 4, "default", [key, n]) == [target]


def test_downstream_lists_every_task_a_component_reaches():
    r = router(Grouping.shuffle)
    assert r.downstream == {"src": (1, 2, 3), "dst": ()}


class Relay(Bolt):
    outputs = ["key", "n"]


def test_downstream_reaches_through_every_hop():
    src = S.spec()
    mid = Relay.spec(inputs={src: Grouping.shuffle}, par=2)
    topo = type(
        "T", (Topology,), {"src": src, "mid": mid, "end": B.spec(inputs={mid: Grouping.shuffle})}
    )
    structure = topo.structure()
    tasks = assign_task_ids(structure.task_counts())
    r = Router(structure, tasks, ())
    by_name = {
        name: tuple(sorted(t for t, c in tasks.items() if c == name)) for name in tasks.values()
    }
    assert r.downstream["src"] == tuple(sorted(by_name["mid"] + by_name["end"]))
    assert r.downstream["mid"] == by_name["end"] and r.downstream["end"] == ()


def test_cached_key_hashes_route_as_the_hash_does_also_past_the_cache(monkeypatch):
    import squall.worker.routing as routing

    monkeypatch.setattr(routing, "MAX_CACHED_KEYS", 5)
    r = router(Grouping.fields("key"))
    keys = [f"k{i}" for i in range(20)] + [7, b"x", "k3"]
    for _ in range(2):  # the second time from the cache (for the first five str keys)
        assert [r.targets("src", 4, "default", [k, 0]) for k in keys] == [
            [(1, 2, 3)[fields_hash([k]) % 3]] for k in keys
        ]
    assert len(r._key_crcs) == 5
