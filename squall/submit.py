"""Submitting a topology file: load it, check it, pack its directory, upload, submit.

Everything nimbus would refuse about the topology itself is checked here first, with the same
validation code, so a bad topology costs no upload and leaves nothing behind; nimbus checks it
all again, since a client need not be this one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall import thrift_api as T
from squall.client import upload
from squall.code_package import pack_directory, package_files
from squall.config import log_review
from squall.topology import Topology, load_topology_file
from squall.validation import (
    check_name_free,
    check_topology_name,
    conf_reviews,
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


LARGE_PACKAGE_BYTES = 50 * 1024 * 1024  # a package above this is worth a word before upload
_LARGEST_NAMED = 3


@dataclass(frozen=True)
class Packed:
    """What a submit of a topology file would send: its name, the files of its directory
    that are packed (relative path, bytes) and the package's size."""

    name: str
    directory: Path
    files: tuple[tuple[str, int], ...]
    package: bytes


def prepare(
    path: str | Path,
    conf: dict[str, Any],
    name: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> tuple[Packed, Any, str]:
    """The topology in `path` loaded, checked and packed, without a word to nimbus: the
    package, and the StormTopology and JSON conf to submit with it."""
    path = Path(path).resolve()
    topology = load_topology_file(path)
    topology_name = name or topology.name or path.stem
    thrift, json_conf = checked(topology, topology_name, {**topology.config, **(overrides or {})})
    for found in conf_reviews(topology_name, thrift, json_conf):  # keys accepted, not used
        log_review(found, once=False)
    files = tuple(package_files(path.parent))
    package = pack_directory(path.parent, conf["nimbus.upload.max.bytes"])
    return Packed(topology_name, path.parent, files, package), thrift, json_conf


def size_warning(packed: Packed, limit: int = LARGE_PACKAGE_BYTES) -> str | None:
    """A warning naming the largest files when the package is above `limit`: a stray data
    file in the topology's directory is uploaded and copied to every worker host."""
    if len(packed.package) <= limit:
        return None
    largest = sorted(packed.files, key=lambda f: -f[1])[:_LARGEST_NAMED]
    named = ", ".join(f"{rel} ({size / 1e6:.1f} MB)" for rel, size in largest)
    return (
        f"the code package of {packed.name} is {len(packed.package) / 1e6:.1f} MB "
        f"(everything in {packed.directory} is packed; largest: {named}); keep data out of "
        "the topology's directory, or see what is packed with --dry-run"
    )


def submit_file(
    client: Any,
    path: str | Path,
    conf: dict[str, Any],
    name: str | None = None,
    overrides: dict[str, Any] | None = None,
    inactive: bool = False,
    progress: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """Submit the topology defined in `path`; returns the topology name. `warn` hears of
    a package above LARGE_PACKAGE_BYTES before it is uploaded."""
    packed, thrift, json_conf = prepare(path, conf, name, overrides)
    topology_name, package = packed.name, packed.package
    running = client.getClusterInfo().topologies or []
    check_name_free(topology_name, [(t.name, t.id) for t in running])
    warning = size_warning(packed)
    if warning and warn:
        warn(warning)
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
