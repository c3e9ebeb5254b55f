"""Thrift method implementations. Writes become events decided on the controller thread;
reads answer from the controller's published (immutable) model; code uploads and downloads
go straight to the inbox and the code store, never through the controller's queue.

Declared Thrift exceptions pass through to the client; anything else is logged and answered
with a TApplicationException, so an internal error fails one call and never the connection
or the server.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TApplicationException, TException

from squall import __version__
from squall import thrift_api as T
from squall.structure import structure_to_thrift
from squall.validation import name_problem

from . import request_context, summaries
from .controller import Controller
from .redaction import redacted

log = logging.getLogger("squall.nimbus.handler")


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except TException:
            raise
        except Exception as exc:
            log.exception("%s failed", method.__name__)
            raise TApplicationException(
                TApplicationException.INTERNAL_ERROR, f"{method.__name__}: {exc}"
            ) from exc

    return wrapper


class NimbusHandler:
    def __init__(
        self,
        controller: Controller,
        conf: dict[str, Any],
        host: str,
        port: int,
        leader_of: Callable[[], str | None],
    ):
        self.c = controller
        self.conf = conf
        self.host = host
        self.port = port
        self.leader_of = leader_of

    @_guarded
    def submitTopology(self, name, uploadedJarLocation, jsonConf, topology):
        self.submitTopologyWithOpts(name, uploadedJarLocation, jsonConf, topology, None)

    @_guarded
    def submitTopologyWithOpts(self, name, uploadedJarLocation, jsonConf, topology, options):
        # before anything else: a refused submit discards its upload, never another's
        self.c.inbox.check_owner(uploadedJarLocation, request_context.current().principal)
        status = options.initial_status if options else T.TopologyInitialStatus.ACTIVE
        self.c.submit(name, uploadedJarLocation, jsonConf, topology, status)

    @_guarded
    def killTopology(self, name):
        self.c.kill(name, None)

    @_guarded
    def killTopologyWithOpts(self, name, options):
        self.c.kill(name, options.wait_secs if options else None)

    @_guarded
    def activate(self, name):
        self.c.activate(name)

    @_guarded
    def deactivate(self, name):
        self.c.deactivate(name)

    @_guarded
    def rebalance(self, name, options):
        options = options or T.RebalanceOptions()
        self.c.rebalance(name, options.wait_secs, options.num_workers, options.num_executors)

    @_guarded
    def beginFileUpload(self):
        return self.c.begin_upload(request_context.current().principal)

    @_guarded
    def uploadChunk(self, location, chunk):
        principal = request_context.current().principal
        self.c.inbox.append(location, chunk, self.c.clock(), principal)

    @_guarded
    def finishFileUpload(self, location):
        self.c.inbox.finish(location, self.c.clock(), request_context.current().principal)

    @_guarded
    def beginFileDownload(self, file):
        return self.c.code.begin_download(file, self.c.clock())

    @_guarded
    def downloadChunk(self, id):  # noqa: A002 - Storm's argument name
        return self.c.code.read_chunk(id, self.c.clock())

    @_guarded
    def getNimbusConf(self):
        return json.dumps(redacted(self.conf))

    @_guarded
    def getClusterInfo(self):
        model = self.c.read_model()
        topologies = model.topologies
        return summaries.cluster_summary(
            {tid: t.base for tid, t in topologies.items()},
            {tid: t.assignment for tid, t in topologies.items() if t.assignment},
            {tid: t.tasks for tid, t in topologies.items()},
            model.supervisors,
            self._nimbuses(),
            self.c.wall(),
        )

    @_guarded
    def getTopologyInfo(self, id):  # noqa: A002
        topology = self.c.read_model().find(id)
        return summaries.topology_info(
            topology.id,
            topology.base,
            topology.assignment,
            topology.tasks,
            self.c.state.read_beats(topology.id),
            self.c.state.read_errors(topology.id),
            self.c.wall(),
        )

    @_guarded
    def getTopologyConf(self, id):  # noqa: A002
        topology = self.c.read_model().find(id)
        return json.dumps(dict(topology.conf) or self.c.code.conf(topology.id))

    @_guarded
    def getTopology(self, id):  # noqa: A002
        """The structure as submitted, with each component's parallelism as it is now
        (a rebalance may have changed it)."""
        topology = self.c.read_model().find(id)
        structure = self.c.code.structure(topology.id)
        return structure_to_thrift(structure.with_parallelism(topology.base.component_executors))

    @_guarded
    def getUserTopology(self, id):  # noqa: A002
        return self.getTopology(id)

    @_guarded
    def getLeader(self):
        leader = self.leader_of()
        for summary in self._nimbuses():
            if f"{summary.host}:{summary.port}" == leader:
                return summary
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, "no nimbus leads now")

    @_guarded
    def setTopologyConf(self, name, key, jsonValue):
        self.c.set_config(name, key, jsonValue)

    @_guarded
    def isTopologyNameAllowed(self, name):
        return name_problem(name) is None and not self.c.read_model().name_taken(name)

    def _summary(self, host: str, port: int, started: float, is_leader: bool) -> Any:
        return T.NimbusSummary(
            host=host,
            port=port,
            uptime_secs=int(time.time() - started),
            isLeader=is_leader,
            version=__version__,
        )

    def _nimbuses(self) -> list[Any]:
        """Every registered nimbus (/nimbuses), the leader marked."""
        leader = self.leader_of()
        return [
            self._summary(n.host, n.port, n.start, key == leader)
            for key, n in sorted(self.c.state.read_nimbuses().items())
        ]
