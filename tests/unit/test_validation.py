"""Topology and config validation: every bad input names what is wrong."""

import json

import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall import thrift_api as T
from squall.config import ConfigError, cluster_conf, load_defaults, validate
from squall.validation import check_topology_name, validate_topology, validate_topology_conf


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


def test_shell_components_are_refused_clearly():
    thrift = build(lines=Lines.spec())
    thrift.spouts["lines"].spout_object = T.ComponentObject(
        shell=T.ShellComponent(execution_command="python", script="x.py")
    )
    msg = error_of(thrift)
    assert "shell component" in msg and "'lines'" in msg


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


def test_topology_conf_errors():
    with pytest.raises(T.InvalidTopologyException, match="not valid JSON"):
        validate_topology_conf("{nope")
    with pytest.raises(T.InvalidTopologyException, match="unknown setting topology.wokers"):
        validate_topology_conf(json.dumps({"topology.wokers": 2}))
    assert validate_topology_conf(json.dumps({"my.own.key": [1]})) == {"my.own.key": [1]}


def test_config_types_and_unknown_keys(tmp_path):
    defaults = load_defaults()
    with pytest.raises(ConfigError, match="nimbus.thrift.port must be a integer"):
        validate({"nimbus.thrift.port": "6627"}, defaults, "f")
    with pytest.raises(ConfigError, match="unknown setting nimbus.thrift.prot"):
        validate({"nimbus.thrift.prot": 1}, defaults, "f")
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
