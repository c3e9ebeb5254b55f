"""Storm 2's read calls for its UI and CLI (page infos, summaries, history), which the
NimbusHandler delegates to: each reads the controller's published model and ZooKeeper once and hands
plain data to the pure builders (page_info, history, summaries).

Authorized as in Storm's Nimbus.java and SimpleACLAuthorizer: the summaries, the supervisor
page and the owners' summaries are user commands, the topology and component pages
topology reads; getTopologyInfo*: the getTopologyInfo operation. getTopologyHistory, which
Storm answers to anyone for any user, is a user command here and lists only topologies the
caller may read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall import thrift_api as T
from squall.nimbus.controller import Controller
from squall.nimbus.core.coordinator_log import submitted_confs
from squall.nimbus.core.model import NimbusModel, TopologyModel
from squall.nimbus.reads import summaries
from squall.nimbus.reads.history import chosen_errors, owner_summaries, visible_history
from squall.nimbus.reads.page_info import (
    TopologyFacts,
    component_page,
    supervisor_ids,
    supervisor_page,
    topology_page,
)
from squall.nimbus.reads.topology_answers import TopologyAnswers
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op
from squall.nimbus.scheduling.resource_conf import fragmentation_bar


def _by_id(model: NimbusModel, tid: str) -> TopologyModel:
    if tid in model.topologies:
        return model.topologies[tid]
    raise T.NotAliveException(msg=f"topology id {tid!r} is not alive")


def _by_name(model: NimbusModel, name: str) -> TopologyModel:
    for topology in model.topologies.values():
        if topology.base.name == name:
            return topology
    raise T.NotAliveException(msg=f"topology {name!r} is not alive")


class UiReads:
    """The UI's and the CLI's reads; NimbusHandler serves CALLS through this object."""

    CALLS = (
        "getTopologySummaries",
        "getTopologySummaryByName",
        "getTopologySummary",
        "getTopologyInfoByName",
        "getTopologyInfoByNameWithOpts",
        "getTopologyInfoWithOpts",
        "getTopologyPageInfo",
        "getComponentPageInfo",
        "getSupervisorPageInfo",
        "getTopologyHistory",
        "getOwnerResourceSummaries",
    )

    def __init__(self, controller: Controller, auth: CallAuthorizer, answers: TopologyAnswers):
        self.c = controller
        self.auth = auth
        self._authorize = auth.authorize  # operations.op judges each call by it
        self.answers = answers

    def _conf(self, topology: TopologyModel) -> dict[str, Any]:
        return dict(topology.conf) or self.c.code.conf(topology.id)

    def _readable_confs(self, topologies: Mapping[str, TopologyModel]) -> dict[str, Any]:
        """Each topology's conf; one removed since the model was read is left out."""
        confs = {}
        for tid, topology in topologies.items():
            try:
                confs[tid] = self._conf(topology)
            except T.NotAliveException:
                continue
        return confs

    def _facts(self, topology: TopologyModel, with_kinds: bool = True) -> TopologyFacts:
        kinds, inputs = {}, {}
        if with_kinds:
            structure = self.c.code.structure(topology.id)
            kinds = {name: c.kind for name, c in structure.components.items()}
            inputs = {
                name: tuple((i.component, i.stream) for i in c.inputs)
                for name, c in structure.components.items()
            }
        return TopologyFacts(
            id=topology.id,
            base=topology.base,
            tasks=topology.tasks,
            assignment=topology.assignment,
            beats=self.c.reads.read_beats(topology.id),
            errors=self.c.reads.read_errors(topology.id),
            kinds=kinds,
            conf=self._conf(topology) if with_kinds else {},
            inputs=inputs,
        )

    def _summary_of(self, topology: TopologyModel, model: Any) -> Any:
        tid = topology.id
        assignments = {tid: topology.assignment} if topology.assignment else {}
        cluster = summaries.cluster_summary(
            {tid: topology.base},
            assignments,
            {tid: topology.tasks},
            {},
            [],
            self.c.wall(),
            {tid: self.answers.run_status(model, topology)},
        )
        return self.answers.stamped(cluster.topologies[0])

    def _info(self, topology: TopologyModel, options: Any, model: Any) -> Any:
        info = self.answers.topology_info(topology, model)
        info.errors = chosen_errors(info.errors, options.num_err_choice if options else None)
        return self.answers.stamped(info)

    @op("getTopologySummaries")
    def getTopologySummaries(self):
        model = self.c.read_model()
        return [self._summary_of(t, model) for _, t in sorted(model.topologies.items())]

    @op("getTopologySummaryByName")
    def getTopologySummaryByName(self, name):
        model = self.c.read_model()
        return self._summary_of(_by_name(model, name), model)

    @op("getTopologySummary")
    def getTopologySummary(self, id):  # noqa: A002 - Storm's argument name
        model = self.c.read_model()
        return self._summary_of(_by_id(model, id), model)

    @op("getTopologyInfo", topology=True)
    def getTopologyInfoByName(self, name):
        model = self.c.read_model()
        return self._info(_by_name(model, name), None, model)

    @op("getTopologyInfo", topology=True)
    def getTopologyInfoByNameWithOpts(self, name, options):
        model = self.c.read_model()
        return self._info(_by_name(model, name), options, model)

    @op("getTopologyInfo", topology=True)
    def getTopologyInfoWithOpts(self, id, options):  # noqa: A002
        model = self.c.read_model()
        return self._info(_by_id(model, id), options, model)

    @op("getTopologyPageInfo", topology=True)
    def getTopologyPageInfo(self, id, window, is_include_sys):  # noqa: A002
        model = self.c.read_model()
        topology = model.find(id)
        facts = self._facts(topology)
        page = topology_page(facts, bool(is_include_sys), self.c.wall(), window)
        # tasks not running: why (from the errors the page read)
        page.sched_status = self.answers.run_status(model, topology, facts.errors) or None
        return self.answers.stamped(page)

    @op("getComponentPageInfo", topology=True)
    def getComponentPageInfo(self, topology_id, component_id, window, is_include_sys):
        facts = self._facts(self.c.read_model().find(topology_id))
        page = component_page(facts, component_id, bool(is_include_sys), self.c.wall(), window)
        return self.answers.stamped(page)

    @op("getSupervisorPageInfo")
    def getSupervisorPageInfo(self, id, host, is_include_sys):  # noqa: A002
        model = self.c.read_model()
        chosen = set(supervisor_ids(model.supervisors, id, host))
        topologies = model.topologies
        cluster = summaries.cluster_summary(
            {tid: t.base for tid, t in topologies.items()},
            {tid: t.assignment for tid, t in topologies.items() if t.assignment},
            {tid: t.tasks for tid, t in topologies.items()},
            {sid: info for sid, info in model.supervisors.items() if sid in chosen},
            [],
            self.c.wall(),
            bar=fragmentation_bar(model.settings.scheduling),
        )
        on_chosen = [
            self._facts(t, with_kinds=False)
            for _, t in sorted(topologies.items())
            if t.assignment and any(node in chosen for node, _ in t.assignment.slots())
        ]
        principal = request_context.current().principal
        confs = self._readable_confs({t.id: topologies[t.id] for t in on_chosen})
        page = supervisor_page(
            cluster.supervisors,
            on_chosen,
            bool(is_include_sys),
            lambda facts: (
                facts.id in confs and self.auth.may(principal, "getTopology", confs[facts.id])
            ),
        )
        return self.answers.stamped(page)

    @op("getTopologyHistory")
    def getTopologyHistory(self, user):
        """The caller's view; naming another `user` narrows it to what both may read."""
        caller = request_context.current().principal
        readers = {caller} | ({user} if user else set())
        live = self._readable_confs(self.c.read_model().topologies)
        ids = visible_history(
            submitted_confs(self.c.store.log()),
            live,
            lambda conf: all(self.auth.may(p, "getTopologyInfo", conf) for p in readers),
        )
        return T.TopologyHistoryInfo(topo_ids=ids)

    @op("getOwnerResourceSummaries")
    def getOwnerResourceSummaries(self, owner):
        topologies = self.c.read_model().topologies
        return owner_summaries(
            {tid: t.base for tid, t in topologies.items()},
            {tid: t.tasks for tid, t in topologies.items()},
            {tid: t.assignment for tid, t in topologies.items() if t.assignment},
            owner,
        )
