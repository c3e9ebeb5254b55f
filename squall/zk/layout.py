"""Where everything lives in ZooKeeper (docs/architecture.md, "ZooKeeper layout").

One place builds every path so the daemons cannot disagree about the tree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ZkLayout:
    root: str = "/squall"

    def _p(self, *parts: object) -> str:
        return "/".join([self.root.rstrip("/"), *map(str, parts)])

    @property
    def storms(self) -> str:
        return self._p("storms")

    @property
    def tasks_root(self) -> str:
        return self._p("tasks")

    @property
    def assignments(self) -> str:
        return self._p("assignments")

    @property
    def supervisors(self) -> str:
        return self._p("supervisors")

    @property
    def taskbeats_root(self) -> str:
        return self._p("taskbeats")

    @property
    def errors_root(self) -> str:
        return self._p("errors")

    @property
    def consumers_root(self) -> str:
        return self._p("consumers")

    @property
    def credentials_root(self) -> str:
        return self._p("credentials")

    @property
    def logconfigs_root(self) -> str:
        return self._p("logconfigs")

    @property
    def profilerconfig_root(self) -> str:
        return self._p("profilerconfig")

    @property
    def usercredentials_root(self) -> str:
        return self._p("usercredentials")

    @property
    def nimbuses(self) -> str:
        return self._p("nimbuses")

    @property
    def nimbus_leader(self) -> str:
        return self._p("nimbus", "leader")

    @property
    def nimbus_epoch(self) -> str:
        return self._p("nimbus", "epoch")

    def storm(self, topology_id: str) -> str:
        return self._p("storms", topology_id)

    def tasks(self, topology_id: str) -> str:
        return self._p("tasks", topology_id)

    def task(self, topology_id: str, task_id: int) -> str:
        return self._p("tasks", topology_id, task_id)

    def assignment(self, topology_id: str) -> str:
        return self._p("assignments", topology_id)

    def supervisor(self, supervisor_id: str) -> str:
        return self._p("supervisors", supervisor_id)

    def taskbeats(self, topology_id: str) -> str:
        return self._p("taskbeats", topology_id)

    def taskbeat(self, topology_id: str, node: str, port: int) -> str:
        return self._p("taskbeats", topology_id, self.beat_name(node, port))

    @staticmethod
    def beat_name(node: str, port: int) -> str:
        """The heartbeat node of a worker's slot, under /taskbeats/[id]."""
        return f"{node}-{port}"

    def errors(self, topology_id: str) -> str:
        return self._p("errors", topology_id)

    def credentials(self, topology_id: str) -> str:
        """Storm's /credentials/<id>: the topology's CURVE keypair
        (squall.security.topology_keys)."""
        return self._p("credentials", topology_id)

    def logconfig(self, topology_id: str) -> str:
        """Storm's /logconfigs/<id>: the topology's dynamic log levels (squall.log_config)."""
        return self._p("logconfigs", topology_id)

    def profilerconfig(self, topology_id: str) -> str:
        """Storm's /profilerconfig/<id>: pending profiling requests (squall.profile_requests)."""
        return self._p("profilerconfig", topology_id)

    def usercredentials(self, topology_id: str) -> str:
        """/usercredentials/<id>: uploadNewCredentials' map (squall.security.user_credentials),
        apart from the CURVE keys in /credentials/<id>."""
        return self._p("usercredentials", topology_id)

    def consumer_offset(self, group: str, source: str, partition: str) -> str:
        return self._p("consumers", group, "offsets", source, partition)

    def consumer_owner(self, group: str, source: str, partition: str) -> str:
        return self._p("consumers", group, "owners", source, partition)

    def consumer_cuts(self, group: str, source: str, partition: str) -> str:
        return self._p("consumers", group, "cuts", source, partition)

    def topology_records(self, topology_id: str) -> tuple[str, ...]:
        """The nodes that make a topology exist (deleted first, under the leader's fence)."""
        return (self.assignment(topology_id), self.storm(topology_id))

    def topology_subtrees(self, topology_id: str) -> tuple[str, ...]:
        """What else a topology owns: garbage once its records are gone."""
        return (
            self.tasks(topology_id),
            self.taskbeats(topology_id),
            self.errors(topology_id),
            self.credentials(topology_id),
            self.logconfig(topology_id),
            self.profilerconfig(topology_id),
            self.usercredentials(topology_id),
        )
