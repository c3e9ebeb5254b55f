"""Configuration as Storm does it: every key Storm 2.8.8 defines is accepted and type-checked
with Storm's validators, unknown keys are the user's, typos get a "did you mean", and a
topology's cluster settings are left out of its conf (squall/config.py)."""

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from squall import Bolt, Spout, Topology
from squall import thrift_api as T
from squall.config import (
    ConfigError,
    cluster_conf,
    is_cluster_key,
    load_defaults,
    log_review,
    one_edit,
    report_file,
    review,
)
from squall.storm_checks import compile_check, problem
from squall.storm_keys import KEYS, STORM_TAG
from squall.validation import (
    cap_parallelism,
    check_topology_setting,
    conf_reviews,
    review_topology_conf,
    validate_topology,
    validate_topology_conf,
)

STORM_DEFAULTS = Path(__file__).parents[1] / "data" / "storm-v2.8.8-defaults.yaml"

# A valid value for each of Storm's checks (the first check that names a type decides).
SAMPLES: dict[str, Any] = {
    "boolean": True,
    "integer": 1,
    "long": 1,
    "number": 1,
    "positive": 1,
    "positive-or-zero": 1,
    "string": "org.example.Thing",
    "class-name": "org.example.Thing",
    "string-list": ["a", "b"],
    "string-or-string-list": ["a"],
    "no-duplicates": ["a", "b"],
    "kryo-registrations": ["org.example.A", {"org.example.B": "org.example.BSerializer"}],
    "map": {"a": 1},
    "map:string->string": {"a": "b"},
    "map:string->number": {"a": 1},
    "map-of-string-to-map": {"key": {"localname": "blob", "uncompress": False}},
    "pacemaker-auth": "DIGEST",
    "each:integer+positive": [6700, 6701],
    "each:metric-registry": [{"class": "org.example.M", "parallelism.hint": 1}],
    "each:cluster-metric-registry": [{"class": "org.example.M"}],
    "each:event-logger-registry": [{"class": "org.example.L", "arguments": {"a": 1}}],
    "each:metric-reporter": [{"class": "org.example.R", "filter": {"class": "org.example.F"}}],
    "values:user-resource-pool": {"alice": {"cpu": 100, "memory": 1024}},
    "values:impersonation-acl-user": {"bob": {"hosts": ["h"], "groups": ["g"]}},
    "values:numa-entry": {"n0": {"numa.cores": [0, 1], "numa.memory.mb": 1024, "numa.ports": [1]}},
    "one-of:list-of-string-lists|ras-constraints": [["spout", "bolt"]],
    "string=S0|S1|S2|S3": "S1",
}
NOT_A_TYPE = ("not-null", "deprecated", "positive", "positive-or-zero", "no-duplicates")


def sample(checks: tuple[str, ...]) -> Any:
    typed = [c for c in checks if c not in NOT_A_TYPE]
    return SAMPLES[(typed or [c for c in checks if c != "not-null"] or ["string"])[0]]


def every_config_key() -> dict[str, Any]:
    """Every key of Storm's Config.java with a value its validators accept."""
    return {k: sample(checks) for k, (where, checks) in KEYS.items() if where == "Config"}


def test_the_table_is_storms_and_every_check_is_known():
    assert STORM_TAG == "v2.8.8"
    assert len([k for k, (w, _) in KEYS.items() if w == "Config"]) > 290
    assert KEYS["topology.workers"] == ("Config", ("integer", "positive"))
    assert KEYS["supervisor.slots.ports"][1] == (
        "no-duplicates",
        "not-null",
        "each:integer+positive",
    )
    assert KEYS["nimbus.childopts"][0] == "DaemonConfig"
    for _, checks in KEYS.values():
        for name in checks:
            compile_check(name)  # raises KeyError for a check squall does not have


def test_every_sample_passes_storms_own_checks():
    for key, (_, checks) in KEYS.items():
        assert problem(checks, sample(checks)) is None, key


def test_a_topology_conf_holding_every_storm_config_key_is_accepted():
    conf = every_config_key()
    found = review_topology_conf(json.dumps(conf))
    kept = {k for k in conf if not is_cluster_key(k)}
    assert set(found.conf) == kept
    assert set(found.dropped) == set(conf) - kept
    assert found.suggestions == ()
    defaults = load_defaults()
    assert set(found.ignored) == {k for k in kept if k not in defaults}
    assert "topology.kryo.register" in found.ignored and "storm.workers.list" not in KEYS


def test_streamparses_conf_is_accepted():
    """What `sparse submit` always sends (streamparse 5's submit.py)."""
    conf = {
        "storm.workers.list": ["localhost"],
        "topology.original_name": "wordcount",
        "topology.python.path": "/data/virtualenvs/wordcount/bin/python",
        "topology.workers": 2,
        "topology.max.spout.pending": 5000,
        "topology.message.timeout.secs": 60,
        "virtualenv_flags": "-p python3",
    }
    found = review_topology_conf(json.dumps(conf))
    assert found.dropped == ("storm.workers.list",)
    assert found.conf["topology.python.path"] == conf["topology.python.path"]
    assert found.ignored == () and found.suggestions == ()


def test_storms_defaults_yaml_is_a_valid_cluster_conf(caplog):
    conf = cluster_conf(STORM_DEFAULTS)
    storm = yaml.safe_load(STORM_DEFAULTS.read_text())
    assert conf["storm.zookeeper.root"] == "/storm" and conf["nimbus.thrift.threads"] == 64
    assert conf["worker.childopts"] == storm["worker.childopts"]  # kept, though unused
    caplog.set_level(logging.INFO, logger="squall.config")
    report_file(STORM_DEFAULTS)
    (line,) = [r.getMessage() for r in caplog.records if "accepted and ignored" in r.getMessage()]
    assert "(Storm key squall does not implement)" in line
    assert "worker.childopts" in line and "storm.messaging.transport" in line
    assert "nimbus.thrift.port" not in line  # implemented
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_each_line_is_logged_once(caplog):
    found = review({"worker.childopts": "-Xmx1g"}, load_defaults(), "once.yaml")
    caplog.set_level(logging.INFO, logger="squall.config")
    log_review(found)
    log_review(found)
    assert len([r for r in caplog.records if "once.yaml" in r.getMessage()]) == 1


# --- did you mean ---


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("topology.wokers", "topology.workers", True),  # deleted
        ("topology.workerss", "topology.workers", True),  # inserted
        ("topology.workars", "topology.workers", True),  # replaced
        ("topology.wroker", "topology.worker", True),  # swapped
        ("topology.wrokesr", "topology.workers", False),  # two edits
        ("topology.workers", "topology.workers", False),  # the same key
        ("abc", "cba", False),
    ],
)
def test_one_edit(a, b, near):
    assert one_edit(a, b) is near and one_edit(b, a) is near


def test_a_key_one_edit_from_a_known_key_gets_a_warning(tmp_path, caplog):
    path = tmp_path / "storm.yaml"
    path.write_text("nimbus.thrift.prot: 7000\ntopology.tick.tuple.freq.sec: 5\nmy.key: 1\n")
    caplog.set_level(logging.INFO, logger="squall.config")
    conf = cluster_conf(path)
    assert conf["nimbus.thrift.prot"] == 7000 and conf["nimbus.thrift.port"] == 6627
    warnings = sorted(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert warnings == [
        f"{path}: unknown setting nimbus.thrift.prot: did you mean nimbus.thrift.port?",
        f"{path}: unknown setting topology.tick.tuple.freq.sec: "
        "did you mean topology.tick.tuple.freq.secs?",
    ]


def test_config_set_refuses_a_likely_typo_and_a_cluster_setting():
    with pytest.raises(T.InvalidTopologyException, match="did you mean topology.workers"):
        check_topology_setting("topology.wokers", 2)
    with pytest.raises(T.InvalidTopologyException, match="is a cluster setting"):
        check_topology_setting("nimbus.seeds", ["elsewhere"])
    with pytest.raises(T.InvalidTopologyException, match="the name the topology was submitted"):
        check_topology_setting("topology.name", "renamed")
    check_topology_setting("my.own.key", 2)
    check_topology_setting("topology.kryo.register", ["org.example.A"])


# --- type errors on Storm's keys ---


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("worker.childopts", 5, "worker.childopts must be a string or a list of strings"),
        ("topology.kryo.register", [5], "must be a list of class names"),
        ("topology.tick.tuple.freq.secs", 1.5, "must be a whole number (32-bit), got number 1.5"),
        ("topology.max.task.parallelism", 0, "must be a number greater than 0, got integer 0"),
        ("topology.max.task.parallelism", "2", "must be a whole number (32-bit)"),
        ("storm.messaging.netty.buffer_size", 2**40, "must be a whole number (32-bit)"),
        ("pacemaker.auth.method", "PLAIN", "must be NONE, DIGEST or KERBEROS"),
        ("storm.network.topography.plugin", None, "must not be null"),
        ("storm.zookeeper.topology.auth.payload", None, "must not be null"),  # @Password
        (
            "nimbus.impersonation.acl",
            {"u": {"hosts": []}},
            "entry 'u' must have the entry 'groups'",
        ),
        ("topology.metrics.consumer.register", [{"class": "C"}], "'parallelism.hint'"),
        ("topology.version", 5, "must be a string, got integer 5"),
        ("topology.ras.constraints", 5, "must be one of: list-of-string-lists, ras-constraints"),
        ("topology.environment", {"PATH": 1}, "must be a map of strings to strings"),
        ("drpc.authorizer.acl", [], "must be a map"),
        ("topology.worker.childopts", [1], "must be a string or a list of strings"),
    ],
)
def test_a_wrong_type_for_a_storm_key_is_refused(key, value, message):
    with pytest.raises(ConfigError) as info:
        review({key: value}, load_defaults(), "storm.yaml")
    assert message in str(info.value) and str(info.value).startswith(f"storm.yaml: {key} ")


def test_storms_whole_numbers_and_nulls():
    """IsInteger takes a whole-valued number (JSON may carry 2.0); null passes every check
    but NotNull, as Storm's validators."""
    defaults = load_defaults()
    assert review({"topology.tick.tuple.freq.secs": 2.0}, defaults, "t").conf
    assert review({"worker.childopts": None, "topology.kryo.register": None}, defaults, "t").conf
    with pytest.raises(ConfigError, match="topology.tick.tuple.freq.secs must be a whole"):
        review({"topology.tick.tuple.freq.secs": True}, defaults, "t")


def test_a_wrong_type_in_a_topology_conf_is_an_invalid_topology():
    with pytest.raises(T.InvalidTopologyException) as info:
        validate_topology_conf(json.dumps({"topology.fall.back.on.java.serialization": "no"}))
    assert info.value.msg == (
        "topology conf: topology.fall.back.on.java.serialization must be a boolean, got string 'no'"
    )


# --- a topology's cluster settings ---


def test_cluster_settings_in_a_topology_conf_are_dropped_and_said(caplog):
    conf = {"storm.zookeeper.servers": ["evil"], "nimbus.seeds": ["evil"], "topology.workers": 1}
    found = review_topology_conf(json.dumps(conf))
    assert found.conf == {"topology.workers": 1}
    caplog.set_level(logging.INFO, logger="squall.config")
    log_review(found)
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert line.startswith("topology conf: left out: storm.zookeeper.servers, nimbus.seeds")


# --- topology.max.task.parallelism and topology.name ---


class Lines(Spout):
    outputs = ["line"]


class Split(Bolt):
    outputs = ["word"]


def structure(**specs):
    return validate_topology(type("T", (Topology,), specs).to_thrift())


def test_max_task_parallelism_caps_each_component_its_own_conf_first():
    lines = Lines.spec(par=8)
    built = structure(
        lines=lines,
        split=Split.spec(inputs=[lines], par=6, config={"topology.max.task.parallelism": 4}),
        wide=Split.spec(inputs=[lines], par=6, config={"topology.max.task.parallelism": 10}),
    )
    capped = cap_parallelism(built, {"topology.max.task.parallelism": 2})
    assert capped.task_counts() == {"lines": 2, "split": 4, "wide": 6}
    uncapped = {"topology.max.task.parallelism": None}
    assert cap_parallelism(built, uncapped).task_counts() == {"lines": 8, "split": 4, "wide": 6}
    plain = structure(lines=Lines.spec(par=3))
    assert cap_parallelism(plain, {"topology.max.task.parallelism": 9}) is plain


class Twice(Spout):
    """Each task emits two tuples, then is done."""

    outputs = ["n"]

    def initialize(self, conf, context):
        self.left = 2

    def next_tuple(self):
        if not self.left:
            return False
        self.left -= 1
        self.emit([self.left])
        return True


class Capped(Topology):
    config = {"topology.max.task.parallelism": 1}
    numbers = Twice.spec(par=3)


def test_a_submit_says_what_it_left_out_and_ignored_each_time(caplog):
    lines = Lines.spec(config={"storm.zookeeper.root": "/x", "topology.tasks": 4})
    thrift = type("T", (Topology,), {"lines": lines}).to_thrift()
    json_conf = json.dumps({"topology.kryo.register": ["A"], "topology.workers": 1})
    caplog.set_level(logging.INFO, logger="squall.config")
    for _ in range(2):
        for found in conf_reviews("wc", thrift, json_conf):
            log_review(found, once=False)
    said = [r.getMessage() for r in caplog.records]
    ignored = "accepted and ignored (Storm key squall does not implement)"
    assert said == 2 * [
        f"topology 'wc' conf: {ignored}: topology.kryo.register",
        "topology 'wc' component 'lines' conf: left out: storm.zookeeper.root (cluster "
        "settings, which a topology cannot set: the cluster's own values apply)",
        f"topology 'wc' component 'lines' conf: {ignored}: topology.tasks",
    ]


def test_an_in_process_run_caps_parallelism_as_nimbus_does():
    from squall.testing import run

    assert sorted(run(Capped, timeout=60).values("numbers")) == [(0,), (1,)]
    uncapped = {"topology.max.task.parallelism": None}
    assert len(run(Capped, conf=uncapped, timeout=60).values("numbers")) == 6


def test_topology_name_is_accepted_in_a_conf():
    assert validate_topology_conf(json.dumps({"topology.name": "mine"})) == {
        "topology.name": "mine"
    }
    with pytest.raises(T.InvalidTopologyException, match="topology.name must be a string"):
        validate_topology_conf(json.dumps({"topology.name": 5}))


# --- the generated files ---

ROOT = Path(__file__).parents[2]


def generator():
    """tools/storm_keys.py, imported from its file (tools/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("storm_keys", ROOT / "tools" / "storm_keys.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_generated_table_and_key_list_are_current(tmp_path):
    """squall/storm_keys.py and docs/configuration-storm-keys.md are what tools/storm_keys.py
    writes from Storm's source (and squall's conf/defaults.yaml, whose keys the list sorts)."""
    tool = generator()
    if not Path(tool.DEFAULT_GIT).is_dir():
        pytest.skip(f"no Storm git repository at {tool.DEFAULT_GIT}")
    module, docs = tmp_path / "storm_keys.py", tmp_path / "keys.md"
    assert tool.main(["--module", str(module), "--docs", str(docs)]) == 0
    stale = "is stale: run python tools/storm_keys.py"
    assert module.read_text() == (ROOT / "squall" / "storm_keys.py").read_text(), stale
    assert docs.read_text() == (ROOT / "docs" / "configuration-storm-keys.md").read_text(), stale


def test_the_generator_reads_annotations_as_storm_declares_them():
    tool = generator()
    java = """
    /** A "quoted // not a comment" doc. */
    @IsInteger
    @IsPositiveNumber(includeZero = true)
    public static final String A = "a.key"; // trailing
    @IsMapEntryCustom(
        keyValidatorClasses = { ConfigValidation.StringValidator.class },
        valueValidatorClasses = { ConfigValidation.UserResourcePoolEntryValidator.class })
    public static final String B =
        "b.key";
    @IsImplementationOfClass(implementsClass = IStrategy.class)
    public static final String C = A;
    """
    resolve: dict[str, str] = {}
    keys = tool.declared_keys(java, resolve, "X")
    assert keys == {
        "a.key": ["integer", "positive-or-zero", "class-name"],
        "b.key": ["values:user-resource-pool"],
    }
    with pytest.raises(SystemExit, match="@IsSomethingNew"):
        tool.declared_keys('@IsSomethingNew\npublic static final String D = "d";', {}, "X")
