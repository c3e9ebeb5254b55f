"""ZooKeeper's multiRead (3.6+, ZOOKEEPER-3402): many getData in one request, which kazoo
does not offer.

Nimbus's monitor round reads every worker's beat. One request per beat cost nimbus about
0.15 ms of CPU each in kazoo's request and response handling, most of a round over
5,000 workers (bench/monitor_round.py); one request per CHUNK beats costs a fraction. The
encoding is that of kazoo's own Transaction (multi), with getData operations. A server
without multiRead answers UnimplementedError, and the caller falls back to one read each.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

from kazoo.client import KazooClient
from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import (
    GetData,
    MultiHeader,
    ZnodeStat,
    int_struct,
    multiheader_struct,
    read_buffer,
    stat_struct,
)

CHUNK = 25  # paths per request: a beat carries about 1 kB per task (window stats), so 25
# beats of workers with up to 20 tasks stay at half of jute.maxbuffer (1 MB)
Result = tuple[bytes, object] | Exception  # (data, ZnodeStat) or the node's own error


class MultiRead(namedtuple("MultiRead", "paths")):
    type = 22

    def serialize(self) -> bytearray:
        b = bytearray()
        for path in self.paths:
            b.extend(MultiHeader(GetData.type, False, -1).serialize())
            b.extend(GetData(path, False).serialize())
        return b + multiheader_struct.pack(-1, True, -1)

    @classmethod
    def deserialize(cls, buffer: bytes, offset: int) -> list[Result]:
        results: list[Result] = []
        header, offset = MultiHeader.deserialize(buffer, offset)
        while not header.done:
            if header.type == GetData.type:
                data, offset = read_buffer(buffer, offset)
                stat = ZnodeStat._make(stat_struct.unpack_from(buffer, offset))
                offset += stat_struct.size
                results.append((data, stat))
            elif header.type == -1:
                err = int_struct.unpack_from(buffer, offset)[0]
                offset += int_struct.size
                results.append(EXCEPTIONS[err]())
            else:
                raise ValueError(f"multiRead answered an operation of type {header.type}")
            header, offset = MultiHeader.deserialize(buffer, offset)
        return results


def get_many(zk: KazooClient, paths: Iterable[str]) -> list[list[Result]]:
    """Send every chunk's request, then wait for them all: one round trip in all. Raises
    what the server answers for the whole request (UnimplementedError before 3.6)."""
    paths = list(paths)
    pending = []
    for start in range(0, len(paths), CHUNK):
        chunk = [_prefix_root(zk.chroot, p) for p in paths[start : start + CHUNK]]
        answer = zk.handler.async_result()
        zk._call(MultiRead(chunk), answer)  # noqa: SLF001 - kazoo's one way to send a request
        pending.append(answer)
    return [answer.get() for answer in pending]
