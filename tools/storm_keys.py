"""Generate squall/storm_keys.py and docs/configuration-storm-keys.md from Apache Storm's source.

Storm's own list of configuration keys is the public String constants of Config.java
(storm-client) and DaemonConfig.java (storm-server), each annotated with the validators its
ConfigValidation runs, plus the keys its conf/defaults.yaml sets. This reads those three files
(from a Storm checkout, or a tag of a bare Storm git repository) so the table is never copied
by hand, and fails loudly on an annotation it does not know, so a newer Storm's new validator
is noticed rather than silently skipped.

    python tools/storm_keys.py --git /path/to/apache/storm.git --tag v2.8.8
    python tools/storm_keys.py --checkout /path/to/storm
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
CONFIG = "storm-client/src/jvm/org/apache/storm/Config.java"
DAEMON_CONFIG = "storm-server/src/main/java/org/apache/storm/DaemonConfig.java"
DEFAULTS = "conf/defaults.yaml"
DEFAULT_GIT = "/work/.mirror/apache+storm/repo"

# Validator classes named inside annotations, as squall's check names (squall/storm_checks.py).
ENTRY_VALIDATORS = {
    "IntegerValidator": "integer",
    "PositiveNumberValidator": "positive",
    "StringValidator": "string",
    "MetricRegistryValidator": "metric-registry",
    "ClusterMetricRegistryValidator": "cluster-metric-registry",
    "EventLoggerRegistryValidator": "event-logger-registry",
    "MetricReportersValidator": "metric-reporter",
    "ImpersonationAclUserEntryValidator": "impersonation-acl-user",
    "NumaEntryValidator": "numa-entry",
    "UserResourcePoolEntryValidator": "user-resource-pool",
    "ListOfListOfStringValidator": "list-of-string-lists",
    "RasConstraintsTypeValidator": "ras-constraints",
    "MapOfStringToMapOfStringToObjectValidator": "map-of-string-to-map",
    "PacemakerAuthTypeValidator": "pacemaker-auth",
}
JAVA_TYPES = {"String": "string", "Number": "number", "Map": "map"}


def _classes(args: str, name: str) -> list[str]:
    """The simple class names listed in annotation argument `name` ({ A.class, B.class })."""
    match = re.search(rf"{name}\s*=\s*\{{([^}}]*)\}}", args) or re.search(
        rf"{name}\s*=\s*([\w.]+)\.class", args
    )
    if not match:
        raise ValueError(f"no {name} in ({args})")
    names = [c.strip().removesuffix(".class").split(".")[-1] for c in match.group(1).split(",")]
    return [ENTRY_VALIDATORS[n] for n in names if n]


def _java_type(args: str, name: str) -> str:
    match = re.search(rf"{name}\s*=\s*([\w.]+)\.class", args)
    if not match:
        raise ValueError(f"no {name} in ({args})")
    return JAVA_TYPES[match.group(1).split(".")[-1]]


def _string(args: str) -> str:
    accepted = re.findall(r'"([^"]*)"', args)
    return "string=" + "|".join(accepted) if accepted else "string"


def _positive(args: str) -> str:
    return "positive-or-zero" if re.search(r"includeZero\s*=\s*true", args) else "positive"


ANNOTATIONS: dict[str, Callable[[str], str]] = {
    "NotNull": lambda a: "not-null",
    "Password": lambda a: "not-null",  # Storm's @Password runs its NotNullValidator
    "IsString": _string,
    "IsBoolean": lambda a: "boolean",
    "IsNumber": lambda a: "number",
    "IsInteger": lambda a: "integer",
    "IsLong": lambda a: "long",
    "IsPositiveNumber": _positive,
    "IsStringList": lambda a: "string-list",
    "IsStringOrStringList": lambda a: "string-or-string-list",
    "IsKryoReg": lambda a: "kryo-registrations",
    "IsNoDuplicateInList": lambda a: "no-duplicates",
    "IsImplementationOfClass": lambda a: "class-name",
    "IsType": lambda a: _java_type(a, "type"),
    "IsMapEntryType": lambda a: f"map:{_java_type(a, 'keyType')}->{_java_type(a, 'valueType')}",
    "IsListEntryCustom": lambda a: "each:" + "+".join(_classes(a, "entryValidatorClasses")),
    "IsMapEntryCustom": lambda a: "values:" + "+".join(_classes(a, "valueValidatorClasses")),
    "IsExactlyOneOf": lambda a: "one-of:" + "|".join(_classes(a, "valueValidatorClasses")),
    "CustomValidator": lambda a: _classes(a, "validatorClass")[0],
    "Deprecated": lambda a: "deprecated",
}
IGNORED_ANNOTATIONS = {"SuppressWarnings"}


def strip_comments(java: str) -> str:
    """Java source without comments; string literals kept whole (a "//" in one stays)."""
    out, i, n = [], 0, len(java)
    while i < n:
        if java.startswith("//", i):
            i = java.find("\n", i)
            i = n if i < 0 else i
        elif java.startswith("/*", i):
            end = java.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif java[i] == '"':
            end = i + 1
            while end < n and java[end] != '"':
                end += 2 if java[end] == "\\" else 1
            out.append(java[i : end + 1])
            i = end + 1
        else:
            out.append(java[i])
            i += 1
    return "".join(out)


_DECLARATION = re.compile(
    r"((?:@\w+(?:\s*\([^()]*\))?\s*)*)"
    r"public\s+static\s+final\s+String\s+(\w+)\s*=\s*([^;]+);"
)
_ANNOTATION = re.compile(r"@(\w+)(?:\s*\(([^()]*)\))?")


def declared_keys(java: str, resolve: dict[str, str], origin: str) -> dict[str, list[str]]:
    """{key: checks} of one Config class's public String constants, in declaration order.
    `resolve` maps constant names already read (Config's, for DaemonConfig's
    `= Config.X`) to their keys, and is extended with this class's."""
    keys: dict[str, list[str]] = {}
    for match in _DECLARATION.finditer(strip_comments(java)):
        annotations, constant, value = match.groups()
        value = value.strip()
        if value.startswith('"'):
            key = "".join(re.findall(r'"([^"]*)"', value))
        else:
            key = resolve[value.split(".")[-1]]
        resolve[constant] = key
        checks = keys.setdefault(key, [])
        for name, args in _ANNOTATION.findall(annotations):
            if name in IGNORED_ANNOTATIONS:
                continue
            if name not in ANNOTATIONS:
                raise SystemExit(f"{origin}: {constant} has annotation @{name}, unknown here")
            check = ANNOTATIONS[name](args or "")
            if check not in checks:
                checks.append(check)
    return keys


class Source:
    """Reads Storm's files from a checkout or from a tag of a git repository."""

    def __init__(self, checkout: Path | None, git: Path | None, tag: str) -> None:
        self.checkout, self.git, self.tag = checkout, git, tag

    def read(self, path: str) -> str:
        if self.checkout is not None:
            return (self.checkout / path).read_text()
        result = subprocess.run(
            ["git", "-C", str(self.git), "show", f"{self.tag}:{path}"],
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout


def storm_table(source: Source) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{key: (where Storm declares it, checks)} over Config, DaemonConfig and defaults.yaml."""
    resolve: dict[str, str] = {}
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for origin, path in (("Config", CONFIG), ("DaemonConfig", DAEMON_CONFIG)):
        for key, checks in declared_keys(source.read(path), resolve, origin).items():
            if key in table:  # DaemonConfig re-declares a Config key with a daemon-side check
                where, before = table[key]
                table[key] = (where, before + tuple(c for c in checks if c not in before))
            else:
                table[key] = (origin, tuple(checks))
    for key in yaml.safe_load(source.read(DEFAULTS)):
        table.setdefault(key, ("defaults.yaml", ()))
    return dict(sorted(table.items()))


def render_module(table: dict[str, tuple[str, tuple[str, ...]]], tag: str) -> str:
    lines = [
        "# ruff: noqa: E501",
        f'"""Apache Storm {tag}\'s configuration keys and the validators Storm runs on each.',
        "",
        "GENERATED by tools/storm_keys.py from Storm's Config.java, DaemonConfig.java and",
        "conf/defaults.yaml: do not edit; run the script again. Each key maps to where Storm",
        "declares it and its checks, named as in squall/storm_checks.py (in Storm's order).",
        '"""',
        "",
        f'STORM_TAG = "{tag}"',
        "",
        "# fmt: off",
        "KEYS: dict[str, tuple[str, tuple[str, ...]]] = {",
    ]
    for key, (where, checks) in table.items():
        inner = ", ".join(f'"{c}"' for c in checks) + ("," if len(checks) == 1 else "")
        lines.append(f'    "{key}": ("{where}", ({inner})),')
    lines += ["}", "# fmt: on"]
    return "\n".join(lines) + "\n"


# Why squall accepts and ignores a group of Storm keys: the longest matching prefix wins.
_JVM = "no JVM: squall's daemons and workers are Python processes"
REASONS = (
    ("", "Storm key squall does not implement"),
    ("drpc.", "squall has no DRPC server"),
    ("pacemaker.", "no Pacemaker: heartbeats go to ZooKeeper"),
    ("logviewer.", "no logviewer daemon: worker logs are files under storm.local.dir"),
    ("ui.", "squall's UI implements only ui.host, ui.port and ui.users"),
    ("storm.messaging.", "workers talk ZeroMQ (with CURVE when security is on), not Netty"),
    ("storm.zookeeper.", "ZooKeeper client settings squall does not use"),
    ("storm.blobstore.", "the blobstore lives in nimbus's SQL store"),
    ("nimbus.blobstore.", "the blobstore lives in nimbus's SQL store"),
    ("blobstore.", "the blobstore lives in nimbus's SQL store"),
    ("supervisor.blobstore.", "the blobstore lives in nimbus's SQL store"),
    ("topology.blobstore.", "the blobstore lives in nimbus's SQL store"),
    ("blacklist.", "no blacklist scheduler"),
    ("resource.aware.scheduler.", "squall's scheduler takes only the user pools"),
    ("topology.kryo.", _KRYO := "no Kryo: tuples are Python values (msgpack between workers)"),
    ("topology.fall.back.on.java.serialization", _KRYO),
    ("topology.skip.missing.kryo.registrations", _KRYO),
    ("topology.tuple.serializer", _KRYO),
    ("storm.oci.", "no OCI containers: workers are plain processes"),
    ("storm.cgroup.", _CG := "squall makes workers' cgroups itself (no cgexec, cpuset, plugin)"),
    ("storm.resource.isolation.", _CG),
    ("worker.profiler.", "profiling is squall's own sampler"),
    ("storm.metrics.", "metrics reach nimbus through ZooKeeper heartbeats and /metrics"),
    ("topology.metrics.", "metrics reach nimbus through ZooKeeper heartbeats and /metrics"),
    ("storm.daemon.metrics.", "metrics reach nimbus through ZooKeeper heartbeats and /metrics"),
    ("nimbus.impersonation.", "no impersonation: clients act as their certificate's name"),
    ("storm.principal.tolocal", "principals are client certificate names"),
    ("java.library.path", _JVM),
    ("nimbus.thrift.tls.", _TLS := "nimbus's one Thrift port is TLS with client certificates"),
    ("nimbus.thrift.client.use.tls", _TLS),
    ("nimbus.thrift.transport", _TLS),
    ("storm.thrift.", _TLS),
    ("topology.worker.nimbus.thrift.client.use.tls", _TLS),
    ("supervisor.thrift.", "supervisors have no Thrift server: they take work from ZooKeeper"),
    ("supervisor.worker.version.", "one squall version: workers run the supervisor's"),
    ("supervisor.worker.default.version", "one squall version: workers run the supervisor's"),
    ("supervisor.localizer.", "the blobstore lives in nimbus's SQL store"),
    ("topology.spout.wait.", _WAIT := "no pluggable wait strategies: executors wait on queues"),
    ("topology.bolt.wait.", _WAIT),
    ("topology.backpressure.wait.", _WAIT),
    ("topology.sleep.spout.wait.", _WAIT),
    ("topology.bolts.", "no windowed bolts"),
    ("topology.state.", "no stateful bolts or checkpoints"),
    ("topology.trident.", _TRIDENT := "no Trident or transactional topologies"),
    ("topology.transactional.", _TRIDENT),
    ("transactional.", _TRIDENT),
    ("topology.ras.", _SCHEDULER := "squall's own scheduler (slots, or memory and CPU)"),
    ("topology.scheduler.", _SCHEDULER),
    ("scheduler.", _SCHEDULER),
    ("scheduling.", _SCHEDULER),
    ("isolation.scheduler.", _SCHEDULER),
    ("multitenant.scheduler.", _SCHEDULER),
    ("storm.scheduler", _SCHEDULER),
    ("nimbus.scheduler.", _SCHEDULER),
    ("topology.isolate.machines", _SCHEDULER),
    ("topology.spread.components", _SCHEDULER),
    ("topology.acker.", _SCHEDULER),
    ("storm.metricstore.", "metrics reach nimbus through ZooKeeper heartbeats and /metrics"),
    ("storm.metricprocessor.", "metrics reach nimbus through ZooKeeper heartbeats and /metrics"),
    ("topology.eventlogger.", "no event logger"),
    ("topology.event.logger.", "no event logger"),
    ("storm.supervisor.", "supervisors cap workers by supervisor.worker.max.memory.mb"),
    ("storm.hdfs.", "no HDFS"),
    ("blobstore.hdfs.", "no HDFS"),
    ("topology.classpath", _JVM),
    ("storm.topology.classpath", _JVM),
    ("storm.log4j2.", "workers log with Python's logging"),
    ("topology.logging.", "workers log with Python's logging"),
    ("storm.auth.", _AUTH := "security is TLS client certificates and ACL keys (SECURITY.md)"),
    ("nimbus.autocredential.", _AUTH),
    ("nimbus.credential.", _AUTH),
    ("topology.autocredentials", _AUTH),
    ("storm.doAsUser", _AUTH),
    ("nimbus.daemon.user", _AUTH),
    ("supervisor.authorizer", _AUTH),
    ("storm.cluster.mode", "squall always runs as a cluster (squall local starts a small one)"),
    ("storm.local.mode.", "squall always runs as a cluster (squall local starts a small one)"),
)
_CHILDOPTS = _JVM
_HEAP = "no JVM heap: a worker's resident memory is capped (topology.worker.max.memory.mb)"


def reason(key: str) -> str:
    """Why squall ignores `key`, for the docs' grouping."""
    if "childopts" in key or "gc.opts" in key or ".jvm." in key:
        return _CHILDOPTS
    if ".heap." in key:
        return _HEAP
    best = max((p for p, _ in REASONS if key.startswith(p)), key=len)
    return dict(REASONS)[best]


def render_docs(table: dict[str, tuple[str, tuple[str, ...]]], squall_keys: set[str], tag: str):
    implemented = [k for k in table if k in squall_keys]
    ignored = [k for k in table if k not in squall_keys]
    own = sorted(squall_keys - set(table))
    lines = [
        f"# Storm {tag} configuration keys in squall",
        "",
        "GENERATED by `tools/storm_keys.py` from Storm's Config.java, DaemonConfig.java and",
        "conf/defaults.yaml and squall's conf/defaults.yaml: do not edit; run the script again.",
        "See [storm-compatibility.md](storm-compatibility.md#configuration) for the rules.",
        "",
        f"## Implemented ({len(implemented)})",
        "",
        "Checked as squall's conf/defaults.yaml types them and used.",
        "",
        *[f"- `{k}`" for k in implemented],
        "",
        f"## Accepted and ignored ({len(ignored)})",
        "",
        "Type-checked as Storm's validators do (a wrong type is refused), then ignored, and",
        "named once in the log where the conf is loaded. Grouped by the reason.",
        "",
    ]
    groups: dict[str, list[str]] = {}
    for key in ignored:
        groups.setdefault(reason(key), []).append(key)
    for why, keys in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines += [f"### {why} ({len(keys)})", "", *[f"- `{k}`" for k in keys], ""]
    lines += [
        f"## squall's own keys ({len(own)})",
        "",
        "Keys squall adds that Storm does not have (conf/defaults.yaml says what each does).",
        "",
        *[f"- `{k}`" for k in own],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkout", type=Path, help="a Storm source checkout")
    where.add_argument("--git", type=Path, default=Path(DEFAULT_GIT), help="a Storm git dir")
    parser.add_argument("--tag", default="v2.8.8")
    parser.add_argument("--module", type=Path, default=REPO / "squall" / "storm_keys.py")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "configuration-storm-keys.md")
    parser.add_argument(
        "--squall-defaults", type=Path, default=REPO / "conf" / "defaults.yaml", help="squall's"
    )
    args = parser.parse_args(argv)
    table = storm_table(Source(args.checkout, None if args.checkout else args.git, args.tag))
    squall_keys = set(yaml.safe_load(args.squall_defaults.read_text()))
    args.module.write_text(render_module(table, args.tag))
    args.docs.parent.mkdir(parents=True, exist_ok=True)
    args.docs.write_text(render_docs(table, squall_keys, args.tag))
    print(f"{len(table)} Storm keys -> {args.module}, {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
