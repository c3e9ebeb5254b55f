"""The Thrift writes nimbus's controller accepts (submit, kill, rebalance, ...), uploads'
start and the inbox's cleanup: each validates what it can on the caller's thread, builds a
typed event, and waits for the controller thread to decide it (nimbus/controller.py). Kept
apart from the queue so that what a client may ask is readable in one place."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from squall import code_package, log_config
from squall import thrift_api as T
from squall.config import log_review
from squall.nimbus.blobs.code_store import CodeStore
from squall.nimbus.blobs.inbox import Inbox
from squall.nimbus.blobs.user_quotas import topology_problem
from squall.nimbus.controller_jobs import Barrier, Decide
from squall.nimbus.core import events as ev
from squall.nimbus.core.model import NimbusModel
from squall.nimbus.rpc.authorizer import Acl
from squall.validation import (
    cap_parallelism,
    check_topology_name,
    conf_reviews,
    validate_topology,
    validate_topology_conf,
)

log = logging.getLogger("squall.nimbus")

LeaderOf = Callable[[], str | None]  # "host:port" of the current leader, if any


class UserRequests:
    """Mixed into nimbus.controller.Controller, which provides the queue (`call`), the
    clocks and whether this nimbus leads."""

    conf: dict[str, Any]
    inbox: Inbox
    code: CodeStore
    leader_of: LeaderOf
    clock: Callable[[], float]
    wall: Callable[[], float]
    call: Callable[..., None]  # run a job on the controller thread and wait for it
    model: NimbusModel  # the published model

    @property
    def leading(self) -> bool:
        """Whether this nimbus leads: Controller's property (its published model's), declared
        here as one so that the mixin's type matches it."""
        raise NotImplementedError

    def submit(
        self, name: str, location: str, json_conf: str, topology: Any, initial_status: int
    ) -> str:
        if not self.leading:  # first, as Storm's nimbus does: a standby judges nothing
            raise self._not_leader()
        try:
            check_topology_name(name)
            structure = validate_topology(topology)
            conf = {**validate_topology_conf(json_conf), "topology.name": name}  # as Storm
            structure = cap_parallelism(structure, conf)
            self._check_topology_quota(conf)
            self._check_package(self.inbox.finished_path(location))
            wall = self.wall()
            tid = f"{name}-{uuid.uuid4().hex[:8]}-{int(wall)}"
            inactive = initial_status == T.TopologyInitialStatus.INACTIVE
            self.call(
                Decide(
                    ev.Submit(name, tid, structure, conf, location, inactive, self.clock(), wall)
                )
            )
        except (T.InvalidTopologyException, T.AlreadyAliveException):
            self.inbox.discard(location)  # a refused submit leaves no upload behind
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
                self.conf["supervisor.code.max.bytes"],
                self.conf["supervisor.code.max.entries"],
            )
        except code_package.PackageError as exc:
            raise T.InvalidTopologyException(msg=f"code package refused: {exc}") from exc

    def _check_topology_quota(self, conf: dict[str, Any]) -> None:
        """nimbus.topologies.max.per.user, by the submitter (nimbus.admins are exempt). Judged
        on the published model: two submits racing may both pass, by one topology."""
        owner = str(conf.get("topology.submitter.user", ""))
        owners = (t.base.owner for t in self.model.topologies.values())
        limit = self.conf["nimbus.topologies.max.per.user"]
        exempt = conf.get("topology.submitter.principal") in Acl.from_conf(self.conf).admins
        problem = topology_problem(owner, owners, limit, exempt)
        if problem:
            raise T.InvalidTopologyException(msg=problem)

    def kill(self, name: str, wait_secs: int | None) -> None:
        self.call(Decide(ev.Kill(name, wait_secs, self.wall())))

    def activate(self, name: str) -> None:
        self.call(Decide(ev.Activate(name, self.wall())))

    def deactivate(self, name: str) -> None:
        self.call(Decide(ev.Deactivate(name, self.wall())))

    def rebalance(
        self, name: str, wait_secs: int | None, num_workers: int | None, executors: dict | None
    ) -> None:
        self.call(Decide(ev.Rebalance(name, wait_secs, num_workers, executors, self.wall())))

    def set_config(self, name: str, key: str, json_value: str) -> None:
        try:
            value = json.loads(json_value)
        except (ValueError, RecursionError):  # nested past the recursion limit: the text
            value = json_value
        self.call(Decide(ev.SetConfig(name, key, value, self.wall())))

    def set_log_config(self, name: str, changes: dict[str, log_config.Change]) -> None:
        self.call(Decide(ev.SetLogConfig(name, changes, self.wall())))

    def debug(self, name: str, component: str, enable: bool, percentage: float) -> None:
        self.call(Decide(ev.Debug(name, component, enable, percentage, self.wall())))

    def begin_upload(self, owner: str | None = None) -> str:
        if not self.leading:
            self.call(Barrier())  # a lead just won is being taken: an upload waits for it
        if not self.leading:
            raise self._not_leader()
        return self.inbox.begin(self.clock(), owner)

    def cleanup_inbox(self) -> None:
        """Expire abandoned uploads and downloads (Inbox and CodeStore lock themselves)."""
        now = self.clock()
        expired = self.inbox.expire(now, self.conf["nimbus.inbox.jar.expiration.secs"])
        if expired:
            log.info("deleted %d expired uploads", len(expired))
        self.code.expire_downloads(now, self.conf["nimbus.file.copy.expiration.secs"])

    def _not_leader(self) -> T.IllegalStateException:
        leader = self.leader_of() or "unknown"
        return T.IllegalStateException(msg=f"this nimbus is not the leader; the leader is {leader}")
