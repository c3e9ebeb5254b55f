"""The imperative shell of squall.zk.acl's table: a kazoo client that creates every node with
its table ACL, and the repair that gives nodes made before the cluster ran secure theirs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import NoAuthError, NoNodeError
from kazoo.security import ACL

log = logging.getLogger("squall.zk.connection")


class RoleAclClient(KazooClient):
    """A KazooClient whose every create without an explicit ACL takes its ACL from
    `acl_for(path)`: plain creates, makepath's and ensure_path's parents (each its own, not the
    child's), kazoo's recipes (the election's lock nodes) and transactions."""

    def __init__(self, acl_for: Callable[[str], list[ACL]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.acl_for = acl_for

    def create_async(self, path: str, value: bytes = b"", acl: Any = None, **kwargs: Any) -> Any:
        return super().create_async(path, value, acl=acl or self.acl_for(path), **kwargs)

    def ensure_path_async(self, path: str, acl: Any = None) -> Any:
        return super().ensure_path_async(path, acl=None)  # each node's own ACL, from the table

    def transaction(self) -> TransactionRequest:
        return _RoleAclTransaction(self)


class _RoleAclTransaction(TransactionRequest):
    def create(
        self,
        path: str,
        value: bytes = b"",
        acl: Any = None,
        ephemeral: bool = False,
        sequence: bool = False,
    ) -> None:
        super().create(path, value, acl or self.client.acl_for(path), ephemeral, sequence)


def _acl_key(acl: list[ACL]) -> set[tuple[int, str, str]]:
    return {(a.perms, a.id.scheme, a.id.id) for a in acl}


def repair_acls(zk: KazooClient, root: str) -> int:
    """Give every node under `root` its table ACL where it has another: a cluster that ran in
    open mode (or under a shared identity) before keeps no world-writable node once it runs
    secure. Walked only when the root's own ACL is not the table's, and the root is fixed
    last, so a cluster that was always secure pays one read and an interrupted repair is
    resumed at the next start. Returns how many nodes changed."""
    if not isinstance(zk, RoleAclClient) or zk.exists(root) is None:
        return 0
    try:
        if _acl_key(zk.get_acls(root)[0]) == _acl_key(zk.acl_for(root)):
            return 0
    except NoAuthError:
        log.error("cannot read the ACL of %s: it belongs to another identity", root)
        return 0
    changed, refused, todo = 0, [], [root]
    while todo:
        path = todo.pop()
        try:
            todo.extend(f"{path.rstrip('/')}/{child}" for child in zk.get_children(path))
            if path != root and _acl_key(zk.get_acls(path)[0]) != _acl_key(zk.acl_for(path)):
                zk.set_acls(path, zk.acl_for(path))
                changed += 1
        except NoNodeError:
            continue
        except NoAuthError:
            refused.append(path)  # made under another identity (a supervisor, an operator)
    if refused:
        log.warning(
            "%d nodes keep their ACL (not nimbus's to change), e.g. %s", len(refused), refused[0]
        )
    try:
        zk.set_acls(root, zk.acl_for(root))
    except NoAuthError:
        log.error("cannot set the ACL of %s: it belongs to another identity", root)
        return changed
    log.warning("gave %d nodes under %s their table ACLs", changed, root)
    return changed + 1
