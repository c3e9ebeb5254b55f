"""Topology and config validation: every bad input names what is wrong."""

import json

import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall import thrift_api as T
from squall.config import ConfigError, cluster_conf, load_defaults, validate
from squall.validation import (
    check_topology_name,
    review_topology_conf,
    validate_topology,
    validate_topology_conf,
)


class Lines(Spout):
    outputs = ["line"]


class Split(Bolt):
    outputs = ["word"]


class Sink(Bolt):
    pass


def build(**specs):
    return type("T", (Topology,), specs).to_thrift()


def error_of(topology) -> str:
    with pytest.raises(T.InvalidTopologyException) as info:
        validate_topology(topology)
    return info.value.msg


def test_valid_topology_round_trips():
    lines = Lines.spec(par=2)
    thrift = build(lines=lines, split=Split.spec(inputs={lines: Grouping.fields("line")}))
    structure = validate_topology(thrift)
    assert structure.task_counts() == {"lines": 2, "split": 1}
    assert structure.components["split"].inputs[0].grouping.fields == ("line",)


def test_unknown_input_names_the_component():
    msg = error_of(build(lines=Lines.spec(), split=Split.spec(inputs=["nope"])))
    assert "'split'" in msg and "'nope'" in msg and "not a component" in msg


def test_missing_grouping_field_names_field_and_declared_fields():
    lines = Lines.spec()
    msg = error_of(build(lines=lines, split=Split.spec(inputs={lines: Grouping.fields("wrd")})))
    assert "'wrd'" in msg and "declares: line" in msg and "'split'" in msg


def test_unknown_stream():
    lines = Lines.spec()
    msg = error_of(build(lines=lines, split=Split.spec(inputs=[(lines, "other")])))
    assert "stream 'other'" in msg


@pytest.mark.parametrize("par", [0, -1, 10_001])
def test_parallelism_bounds(par):
    assert "parallelism" in error_of(build(lines=Lines.spec(par=par)))


def test_needs_a_spout():
    assert "at least one spout" in error_of(build(sink=Sink.spec()))


@pytest.mark.parametrize(
    "name", ["bad/name", "..", "a..b", "has space", "\x00x", "x" * 101, "x\n", "__acker"]
)
def test_bad_component_names(name):
    thrift = build(lines=Lines.spec(name=name))
    assert "name" in error_of(thrift)


def test_java_components_are_refused_clearly():
    thrift = build(lines=Lines.spec())
    thrift.spouts["lines"].spout_object = T.ComponentObject(
        java_object=T.api.JavaObject(full_class_name="org.Spout", args_list=[])
    )
    msg = error_of(thrift)
    assert "java_object component" in msg and "'lines'" in msg and "shell" in msg


def test_bad_component_conf_names_the_key():
    thrift = build(lines=Lines.spec(config={"topology.workers": "three"}))
    assert "topology.workers" in error_of(thrift)


@pytest.mark.parametrize("name", ["ok", "word-count_2", "a.b"])
def test_good_topology_names(name):
    assert check_topology_name(name) == name


@pytest.mark.parametrize("name", ["a/b", "..", "x\n", "", "x" * 101, None, "-lead"])
def test_bad_topology_names(name):
    with pytest.raises(T.InvalidTopologyException):
        check_topology_name(name)


def test_a_conf_nested_too_deep_is_refused_however_it_parses():
    """900 levels parse where nimbus reads the request, and fail wherever a deeper stack
    reads the stored conf again; more than the recursion limit never parses."""
    near_the_limit = '{"my.own.key": ' + "[" * 900 + "]" * 900 + "}"
    with pytest.raises(T.InvalidTopologyException, match="deeper than 32"):
        validate_topology_conf(near_the_limit)
    with pytest.raises(T.InvalidTopologyException, match="not valid JSON"):
        validate_topology_conf('{"my.own.key": ' + "[" * 100_000 + "]" * 100_000 + "}")
    fine = '{"my.own.key": ' + "[" * 30 + "]" * 30 + "}"
    assert validate_topology_conf(fine)["my.own.key"]


def test_topology_conf_errors():
    with pytest.raises(T.InvalidTopologyException, match="not valid JSON"):
        validate_topology_conf("{nope")
    typo = review_topology_conf(json.dumps({"topology.wokers": 2}))  # accepted, as Storm
    assert typo.conf == {"topology.wokers": 2}
    assert typo.suggestions == (("topology.wokers", "topology.workers"),)
    assert validate_topology_conf(json.dumps({"my.own.key": [1]})) == {"my.own.key": [1]}


def test_config_types_and_unknown_keys(tmp_path):
    defaults = load_defaults()
    with pytest.raises(ConfigError, match="nimbus.thrift.port must be an integer"):
        validate({"nimbus.thrift.port": "6627"}, defaults, "f")
    assert validate({"nimbus.thrift.prot": 1}, defaults, "f") == {"nimbus.thrift.prot": 1}
    with pytest.raises(ConfigError, match="must be a boolean"):
        validate({"topology.debug": 1}, defaults, "f")
    with pytest.raises(ConfigError, match="handoff must be one of auto, arrow, parquet"):
        validate({"topology.spark.handoff": "csv"}, defaults, "f")
    assert validate({"topology.spark.handoff": "arrow"}, defaults, "f")
    conf_file = tmp_path / "c.yaml"
    conf_file.write_text("nimbus.thrift.port: 7000\nspark.executor.memory: 1g\n")
    conf = cluster_conf(conf_file)
    assert conf["nimbus.thrift.port"] == 7000 and conf["spark.executor.memory"] == "1g"
    conf_file.write_text("nimbus.thrift.port: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        cluster_conf(conf_file)


# --- bad topologies refused before the upload (issue #11, item 6) ---


def test_two_components_with_one_name_are_refused_not_dropped():
    with pytest.raises(T.InvalidTopologyException) as info:
        type("Dup", (Topology,), {"a": Lines.spec(name="x"), "b": Split.spec(name="x")})
    assert info.value.msg == "Dup: two components are named 'x'"


def test_one_spec_under_two_names_is_refused():
    lines = Lines.spec()
    with pytest.raises(T.InvalidTopologyException) as info:
        type("Twice", (Topology,), {"a": lines, "b": lines})
    assert info.value.msg == "Twice: one component spec is declared twice, as 'a' and 'b'"


def test_a_subclass_may_still_replace_an_inherited_component():
    base = type("Base", (Topology,), {"a": Lines.spec()})
    child = type("Child", (base,), {"a": Lines.spec(par=3)})
    assert child.specs["a"].par == 3 and list(child.specs) == ["a"]


@pytest.mark.parametrize("par", [1.5, True, "2"])
def test_parallelism_that_is_not_a_whole_number_is_refused(par):
    msg = error_of(build(lines=Lines.spec(par=par)))
    assert msg == (
        f"component 'lines': parallelism must be a whole number from 1 to 10000, got {par!r}"
    )


@pytest.mark.parametrize("par", [1, 10_000])
def test_parallelism_bounds_are_allowed(par):
    assert validate_topology(build(lines=Lines.spec(par=par))).task_counts() == {"lines": par}


@pytest.mark.parametrize(
    "key", ["storm.zookeeper.root", "nimbus.seeds", "supervisor.slots.ports", "storm.local.dir"]
)
def test_cluster_only_keys_are_dropped_from_a_topology_conf(key):
    value = load_defaults()[key]
    found = review_topology_conf(json.dumps({key: value, "topology.workers": 2}))
    assert found.conf == {"topology.workers": 2} and found.dropped == (key,)
    assert any(key in line and "cluster settings" in line for _, line in found.messages())


def test_cluster_only_keys_are_dropped_from_a_component_conf():
    structure = validate_topology(build(lines=Lines.spec(config={"storm.zookeeper.root": "/x"})))
    assert structure.components["lines"].conf == {}


def test_a_cluster_key_of_the_wrong_type_is_still_refused_in_a_topology_conf():
    with pytest.raises(T.InvalidTopologyException) as info:
        validate_topology_conf(json.dumps({"storm.zookeeper.port": "2181"}))
    assert info.value.msg == (
        "topology conf: storm.zookeeper.port must be an integer, got string '2181'"
    )


def test_topology_keys_and_user_keys_pass():
    conf = {"topology.batch.size": 1, "topology.workers": 2, "my.own": [1]}
    assert validate_topology_conf(json.dumps(conf)) == conf


@pytest.mark.parametrize(
    ("key", "low", "minimum"),
    [
        ("topology.batch.size", 0, 1),
        ("topology.batch.timeout.ms", 0, 1),
        ("topology.max.spout.pending", -1, 0),
        ("topology.message.timeout.secs", -1, 1),
        ("topology.workers", 0, 1),
        ("topology.acker.executors", -1, 0),
    ],
)
def test_sizes_and_counts_below_their_minimum_are_refused(key, low, minimum):
    with pytest.raises(T.InvalidTopologyException) as info:
        validate_topology_conf(json.dumps({key: low}))
    assert info.value.msg == f"topology conf: {key} must be at least {minimum}, got {low}"
    assert validate_topology_conf(json.dumps({key: minimum})) == {key: minimum}


def test_cluster_sizes_below_their_minimum_are_refused():
    with pytest.raises(ConfigError, match="nimbus.max.tasks must be at least 1, got 0"):
        cluster_conf(**{"nimbus.max.tasks": 0})


def test_a_null_default_takes_storms_type_and_the_minimum_never_compares_a_string():
    # acker.executors' default is null, which says nothing of its type: Storm's @IsInteger
    # refuses a string, with a ConfigError, never a TypeError from comparing it to a minimum
    with pytest.raises(ConfigError, match="topology.acker.executors must be a whole number"):
        validate({"topology.acker.executors": "x"}, load_defaults(), "t")
    assert validate({"topology.acker.executors": 2.0}, load_defaults(), "t")


def test_every_minimum_names_a_known_key():
    from squall.config import MINIMUM

    assert set(MINIMUM) <= set(load_defaults())


def test_json_text_names_the_key_that_cannot_be_sent():
    from squall.validation import json_text

    assert json_text({"a": [1]}, "conf") == '{"a": [1]}'
    with pytest.raises(T.InvalidTopologyException) as info:
        json_text({"ok": 1, "bad": {"inner": {1, 2}}}, "topology conf")
    assert info.value.msg == (
        "topology conf: bad: inner cannot be sent as JSON: "
        "Object of type set is not JSON serializable"
    )


def test_client_check_refuses_unserializable_kwargs_and_conf():
    from squall.submit import checked

    topo = type("K", (Topology,), {"lines": Lines.spec(handle=object())})
    with pytest.raises(T.InvalidTopologyException, match="component 'lines': kwargs: handle"):
        checked(topo, "k", {})
    good = type("G", (Topology,), {"lines": Lines.spec()})
    with pytest.raises(T.InvalidTopologyException, match="topology conf: when cannot be sent"):
        checked(good, "g", {"when": object()})
    with pytest.raises(T.InvalidTopologyException, match="topology.batch.size must be at least"):
        checked(good, "g", {"topology.batch.size": 0})
    with pytest.raises(T.InvalidTopologyException, match="topology name"):
        checked(good, "a/b", {})
    thrift, json_conf = checked(good, "g", {"topology.workers": 2})
    assert json.loads(json_conf) == {"topology.workers": 2}
    assert validate_topology(thrift).task_counts() == {"lines": 1}


def test_a_name_in_use_as_name_or_id_is_refused():
    """One rule for the client (before the upload) and nimbus (squall.validation)."""
    from squall.validation import check_name_free

    running = [("t", "t-1a2b3c4d-1000")]
    with pytest.raises(T.AlreadyAliveException):
        check_name_free("t", running)
    with pytest.raises(T.InvalidTopologyException) as info:
        check_name_free("t-1a2b3c4d-1000", running)
    assert "is the id of a running topology" in info.value.msg
    check_name_free("u", running)
