"""The authenticated path to a Spark Connect server on another host: what both ends of the
tunnel share (its greeting, its TLS contexts, the relay of bytes, and what a failure to get
through means in words).

Why a tunnel: PySpark sends a Connect token without TLS only to `localhost`; to any other
host it forces TLS, with the system's CAs and no client certificate, which a plain Spark
Connect server does not speak (the worker saw WRONG_VERSION_NUMBER and stalled). So the
Spark host runs its Connect server on loopback with a token, and a mutual-TLS listener
(`squall spark connect-server`, squall/spark_tunnel_listener.py) with a server certificate
from the cluster's CA; a worker opens a loopback forwarder (worker/spark_forwarder.py) that
reaches that listener with its host's certificate, and PySpark talks to
`sc://localhost:<forwarder>/`. The network hop is encrypted and both ends are authenticated
by the cluster's CA; the loopback ends by the token.

The token is the listener's to give: after the handshake it greets an admitted client with
one line holding it (an identity it does not admit gets a line saying why, then the end of
the connection). So no host but the Spark host stores it, and no conf names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from pathlib import Path
from typing import Any

from squall.security.certificates import CA, CertificateFilesError, credential_paths

IDENTITY = "spark-connect"  # the listener's server certificate: spark-connect.pem/.key
GREETING = b"squall-spark-connect/1 "
REFUSAL = b"squall-spark-connect/refused "
MAX_LINE = 4096
COPY_BYTES = 64 * 1024
REMOTE = "topology.spark.connect.remote"
CLIENT_IDENTITY = "topology.spark.connect.identity"
TIMEOUT = "topology.spark.connect.timeout.secs"


class SparkUnreachable(ConnectionError):
    """A worker cannot get through to its Spark: the message says where and why."""


def split_address(text: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) as a pair; a ValueError saying what is wrong else."""
    host, sep, port = str(text).strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not host:port")
    return host, int(port)


def greeting(token: str) -> bytes:
    return GREETING + token.encode() + b"\n"


def refusal(reason: str) -> bytes:
    return REFUSAL + " ".join(reason.split()).encode()[: MAX_LINE - 64] + b"\n"


def read_greeting(line: bytes) -> str:
    """The token in the listener's first line; SparkUnreachable with its reason if it
    refused, or if the line is not the tunnel's at all."""
    if line.startswith(REFUSAL):
        reason = line[len(REFUSAL) :].decode(errors="replace").strip()
        raise SparkUnreachable(f"it refused this connection: {reason}")
    if not line.startswith(GREETING) or not line.endswith(b"\n"):
        if not line:
            raise SparkUnreachable(
                "it closed the connection after the TLS handshake: it did not accept this "
                "host's certificate (is it from the cluster's CA, and still valid?)"
            )
        raise SparkUnreachable("it is not `squall spark connect-server`'s TLS port")
    token = line[len(GREETING) :].strip().decode()
    if not token:
        raise SparkUnreachable("its greeting carries no token")
    return token


def _files(conf: dict[str, Any], name: str) -> tuple[Path, Path, Path]:
    pem, key = credential_paths(conf, name)
    ca = credential_paths(conf, CA)[0]
    missing = [str(p) for p in (pem, key, ca) if not p.exists()]
    if missing:
        raise CertificateFilesError(
            f"{', '.join(missing)} missing: the Spark tunnel authenticates with the cluster's "
            f"certificates (identity {name!r} and ca.pem in security.dir); see docs/spark.md"
        )
    return pem, key, ca


def listener_context(conf: dict[str, Any]) -> ssl.SSLContext:
    """The Spark host's side: its spark-connect certificate; a client certificate from the
    cluster's CA required of every connection."""
    pem, key, ca = _files(conf, IDENTITY)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=ca)
    context.load_cert_chain(pem, key)
    return context


def dialer_context(conf: dict[str, Any], identity: str) -> ssl.SSLContext:
    """A worker host's side as `identity`: trusts only the cluster's CA and checks that the
    listener's certificate names the host it dialled."""
    pem, key, ca = _files(conf, identity)
    context = ssl.create_default_context(cafile=str(ca))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(pem, key)
    return context


def explain(exc: BaseException, timeout: float) -> str:
    """What a failure to reach the listener means, in words a user can act on."""
    if isinstance(exc, SparkUnreachable):
        return str(exc)
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"its certificate was not accepted ({exc.verify_message}): it must come from this "
            "cluster's CA and name the host in topology.spark.connect.remote"
        )
    if isinstance(exc, ssl.SSLError):
        reason = exc.reason or str(exc)
        if reason == "WRONG_VERSION_NUMBER":
            return (
                "it does not speak TLS: name the TLS port of `squall spark connect-server`, "
                "not the Spark Connect server's own port"
            )
        if "ALERT" in reason:
            return f"it refused this host's certificate ({reason}): is it from the cluster's CA?"
        return f"the TLS handshake failed ({reason})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return f"no answer within {timeout:g}s"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


async def relay(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Bytes both ways until either side ends; then both are closed."""

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(COPY_BYTES):
            writer.write(data)
            await writer.drain()

    pumps = [asyncio.ensure_future(pump(a[0], b[1])), asyncio.ensure_future(pump(b[0], a[1]))]
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        for _, writer in (a, b):
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
