"""A Nimbus Thrift client (framed transport, binary protocol: what Storm clients use), with
chunked upload and download of code packages.

With security on (the default) the client speaks TLS, trusts only the cluster CA, checks
nimbus's host name and presents the certificate of its identity: `identity`, or the conf's
security.user (supervisors pass "supervisor"). In open mode it speaks plain Thrift."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport.framed import TFramedTransportFactory

from squall import thrift_api as T
from squall.security.certificate_check import TlsRefusedError, describe, tls_failure
from squall.security.certificates import ADMIN, CA, credential_paths
from squall.security.tls import client_context
from squall.staleness import ZOOKEEPER_UNREACHABLE
from squall.zk.identity import replace_file

UPLOAD_CHUNK_BYTES = 300 * 1024  # what Storm clients send
log = logging.getLogger("squall.client")


class NoLeaderError(ConnectionError):
    """No nimbus in nimbus.seeds answered with a leader."""


def seed_addresses(conf: dict[str, Any]) -> list[tuple[str, int]]:
    """nimbus.seeds entries are hosts (port: nimbus.thrift.port) or host:port."""
    out = []
    for seed in conf["nimbus.seeds"]:
        host, sep, port = str(seed).rpartition(":")
        out.append(
            (host, int(port)) if sep and port.isdigit() else (str(seed), conf["nimbus.thrift.port"])
        )
    return out


def nimbus_address(
    conf: dict[str, Any], timeout_secs: float = 10, identity: str | None = None
) -> tuple[str, int]:
    """The leader's address, asked of the seeds in turn (Storm's NimbusClient does the same);
    any nimbus answers getLeader, standbys included. A TLS failure with any seed is raised
    as what it is (TlsRefusedError), not as "no leader". While ZooKeeper is unreachable a
    nimbus names the last leader it knew; one that knows none but answered is returned
    itself (a standby: its reads answer what it last read, marked stale; it refuses writes)."""
    context = client_context(conf, identity)  # a certificate that cannot work: one clear error
    problems, refusals, answered = [], [], []
    for host, port in seed_addresses(conf):
        try:
            with _connect(host, port, timeout_secs, context) as client:
                leader = client.getLeader()
            return leader.host, leader.port
        except T.AuthorizationException:
            raise  # the same answer from every seed: say so, not "no leader"
        except Exception as exc:  # noqa: BLE001 - try the next seed
            log.debug("nimbus at %s:%d: %r", host, port, exc, exc_info=True)
            if ZOOKEEPER_UNREACHABLE in str(exc):  # a nimbus that answered: it knows no leader
                answered.append((host, port))
            refusal = None if context is None else _tls_failure(conf, identity, host, port, exc)
            if refusal is not None:
                refusals.append(refusal)
            problems.append(f"{host}:{port}: {exc or type(exc).__name__}")
    if answered:
        log.warning("no nimbus leader known (%s): asking %s:%d", "; ".join(problems), *answered[0])
        return answered[0]
    if refusals:
        raise TlsRefusedError("; ".join(refusals))
    raise NoLeaderError("no nimbus leader found (" + "; ".join(problems) + ")")


def _tls_failure(
    conf: dict[str, Any], identity: str | None, host: str, port: int, exc: Exception
) -> str | None:
    name = identity or conf.get("security.user") or ADMIN
    ca = credential_paths(conf, CA)[0]
    refusal = tls_failure(exc, f"{host}:{port}", name, ca)
    if refusal is not None:  # -v: what this side presented and trusts
        log.debug("your certificate: %s", describe(credential_paths(conf, name)[0]))
        log.debug("your trusted CA: %s", describe(ca))
    return refusal


@contextmanager
def nimbus_client(
    host: str,
    port: int,
    timeout_secs: float = 120,
    *,
    conf: dict[str, Any] | None = None,
    identity: str | None = None,
) -> Iterator[Any]:
    """A client of the nimbus at host:port, secured as `conf` says (None: the cluster conf
    from $SQUALL_CONF or the defaults, so secure unless configured otherwise)."""
    if conf is None:
        from squall.config import cluster_conf

        conf = cluster_conf()
    with _connect(host, port, timeout_secs, client_context(conf, identity)) as client:
        yield client


@contextmanager
def _connect(host: str, port: int, timeout_secs: float, context: Any) -> Iterator[Any]:
    client = make_client(
        T.Nimbus,
        host,
        port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=int(timeout_secs * 1000),
        ssl_context=context,
    )
    try:
        yield client
    finally:
        client.close()


def upload(client: Any, data: bytes, progress: Callable[[int], None] | None = None) -> str:
    location = client.beginFileUpload()
    for start in range(0, len(data), UPLOAD_CHUNK_BYTES):
        chunk = data[start : start + UPLOAD_CHUNK_BYTES]
        client.uploadChunk(location, chunk)
        if progress:
            progress(len(chunk))
    client.finishFileUpload(location)
    return location


def _chunks(client: Any, name: str) -> Iterator[bytes]:
    download_id = client.beginFileDownload(name)
    while chunk := client.downloadChunk(download_id):
        yield chunk


def fetch(client: Any, name: str) -> bytes:
    """Nimbus's file `name` (a small one: a topology's conf) in memory."""
    return b"".join(_chunks(client, name))


def download(client: Any, name: str, dest: Path) -> None:
    """Nimbus's file `name` into `dest`, replaced whole (zk_identity.replace_file)."""
    replace_file(dest, _chunks(client, name))


def upload_blob(client: Any, session: str, chunks: Iterable[bytes]) -> int:
    """Send a blob's bytes in an upload session begun by beginCreateBlob/beginUpdateBlob and
    finish it; any failure cancels the session, so nimbus keeps no half blob (Storm's
    AtomicOutputStream.cancel). Returns the bytes sent."""
    sent = 0
    try:
        for chunk in chunks:
            for start in range(0, len(chunk), UPLOAD_CHUNK_BYTES):
                client.uploadBlobChunk(session, chunk[start : start + UPLOAD_CHUNK_BYTES])
            sent += len(chunk)
        client.finishBlobUpload(session)
    except BaseException:
        with suppress(Exception):
            client.cancelBlobUpload(session)
        raise
    return sent


def blob_chunks(client: Any, key: str) -> Iterator[bytes]:
    """A blob's bytes as nimbus sends them (beginBlobDownload, then chunks until empty)."""
    session = client.beginBlobDownload(key).session
    while chunk := client.downloadBlobChunk(session):
        yield chunk


def blob_keys(client: Any) -> Iterator[str]:
    """Every blob key the caller may see, page by page (listBlobs' session is its cursor)."""
    session = ""
    while True:
        page = client.listBlobs(session)
        if not page.keys:
            return
        yield from page.keys
        session = page.session
