"""The size of nimbus's largest ZooKeeper request for one topology, known before it is made.

ZooKeeper closes the connection of a client whose request exceeds jute.maxbuffer (1 MiB by
default); kazoo reconnects and sends the same request again, until nimbus's session expires
and the process exits (10,000 tasks did it). The biggest requests are one topology's: the
create transaction (its base, one /tasks child per task, its assignment, its CURVE keys) and
a rebalance's /tasks rewrite (a delete per old task and a create per new one). Their size
depends only on names and counts, so the decision estimates it, with room to spare, and
refuses a topology whose writes would not fit, instead of writing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from squall.records import StormBase, encode
from squall.zk.layout import ZkLayout

JUTE_MAX_BUFFER = 1024 * 1024  # ZooKeeper's default jute.maxbuffer
# Three quarters of it: jute framing beyond these estimates, and ACL lists longer than the two
# entries counted per node, must still fit.
BUDGET = JUTE_MAX_BUFFER * 3 // 4

_OP_HEADER = 4 + 1 + 4  # a multi request's per-op header: type, done, err
_ACL = 4 + (4 + 8) + (4 + 44)  # perms, scheme ("digest"), id ("user:" + base64 of a sha1)
_MAX_PORT = 65535
_MAX_SECS = 9_999_999_999
_KEYS = len('{"public": "", "secret": ""}') + 2 * 40  # squall.security.topology_keys.encode_keys


def _string(text: str) -> int:
    return 4 + len(text.encode())


def create_op(path: str, data_bytes: int) -> int:
    return _OP_HEADER + _string(path) + 4 + data_bytes + 4 + 2 * _ACL + 4


def delete_op(path: str) -> int:
    return _OP_HEADER + _string(path) + 4


def assignment_bound(task_ids: Iterable[int], node_ids: Iterable[str], code_dir: str) -> int:
    """An upper bound of the encoded /assignments record: every task on the longest node id,
    with the largest port and start time."""
    nodes = list(node_ids) or [""]
    longest = max(len(n.encode()) for n in nodes)
    per_task = [len(f'"{t}":["{"x" * longest}",{_MAX_PORT}],"{t}":{_MAX_SECS},') for t in task_ids]
    hosts = sum(2 * len(n.encode()) + 8 for n in nodes)  # host names no longer than ids: 255
    return 200 + len(code_dir.encode()) + sum(per_task) + hosts + 255 * len(nodes)


def topology_write_bytes(
    root: str,
    topology_id: str,
    base: StormBase,
    tasks: Mapping[int, str],
    node_ids: Iterable[str],
    old_task_ids: Iterable[int] = (),
) -> int:
    """The larger of the create transaction and a /tasks rewrite replacing `old_task_ids`
    (written with the assignment that uses the new ids, in one transaction)."""
    lay = ZkLayout(root)
    creates = sum(create_op(lay.task(topology_id, t), len(c.encode())) for t, c in tasks.items())
    deletes = sum(delete_op(lay.task(topology_id, t)) for t in old_task_ids)
    assignment = assignment_bound(tasks, node_ids, topology_id)
    created = (
        create_op(lay.credentials(topology_id), _KEYS)  # counted with security off too
        + create_op(lay.storm(topology_id), len(encode(base)))
        + create_op(lay.tasks(topology_id), 0)
        + creates
        + create_op(lay.taskbeats(topology_id), 0)
        + create_op(lay.errors(topology_id), 0)
        + create_op(lay.assignment(topology_id), assignment)
    )
    rewrite = deletes + creates + create_op(lay.assignment(topology_id), assignment)
    return max(created, rewrite)
