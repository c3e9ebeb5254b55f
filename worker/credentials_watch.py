"""The worker's shell for Storm's uploadNewCredentials: reads /usercredentials/<topology-id>
(squall.security.user_credentials; nimbus/rpc/credential_calls.py writes it) and hands the map
to every component of this worker that has a `set_credentials(creds)` method (Storm's
ICredentialsListener.setCredentials).

As in Storm, a component gets the credentials there are before its initialize runs (`initial`,
called before the executors start); later uploads reach it from ZooKeeper's watch thread,
while its task may be running: a component guards what set_credentials changes. A failing
set_credentials is logged and changes nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from squall.security import user_credentials as uc

log = logging.getLogger("squall.worker")


class CredentialsWatch:
    def __init__(self, zk: KazooClient, path: str, components: Callable[[], Iterable[Any]]):
        self.zk = zk
        self.path = path
        self.components = components
        self.last: dict[str, str] | None = None
        self.closed = False

    def initial(self) -> None:
        try:
            data, _ = self.zk.get(self.path)
        except NoNodeError:
            return
        self._hand(data)

    def start(self) -> None:
        self.zk.DataWatch(self.path)(self._changed)

    def _changed(self, data: bytes | None, _stat: Any, _event: Any = None) -> bool | None:
        if self.closed:
            return False
        if data is not None:
            self._hand(data)
        return None

    def _hand(self, data: bytes) -> None:
        try:
            creds = uc.decode(data, self.path)
        except uc.CredentialsError as exc:
            log.warning("ignoring %s", exc)
            return
        if creds == self.last:
            return
        self.last = creds
        listeners = [c for c in self.components() if callable(getattr(c, "set_credentials", None))]
        for component in listeners:
            try:
                component.set_credentials(dict(creds))
            except Exception:  # noqa: BLE001 - user code
                log.exception("set_credentials of %s failed", type(component).__name__)
        log.info("credentials (%d keys) handed to %d components", len(creds), len(listeners))

    def close(self) -> None:
        self.closed = True
