"""Submitting a topology file: load it, check it, pack its directory, upload, submit.

Everything nimbus would refuse about the topology itself is checked here first, with the same
validation code, so a bad topology costs no upload and leaves nothing behind; nimbus checks it
all again, since a client need not be this one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from squall import thrift_api as T
from squall.client import upload
from squall.code_package import pack_directory
from squall.topology import Topology, load_topology_file
from squall.validation import (
    check_name_free,
    check_topology_name,
    json_text,
    validate_topology,
    validate_topology_conf,
)


def checked(topology: type[Topology], name: str, conf: dict[str, Any]) -> tuple[Any, str]:
    """The StormTopology and JSON conf to send, or InvalidTopologyException naming the
    problem (never a TypeError from json or thrift after the upload)."""
    check_topology_name(name)
    for component, spec in sorted(topology.specs.items()):
        json_text(spec.kwargs, f"component {component!r}: kwargs")
        json_text(spec.config, f"component {component!r}: conf")
    json_conf = json_text(conf, "topology conf")
    thrift = topology.to_thrift()
    validate_topology(thrift)
    validate_topology_conf(json_conf)
    return thrift, json_conf


def submit_file(
    client: Any,
    path: str | Path,
    conf: dict[str, Any],
    name: str | None = None,
    overrides: dict[str, Any] | None = None,
    inactive: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Submit the topology defined in `path`; returns the topology name."""
    path = Path(path).resolve()
    topology = load_topology_file(path)
    topology_name = name or topology.name or path.stem
    thrift, json_conf = checked(topology, topology_name, {**topology.config, **(overrides or {})})
    running = client.getClusterInfo().topologies or []
    check_name_free(topology_name, [(t.name, t.id) for t in running])
    package = pack_directory(path.parent, conf["nimbus.upload.max.bytes"])
    sent = 0

    def chunk_done(size: int) -> None:
        nonlocal sent
        sent += size
        if progress:
            progress(sent, len(package))

    location = upload(client, package, chunk_done)
    status = T.TopologyInitialStatus.INACTIVE if inactive else T.TopologyInitialStatus.ACTIVE
    client.submitTopologyWithOpts(
        topology_name,
        location,
        json_conf,
        thrift,
        T.SubmitOptions(initial_status=status),
    )
    return topology_name
