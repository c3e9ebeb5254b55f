"""Carries out decide.handle's instructions against ZooKeeper, the store and the timers: the
only place nimbus's decisions touch the world. Every instruction is fenced by the epoch it
was decided in, so a deposed leader's late decision writes nothing."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from squall import log_config
from squall.nimbus.blobs.code_store import CodeStore
from squall.nimbus.blobs.inbox import Inbox
from squall.nimbus.cluster_state import ClusterState, FencedOut
from squall.nimbus.core import instructions as ins
from squall.security.mode import security_on
from squall.security.topology_keys import new_keys

log = logging.getLogger("squall.nimbus")

Later = Callable[[float, Callable[[], None]], None]  # run a callable after a delay

BATCHED = (ins.WriteAssignment, ins.AppendLog)


def batches(instructions: list[ins.Instruction]) -> list[list[ins.Instruction]]:
    """Consecutive assignment writes together, and consecutive log messages together (a lost
    host's topologies: pipelined ZooKeeper writes and one database commit instead of two
    round trips and a commit per topology); every other instruction alone, all in order."""
    out: list[list[ins.Instruction]] = []
    for i in instructions:
        if out and isinstance(i, BATCHED) and type(out[-1][0]) is type(i):
            out[-1].append(i)
        else:
            out.append([i])
    return out


class InstructionRunner:
    """`fire` is called when a StartTimer's delay has passed (the controller posts the
    delayed event back onto its queue)."""

    def __init__(
        self,
        conf: dict[str, Any],
        state: ClusterState,
        inbox: Inbox,
        code: CodeStore,
        later: Later,
        fire: Callable[[ins.StartTimer], None],
    ) -> None:
        self.conf = conf
        self.state = state
        self.inbox = inbox
        self.code = code
        self.later = later
        self.fire = fire

    @property
    def store(self) -> Any:
        return self.code.store

    def fence(self, i: ins.Instruction) -> None:
        epoch = getattr(i, "epoch", self.state.epoch)  # a StartTimer writes nothing: it has none
        if epoch != self.state.epoch:
            raise FencedOut(f"instruction of epoch {epoch}; this nimbus has {self.state.epoch}")

    def run_batch(self, batch: list[ins.Instruction]) -> None:
        """A run of assignment writes, or of log messages, carried out together (see
        `batches`); anything else one at a time."""
        if len(batch) == 1:
            self.run(batch[0])
            return
        for i in batch:
            self.fence(i)
        writes = [(i.topology_id, i.assignment) for i in batch if type(i) is ins.WriteAssignment]
        messages = [(i.type, i.key, dict(i.values)) for i in batch if type(i) is ins.AppendLog]
        match batch[0]:
            case ins.WriteAssignment():
                self.state.write_assignments(writes)
                for tid, assignment in writes:
                    slots = len(assignment.slots())
                    log.info("%s: %d tasks on %d slots", tid, len(assignment.task_slots), slots)
            case ins.AppendLog():
                self.state.check_lead()
                self.store.append_all(messages)
                for type_, _, values in messages:
                    _log_blacklist(type_, values)
            case _:
                raise TypeError(f"no batch of {batch[0]!r}")

    def run(self, i: ins.Instruction) -> None:
        self.fence(i)
        match i:
            case ins.SaveCode():
                self.state.check_lead()
                upload = self.inbox.take(i.location)
                self.code.save(i.topology_id, i.name, upload, i.structure, dict(i.conf), i.wall)
            case ins.CreateTopology():
                try:
                    # randomness stays in the shell: decide.py never sees the keys
                    keys = new_keys() if security_on(self.conf) else None
                    self.state.create_topology(
                        i.topology_id, i.base, dict(i.tasks), i.assignment, keys
                    )
                except Exception:
                    self.code.remove(i.topology_id)
                    raise
                log.info("created %s (%d tasks)", i.topology_id, len(i.tasks))
            case ins.WriteBase():
                self.state.write_base(i.topology_id, i.base)
            case ins.WriteTasks():
                self.state.write_tasks(i.topology_id, dict(i.tasks), i.assignment)
                log.info("%s: tasks renumbered, every worker restarts", i.topology_id)
            case ins.WriteAssignment():
                self.state.write_assignment(i.topology_id, i.assignment)
                slots = len(i.assignment.slots())
                log.info(
                    "%s: %d tasks on %d slots", i.topology_id, len(i.assignment.task_slots), slots
                )
            case ins.UpdateConf():
                self.state.check_lead()
                self.code.update_conf(i.topology_id, dict(i.conf))
            case ins.WriteLogConfig():
                self.state.write_log_config(i.topology_id, log_config.encode(i.config))
            case ins.RemoveTopology():
                log.info("removing topology %s", i.topology_id)
                self.state.remove_topology(i.topology_id)
                self.code.remove(i.topology_id)
            case ins.RemoveCode():
                log.info("removing code of %s, which has no /storms node", i.topology_id)
                self.state.check_lead()  # a new leader's submit may have just saved it
                self.code.remove(i.topology_id)
            case ins.RemoveOrphanAssignment():
                self.state.remove_orphan(self.state.layout.assignment(i.topology_id))
            case ins.AppendLog():
                self.state.check_lead()
                self.store.append(i.type, i.key, dict(i.values))
                _log_blacklist(i.type, i.values)
            case ins.StartTimer():
                self.later(i.delay_secs, functools.partial(self.fire, i))
            case _:
                raise TypeError(f"unknown nimbus instruction {i!r}")


def _log_blacklist(type_: str, values: Mapping[str, Any]) -> None:
    """A supervisor entering or leaving the blacklist (nimbus/scheduling/blacklist.py) is logged
    once, as it happens."""
    if type_ == "blacklist":
        state = "left out of scheduling" if values["listed"] else "back in service"
        log.warning("supervisor %s %s: %s", values["supervisor"], state, values["reason"])
