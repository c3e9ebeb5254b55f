"""Nimbus's memory while blobs are uploaded and downloaded (issue 36 item 3): a finished blob
used to be read whole into nimbus's memory (RSS 1,246 MB after 1,250 MiB of blobs); now its
bytes go from the upload file to the store a 1 MiB row at a time and come back a row or two
per download chunk, so nimbus's RSS should not grow with the blobs' sizes.

Starts a local secure cluster (one nimbus, no supervisors, SQLite store), uploads --blobs
blobs of --mb MB as the admin (exempt from per-user quotas), downloads --downloads of them
back and checks their bytes, and reports nimbus's RSS from /proc: before, after, and its peak
(VmHWM, the kernel's own high-water mark: no sample can miss a spike).

    .venv/bin/python bench/blob_memory.py --blobs 20 --mb 50
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time
from pathlib import Path

from squall import thrift_api as T
from squall.local import LocalCluster

CHUNK = 1000 * 1000  # under nimbus.thrift.max_buffer_size (1 MiB)


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of `pid`, MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found


def blob_bytes(i: int, size: int) -> bytes:
    """Distinct, incompressible-enough bytes per blob, made without holding a second copy."""
    return hashlib.sha256(str(i).encode()).digest() * (size // 32) + b"\0" * (size % 32)


def upload(client, key: str, data: bytes) -> None:
    session = client.beginCreateBlob(key, T.SettableBlobMeta(acl=[]))
    for offset in range(0, len(data), CHUNK):
        client.uploadBlobChunk(session, data[offset : offset + CHUNK])
    client.finishBlobUpload(session)


def download_digest(client, key: str) -> tuple[str, int]:
    begun = client.beginBlobDownload(key)
    digest, size = hashlib.sha256(), 0
    while chunk := client.downloadBlobChunk(begun.session):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blobs", type=int, default=20)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--downloads", type=int, default=3)
    args = parser.parse_args()
    size = args.mb * 1000 * 1000
    conf = {
        "nimbus.blob.max.bytes": size + 1,
        "nimbus.upload.max.bytes": size + 1,
    }
    with (
        tempfile.TemporaryDirectory(prefix="blob-memory-") as tmp,
        LocalCluster(Path(tmp), supervisors=0, conf=conf) as cluster,
    ):
        pid = cluster.processes["nimbus"].pid
        with cluster.client() as admin:
            admin.listBlobs("")  # nimbus warm: connection, TLS and handler set up
            before = memory_mb(pid)
            start = time.monotonic()
            for i in range(args.blobs):
                upload(admin, f"bench-{i}", blob_bytes(i, size))
                if i in (0, args.blobs // 2):
                    print(f"after blob {i + 1}: {memory_mb(pid)}", flush=True)
            uploaded = time.monotonic() - start
            after_upload = memory_mb(pid)
            for i in range(args.downloads):
                digest, got = download_digest(admin, f"bench-{i}")
                expected = hashlib.sha256(blob_bytes(i, size)).hexdigest()
                assert (digest, got) == (expected, size), f"bench-{i} came back different"
            after_download = memory_mb(pid)
        store_mb = sum(p.stat().st_size for p in Path(tmp).rglob("store.db")) / 1e6
    total = args.blobs * size / 1e6
    print(f"{args.blobs} blobs of {args.mb} MB ({total:.0f} MB) uploaded in {uploaded:.1f} s")
    print(f"store file: {store_mb:.0f} MB; {args.downloads} downloaded back byte-exact")
    print(f"nimbus RSS before: {before['VmRSS']:.0f} MB (peak so far {before['VmHWM']:.0f})")
    print(f"nimbus RSS after uploads: {after_upload['VmRSS']:.0f} MB")
    print(f"nimbus RSS after downloads: {after_download['VmRSS']:.0f} MB")
    print(f"nimbus peak RSS (VmHWM): {after_download['VmHWM']:.0f} MB")
    print(f"cpu count {os.cpu_count()}")


if __name__ == "__main__":
    main()
