"""The Thrift writes nimbus's controller accepts (submit, kill, rebalance, ...), uploads'
start and the inbox's cleanup: each validates what it can on the caller's thread, builds a
typed event, and waits for the controller thread to decide it (nimbus/controller.py). Kept
apart from the queue so that what a client may ask is readable in one place."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squall import code_package, log_config
from squall import thrift_api as T
from squall.config import log_review
from squall.nimbus.blobs.user_quotas import topology_problem
from squall.nimbus.controller_jobs import Barrier, Decide
from squall.nimbus.core import events as ev
from squall.nimbus.rpc.authorizer import Acl
from squall.validation import (
    cap_parallelism,
    check_topology_name,
    conf_reviews,
    validate_topology,
    validate_topology_conf,
)

if TYPE_CHECKING:
    from squall.nimbus.controller import Controller

log = logging.getLogger("squall.nimbus")


class UserRequests:
    """Nimbus's controller (nimbus/controller.py) as a client's writes reach it: `c` gives
    the queue (`call`), the clocks, the stores and whether this nimbus leads."""

    def __init__(self, controller: Controller) -> None:
        self.c = controller

    def submit(
        self, name: str, location: str, json_conf: str, topology: Any, initial_status: int
    ) -> str:
        if not self.c.leading:  # first, as Storm's nimbus does: a standby judges nothing
            raise self.c.not_leader()
        try:
            check_topology_name(name)
            structure = validate_topology(topology)
            conf = {**validate_topology_conf(json_conf), "topology.name": name}  # as Storm
            structure = cap_parallelism(structure, conf)
            self._check_topology_quota(conf)
            self._check_package(self.c.inbox.finished_path(location))
            wall = self.c.wall()
            tid = f"{name}-{uuid.uuid4().hex[:8]}-{int(wall)}"
            inactive = initial_status == T.TopologyInitialStatus.INACTIVE
            self.c.call(
                Decide(
                    ev.Submit(name, tid, structure, conf, location, inactive, self.c.clock(), wall)
                )
            )
        except (T.InvalidTopologyException, T.AlreadyAliveException):
            self.c.inbox.discard(location)  # a refused submit leaves no upload behind
            raise
        for found in conf_reviews(name, topology, json_conf):  # keys accepted, not used
            log_review(found, log, once=False)
        return tid

    def _check_package(self, package: Path) -> None:
        """A package no supervisor could unpack is refused now, naming what is wrong, before
        anything is scheduled (it used to be accepted and then reported by every supervisor,
        again and again, as an error about "code.tgz")."""
        try:
            code_package.check(
                package,
                self.c.conf["supervisor.code.max.bytes"],
                self.c.conf["supervisor.code.max.entries"],
            )
        except code_package.PackageError as exc:
            raise T.InvalidTopologyException(msg=f"code package refused: {exc}") from exc

    def _check_topology_quota(self, conf: dict[str, Any]) -> None:
        """nimbus.topologies.max.per.user, by the submitter (nimbus.admins are exempt). Judged
        on the published model: two submits racing may both pass, by one topology."""
        owner = str(conf.get("topology.submitter.user", ""))
        owners = (t.base.owner for t in self.c.model.topologies.values())
        limit = self.c.conf["nimbus.topologies.max.per.user"]
        exempt = conf.get("topology.submitter.principal") in Acl.from_conf(self.c.conf).admins
        problem = topology_problem(owner, owners, limit, exempt)
        if problem:
            raise T.InvalidTopologyException(msg=problem)

    def kill(self, name: str, wait_secs: int | None) -> None:
        self.c.call(Decide(ev.Kill(name, wait_secs, self.c.wall())))

    def activate(self, name: str) -> None:
        self.c.call(Decide(ev.Activate(name, self.c.wall())))

    def deactivate(self, name: str) -> None:
        self.c.call(Decide(ev.Deactivate(name, self.c.wall())))

    def rebalance(
        self,
        name: str,
        wait_secs: int | None,
        num_workers: int | None,
        executors: dict | None,
        conf: dict | None = None,
        resources: dict | None = None,
    ) -> None:
        wall = self.c.wall()
        event = ev.Rebalance(
            name, wait_secs, num_workers, executors, wall, conf or {}, resources or {}
        )
        self.c.call(Decide(event))

    def set_config(self, name: str, key: str, json_value: str) -> None:
        try:
            value = json.loads(json_value)
        except (ValueError, RecursionError):  # nested past the recursion limit: the text
            value = json_value
        self.c.call(Decide(ev.SetConfig(name, key, value, self.c.wall())))

    def set_log_config(self, name: str, changes: dict[str, log_config.Change]) -> None:
        self.c.call(Decide(ev.SetLogConfig(name, changes, self.c.wall())))

    def debug(self, name: str, component: str, enable: bool, percentage: float) -> None:
        self.c.call(Decide(ev.Debug(name, component, enable, percentage, self.c.wall())))

    def begin_upload(self, owner: str | None = None) -> str:
        if not self.c.leading:
            self.c.call(Barrier())  # a lead just won is being taken: an upload waits for it
        if not self.c.leading:
            raise self.c.not_leader()
        return self.c.inbox.begin(self.c.clock(), owner)

    def cleanup_inbox(self) -> None:
        """Expire abandoned uploads and downloads (Inbox and CodeStore lock themselves)."""
        now = self.c.clock()
        expired = self.c.inbox.expire(now, self.c.conf["nimbus.inbox.jar.expiration.secs"])
        if expired:
            log.info("deleted %d expired uploads", len(expired))
        self.c.code.expire_downloads(now, self.c.conf["nimbus.file.copy.expiration.secs"])
