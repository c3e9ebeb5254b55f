"""Shell components in topologies: squall's DSL declares them (command, script, outputs),
validation accepts Storm's ShellComponent strictly, getTopology gives it back as it came, and
a Storm jar (a zip, scripts under resources/) unpacks with the tar's rules."""

from __future__ import annotations

import io
import zipfile

import pytest

from squall import Grouping, Spout, Topology
from squall import thrift_api as T
from squall.code_package import PackageError, is_zip, unpack
from squall.shell_components import ShellBolt, ShellSpout, handshake_conf
from squall.structure import structure_to_thrift
from squall.validation import validate_topology
from squall.worker.multilang_process import command_line


class Lines(Spout):
    outputs = ["line"]


class Shelled(Topology):
    lines = Lines.spec()
    split = ShellBolt.spec(
        command="python3", script="split.py", outputs=["word"], inputs=[lines], par=2
    )
    count = ShellBolt.spec(
        command="streamparse_run",
        script="-s json counts.Count",
        outputs={"default": ["word", "n"], "totals": ["n"]},
        inputs={split: Grouping.fields("word")},
    )
    words = ShellSpout.spec(command="bash", script="words.sh", outputs=["word"])


def test_the_dsl_sends_storms_shell_component_and_it_round_trips():
    thrift = Shelled.to_thrift()
    shell = thrift.bolts["count"].bolt_object.shell
    assert (shell.execution_command, shell.script) == ("streamparse_run", "-s json counts.Count")
    assert thrift.bolts["count"].bolt_object.python_object is None
    assert thrift.spouts["words"].spout_object.shell.script == "words.sh"
    structure = validate_topology(thrift)
    count = structure.components["count"]
    assert count.streams == {"default": ("word", "n"), "totals": ("n",)}
    assert (count.module_name, count.class_name) == ("squall.shell_components", "ShellBolt")
    assert structure.components["words"].class_name == "ShellSpout"
    assert structure.components["split"].parallelism == 2
    assert structure_to_thrift(structure) == thrift  # getTopology answers what was sent


def shell_topology(command, script):
    thrift = Shelled.to_thrift()
    thrift.bolts["split"].bolt_object = T.ComponentObject(
        shell=T.ShellComponent(execution_command=command, script=script)
    )
    return thrift


@pytest.mark.parametrize(
    ("command", "script", "problem"),
    [
        (None, "x.py", "needs an execution_command"),
        ("", "x.py", "needs an execution_command"),
        ("   ", "x.py", "needs an execution_command"),
        ("py\x00thon", "x.py", "needs an execution_command"),
        ("python", "x\x00.py", "script must be a string"),
        ("python", "x" * 5000, "longer than 4096"),
        ("python", "'unclosed", "cannot split the shell command"),
    ],
)
def test_bad_shell_components_are_refused_naming_the_component(command, script, problem):
    with pytest.raises(T.InvalidTopologyException) as info:
        validate_topology(shell_topology(command, script))
    assert problem in info.value.msg and "'split'" in info.value.msg


def test_a_missing_script_is_an_empty_one():
    structure = validate_topology(shell_topology("./run-me", None))
    assert structure.components["split"].kwargs == {"execution_command": "./run-me", "script": ""}


def test_command_line_splits_like_a_shell_without_one():
    argv = ["streamparse_run", "-s", "json", "a.B"]
    assert command_line("streamparse_run", "-s json a.B") == argv
    assert command_line("python3 -u", "'my bolt.py'") == ["python3", "-u", "my bolt.py"]
    assert command_line("node", "") == ["node"]


def test_the_subprocess_gets_the_conf_without_credentials():
    conf = {
        "topology.workers": 1,
        "storm.zookeeper.auth.payload": "s",
        "security.dir": "/k",
        "my.db.Password": "p",
    }
    assert handshake_conf(conf) == {"topology.workers": 1}


def jar(tmp_path, entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            if isinstance(data, zipfile.ZipInfo):
                z.writestr(data, b"x")
            else:
                z.writestr(name, data)
    path = tmp_path / "upload.jar"
    path.write_bytes(buf.getvalue())
    return path


def test_a_storm_jar_unpacks_its_resources(tmp_path):
    package = jar(tmp_path, [("META-INF/MANIFEST.MF", "v"), ("resources/bolt.py", "print(1)")])
    assert is_zip(package)
    unpack(package, tmp_path / "code")
    assert (tmp_path / "code" / "resources" / "bolt.py").read_text() == "print(1)"


def symlink_entry() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("resources/link")
    info.external_attr = (0o120777) << 16
    return info


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([("../evil.py", "x")], "escapes its directory"),
        ([("/etc/evil", "x")], "escapes its directory"),
        ([("resources/link", symlink_entry())], "not a plain file"),
    ],
)
def test_hostile_jar_entries_are_refused(tmp_path, entries, problem):
    with pytest.raises(PackageError, match=problem):
        unpack(jar(tmp_path, entries), tmp_path / "code")
    assert not (tmp_path / "code").exists()


def test_jar_limits(tmp_path):
    many = jar(tmp_path, [(f"resources/{i}.py", "x") for i in range(5)])
    with pytest.raises(PackageError, match="more than 4 entries"):
        unpack(many, tmp_path / "code", max_entries=4)
    bomb = jar(tmp_path, [("resources/zeros", "0" * 100_000)])
    with pytest.raises(PackageError, match="more than 1000 bytes"):
        unpack(bomb, tmp_path / "code", max_bytes=1000)
    broken = tmp_path / "broken.jar"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(PackageError, match="cannot unpack"):
        unpack(broken, tmp_path / "code")
