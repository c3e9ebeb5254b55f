"""Storm's uploadNewCredentials, served for the NimbusHandler (which also stores the
credentials a submit brings, through `checked_submit` and `store`): the map is merged into the
topology's /usercredentials/<topology-id> (squall.security.user_credentials), which its workers
watch and hand to their components (worker/credentials_watch.py). /credentials/<topology-id>, the
topology's CURVE keys, is never touched, and no Thrift call reads credentials back.

As Storm's nimbus: an unknown name is NotAliveException, the caller must be allowed the
topology command uploadNewCredentials (its submitter, topology.users, admins), credentials
made out for another owner are an AuthorizationException. Only the leader stores them;
merges are serialized by a lock and fenced by the epoch.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kazoo.exceptions import NoNodeError

from squall import thrift_api as T
from squall.nimbus.controller import Controller
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op
from squall.security import user_credentials as uc
from squall.validation import invalid

log = logging.getLogger("squall.nimbus.rpc.handler")
_MERGE = threading.Lock()  # Storm's credUpdateLock


class CredentialCalls:
    CALLS = ("uploadNewCredentials",)

    def __init__(self, controller: Controller, auth: CallAuthorizer):
        self.c = controller
        self.auth = auth
        self._authorize = auth.authorize  # operations.op judges each call by it

    @op("uploadNewCredentials", topology=True, acts=True)
    def uploadNewCredentials(self, name, creds):
        topology = self.c.read_model().find(name)
        if not self.c.leading:
            raise self.c.not_leader()
        conf = self.auth.topology_conf(topology.id)
        owner = str(conf.get("topology.submitter.user") or "")
        problem = uc.owner_problem(creds.topoOwner if creds is not None else None, owner)
        if problem is not None:
            raise T.AuthorizationException(msg=problem)
        self.c.reads.require_zookeeper("uploadNewCredentials")
        merged = self.store(topology.id, creds.creds if creds else None, owner)
        log.info("credentials of %s updated (%d keys)", topology.id, len(merged))

    def checked_submit(self, creds: Any, principal: str | None) -> dict[str, str]:
        """Storm's SubmitOptions.creds, checked before the topology is made."""
        problem = uc.owner_problem(creds.topoOwner, principal or "")
        if problem is not None:
            raise T.AuthorizationException(msg=problem)
        try:
            return uc.merged({}, creds.creds)
        except uc.CredentialsError as exc:
            raise invalid(str(exc)) from exc

    def store(self, topology_id: str, upload: dict[str, str] | None, owner: str) -> dict[str, str]:
        """Merge `upload` into the topology's stored credentials; what is stored now."""
        state = self.c.state
        path = state.layout.usercredentials(topology_id)
        with _MERGE:
            try:
                data, stat = state.zk.get(path)
            except NoNodeError:
                data, stat = None, None
            try:
                stored = uc.decode(data, path)
            except uc.CredentialsError as exc:
                log.warning("replacing %s", exc)
                stored = {}
            try:
                merged = uc.merged(stored, upload)
            except uc.CredentialsError as exc:
                raise invalid(str(exc)) from exc
            record = uc.encode(merged, owner)
            if stat is None:
                state.commit([("create", (path, record))])
            else:
                state.commit([("set_data", (path, record, stat.version))])
        return merged
