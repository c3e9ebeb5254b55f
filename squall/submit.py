"""Submitting a topology file: load it, pack its directory, upload, submit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from squall import thrift_api as T
from squall.client import upload
from squall.code_package import pack_directory
from squall.topology import load_topology_file


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
    package = pack_directory(path.parent, conf["nimbus.upload.max.bytes"])
    sent = 0

    def chunk_done(size: int) -> None:
        nonlocal sent
        sent += size
        if progress:
            progress(sent, len(package))

    location = upload(client, package, chunk_done)
    topology_conf = {**topology.config, **(overrides or {})}
    status = T.TopologyInitialStatus.INACTIVE if inactive else T.TopologyInitialStatus.ACTIVE
    client.submitTopologyWithOpts(
        topology_name,
        location,
        json.dumps(topology_conf),
        topology.to_thrift(),
        T.SubmitOptions(initial_status=status),
    )
    return topology_name
