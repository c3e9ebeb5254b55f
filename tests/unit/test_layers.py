"""The layering, read from the source (an AST scan of every import, lazy ones too; nothing is
imported or run): which package may import which, so the design is visible and a change
that breaks it fails here.

- The three daemons (squall.nimbus, squall.supervisor, squall.worker) never import each
  other: they meet only through ZooKeeper, Thrift and the files the supervisor writes.
- The public API and shared code (squall's top level, squall.recipes, squall.ui) imports no
  daemon module, except the entry points in ALLOWED: the CLI starts daemons, LocalCluster
  runs them in one process, squall.testing runs a worker's executors in this process
  (through squall.worker.in_process alone), and shell components run the worker's multilang
  subprocess.
- The pure decision cores (nimbus's decide and its state machine, the worker's tracking
  machines and outbox) import no I/O, not even through the modules they import: no
  database, ZooKeeper client, sockets, ZeroMQ, subprocesses, threads or HTTP; nimbus's
  decide never reaches its store.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the checkout's folders and the packages they become (pyproject's package-dir)
PACKAGES = {
    "squall": "squall",
    "nimbus": "squall.nimbus",
    "supervisor": "squall.supervisor",
    "worker": "squall.worker",
}
DAEMONS = ("squall.nimbus", "squall.supervisor", "squall.worker")

# What the public API may import from the daemons, and why (module -> daemon modules).
ALLOWED: dict[str, set[str]] = {
    # the CLI starts the daemons, and runs a supervisor's node health checks once
    "squall.commands.daemons": {
        "squall.nimbus.daemon",
        "squall.supervisor.daemon",
        "squall.supervisor.health_check",
        "squall.supervisor.identity",
    },
    "squall.commands.spark": {"squall.supervisor.spark_server"},
    # LocalCluster runs the daemons in this process and ends a stale Spark server first
    "squall.local": {"squall.supervisor.spark_server"},
    # the proxy answers a plain-text call to a TLS port as nimbus does
    "squall.proxy": {"squall.nimbus.rpc.tls_refusal"},
    # the in-process runner runs a worker's executors, through the worker's one entry point
    "squall.testing": {"squall.worker.in_process"},
    # ShellBolt and ShellSpout run the worker's multilang subprocess and protocol
    "squall.shell_components": {
        "squall.worker",
        "squall.worker.multilang_exchanges",
        "squall.worker.multilang_process",
        "squall.worker.multilang_protocol",
        "squall.worker.multilang_task",
    },
}

IO = {"sqlalchemy", "kazoo", "socket", "zmq", "subprocess", "threading", "requests", "http"}
PURE: dict[str, set[str]] = {  # module -> what it must not reach, directly or not
    "squall.nimbus.core.decide": IO | {"squall.nimbus.store"},
    "squall.nimbus.core.states": IO,
    "squall.nimbus.core.events": IO | {"squall.nimbus.store"},
    "squall.nimbus.core.instructions": IO | {"squall.nimbus.store"},
    "squall.nimbus.core.coordinator_log": IO | {"squall.nimbus.store"},
    "squall.worker.acker": IO,
    "squall.worker.anchoring": IO,
    "squall.worker.spout_tracking": IO,
    "squall.worker.micro_batches": IO,
}


@cache
def modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts]
            found[".".join([package, *(p for p in parts if p != "__init__")])] = path
    return found


@cache
def imports(module: str) -> frozenset[str]:
    """Every module `module` names in an import statement (a `from m import x` names m,
    and m.x where that is a module of the project)."""
    path = modules()[module]
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in _run_time_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            names |= {f"{source}.{a.name}" for a in node.names} & modules().keys()
    return frozenset(names)


def _run_time_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imported for the type checker only,
    never run)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def reached(module: str) -> set[str]:
    """What `module` imports, and what those import, within the project and one step out."""
    seen, todo = set(), [module]
    while todo:
        for name in imports(todo.pop()):
            if name not in seen:
                seen.add(name)
                if name in modules():
                    todo.append(name)
    return seen


def names(imported: set[str], forbidden: set[str]) -> set[str]:
    return {i for i in imported for f in forbidden if i == f or i.startswith(f + ".")}


def test_the_scan_sees_the_project():
    assert {
        "squall.nimbus.core.decide",
        "squall.worker.outbox",
        "squall.testing",
    } <= modules().keys()
    assert "squall.nimbus.core.coordinator_log" in imports("squall.nimbus.core.decide")
    assert "squall.worker.outbox" in imports("squall.worker.emitting")  # a relative import


def test_the_daemons_never_import_each_other():
    crossings = {
        (module, imported)
        for module in modules()
        for daemon in DAEMONS
        if module.startswith(daemon + ".") or module == daemon
        for imported in names(set(imports(module)), set(DAEMONS) - {daemon})
    }
    assert crossings == set()


def test_the_public_api_imports_no_daemon_module_beyond_its_allow_list():
    public = [m for m in modules() if not m.startswith(DAEMONS)]
    crossings = {
        (module, imported)
        for module in public
        for imported in names(set(imports(module)), set(DAEMONS))
        if imported not in ALLOWED.get(module, set())
    }
    assert crossings == set()


def test_the_allow_list_has_no_stale_entry():
    stale = {(m, i) for m, allowed in ALLOWED.items() for i in allowed if i not in imports(m)}
    assert stale == set()


def test_the_pure_cores_reach_no_io():
    reaching = {
        module: sorted(names(reached(module), forbidden)) for module, forbidden in PURE.items()
    }
    assert {m: r for m, r in reaching.items() if r} == {}
