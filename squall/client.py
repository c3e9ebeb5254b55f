"""A Nimbus Thrift client (framed transport, binary protocol: what Storm clients use), with
chunked upload and download of code packages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport.framed import TFramedTransportFactory

from squall import thrift_api as T

UPLOAD_CHUNK_BYTES = 300 * 1024  # what Storm clients send


def nimbus_address(conf: dict[str, Any]) -> tuple[str, int]:
    return conf["nimbus.seeds"][0], conf["nimbus.thrift.port"]


@contextmanager
def nimbus_client(host: str, port: int, timeout_secs: float = 120) -> Iterator[Any]:
    client = make_client(
        T.Nimbus,
        host,
        port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=int(timeout_secs * 1000),
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


def download(client: Any, name: str, dest: Path) -> None:
    download_id = client.beginFileDownload(name)
    tmp = dest.with_suffix(dest.suffix + ".part")
    with tmp.open("wb") as f:
        while chunk := client.downloadChunk(download_id):
            f.write(chunk)
    tmp.replace(dest)
