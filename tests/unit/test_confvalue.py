"""`squall localconfvalue` / `remoteconfvalue NAME`: a key of this machine's cluster conf,
printed as Storm's ConfigValue prints it ("name: value", Java's text of the value)."""

from click.testing import CliRunner

from squall.cli import main
from squall.java_text import java_double, java_string

CONF = """
storm.zookeeper.servers: [zk1.example, zk2.example]
storm.local.dir: /var/lib/squall
supervisor.cpu.capacity: 250
supervisor.resources.map: {gpu.count: 2, fpga: 0.5}
topology.disable.loadaware.messaging: true
"""


def _value(tmp_path, verb, name):
    path = tmp_path / "squall.yaml"
    path.write_text(CONF)
    result = CliRunner().invoke(main, ["--config", str(path), verb, name])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_key_of_the_conf_file_or_the_defaults_as_storm_prints_it(tmp_path):
    assert (
        _value(tmp_path, "localconfvalue", "storm.local.dir")
        == "storm.local.dir: /var/lib/squall\n"
    )
    assert _value(tmp_path, "localconfvalue", "storm.zookeeper.servers") == (
        "storm.zookeeper.servers: zk1.example zk2.example\n"  # a list: its items, spaced
    )
    assert _value(tmp_path, "localconfvalue", "supervisor.resources.map") == (
        "supervisor.resources.map: {gpu.count=2, fpga=0.5}\n"
    )
    assert _value(tmp_path, "localconfvalue", "topology.disable.loadaware.messaging") == (
        "topology.disable.loadaware.messaging: true\n"
    )
    assert _value(tmp_path, "localconfvalue", "nimbus.thrift.port") == "nimbus.thrift.port: 6627\n"


def test_remoteconfvalue_reads_the_same_conf_and_an_unset_key_is_null(tmp_path):
    assert (
        _value(tmp_path, "remoteconfvalue", "storm.local.dir")
        == "storm.local.dir: /var/lib/squall\n"
    )
    assert _value(tmp_path, "remoteconfvalue", "no.such.key") == "no.such.key: null\n"


def test_java_text_of_values():
    assert [java_string(v) for v in (None, False, 3, 2.0, "x")] == [
        "null",
        "false",
        "3",
        "2.0",
        "x",
    ]
    assert java_string([1, [2.5, None], {"a": True}]) == "[1, [2.5, null], {a=true}]"
    inf, nan = float("inf"), float("nan")
    assert [java_double(v) for v in (inf, -inf, nan)] == ["Infinity", "-Infinity", "NaN"]
    assert [java_double(v) for v in (2e10, 1e-4, 0.5, 1234567.0)] == [
        "2.0E10",
        "1.0E-4",
        "0.5",
        "1234567.0",
    ]
