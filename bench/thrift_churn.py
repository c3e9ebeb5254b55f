"""Nimbus's memory under connection churn (issue 36 item 6): connect-and-close cycles raised
nimbus's RSS by 315 MB, and it stayed. Starts a local secure cluster (one nimbus, no
supervisors), measures nimbus's RSS from /proc, runs --cycles cycles of each --kind from
--threads threads, waits for nimbus's connection count to settle, and measures again, and
once more after QUIET_SECS (nimbus reclaims churn that stopped once things are quiet):

- tcp: connect and close, nothing sent (a port scan, a health check)
- hello: connect, send half a TLS ClientHello, close (a stranger leaving mid-handshake)
- tls: a full TLS handshake with a valid client certificate, then close
- plain: a plain (non-TLS) Thrift call, answered with a refusal, then close

    .venv/bin/python bench/thrift_churn.py --cycles 20000 --kind tcp hello tls
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import socket
import ssl
import struct
import tempfile
import time
from pathlib import Path

from squall.local import LocalCluster
from squall.security.tls import client_context

QUIET_SECS = 15
HELLO_HALF = bytes.fromhex("160301020001") + b"\x00" * 64  # a TLS record promising more


def memory_mb(pid: int) -> dict[str, float]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = round(int(value.split()[0]) / 1024, 1)
    return found


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def plain_call() -> bytes:
    name = b"getClusterInfo"
    body = struct.pack("!I", 0x80010001) + struct.pack("!i", len(name)) + name
    body += struct.pack("!i", 1) + b"\x00"
    return struct.pack("!i", len(body)) + body


def one(port: int, kind: str, tls: ssl.SSLContext) -> None:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 10) as s:
        if kind == "hello":
            s.sendall(HELLO_HALF)
        elif kind == "plain":
            s.sendall(plain_call())
            s.recv(4096)
        elif kind == "tls":
            with tls.wrap_socket(s, server_hostname="127.0.0.1"):
                pass


def churn(port: int, kind: str, cycles: int, threads: int, tls: ssl.SSLContext) -> float:
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: one(port, kind, tls), range(cycles)))
    return time.monotonic() - start


def settle(pid: int, baseline_fds: int, timeout: float = 60) -> None:
    """Until nimbus holds no more descriptors than before (its connections have ended)."""
    deadline = time.monotonic() + timeout
    while open_fds(pid) > baseline_fds + 2 and time.monotonic() < deadline:
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--kind", nargs="+", default=["tcp", "hello", "tls", "plain"])
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(Path(tmp), supervisors=0) as cluster,
    ):
        pid = cluster.processes["nimbus"].pid
        port = cluster.nimbus_ports[0]
        tls = client_context(cluster.client_conf(), "admin")
        with cluster.client() as client:
            client.getClusterInfo()
        fds = open_fds(pid)
        print(f"start: {memory_mb(pid)}, {fds} fds", flush=True)
        for kind in args.kind:
            before = memory_mb(pid)
            secs = churn(port, kind, args.cycles, args.threads, tls)
            settle(pid, fds)
            after = memory_mb(pid)
            time.sleep(QUIET_SECS)
            quiet = memory_mb(pid)["VmRSS"]
            grew = round(quiet - before["VmRSS"], 1)
            print(
                f"{kind}: {args.cycles} cycles in {secs:.1f} s; RSS {before['VmRSS']} -> "
                f"{after['VmRSS']} MB, {quiet} MB {QUIET_SECS} s later ({grew:+} MB), "
                f"peak {after['VmHWM']} MB, "
                f"{open_fds(pid)} fds",
                flush=True,
            )


if __name__ == "__main__":
    main()
