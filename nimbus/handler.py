"""Thrift method implementations: each one hands the call to the controller thread.

No state lives here. Declared Thrift exceptions pass through to the client; anything else is
logged and answered with a TApplicationException, so an internal error fails one call and
never the connection or the server.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TApplicationException, TException

from squall import thrift_api as T
from squall.structure import structure_to_thrift

from .controller import Controller

log = logging.getLogger("squall.nimbus.handler")

VERSION = "0.1.0"


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
        self.started = time.time()

    @_guarded
    def submitTopology(self, name, uploadedJarLocation, jsonConf, topology):
        self.submitTopologyWithOpts(name, uploadedJarLocation, jsonConf, topology, None)

    @_guarded
    def submitTopologyWithOpts(self, name, uploadedJarLocation, jsonConf, topology, options):
        status = options.initial_status if options else T.TopologyInitialStatus.ACTIVE
        self.c.call("submit", self.c.submit, name, uploadedJarLocation, jsonConf, topology, status)

    @_guarded
    def killTopology(self, name):
        self.c.call("kill", self.c.kill, name, None)

    @_guarded
    def killTopologyWithOpts(self, name, options):
        self.c.call("kill", self.c.kill, name, options.wait_secs if options else None)

    @_guarded
    def activate(self, name):
        self.c.call("activate", self.c.activate, name)

    @_guarded
    def deactivate(self, name):
        self.c.call("deactivate", self.c.deactivate, name)

    @_guarded
    def rebalance(self, name, options):
        options = options or T.RebalanceOptions()
        self.c.call(
            "rebalance",
            self.c.rebalance,
            name,
            options.wait_secs,
            options.num_workers,
            options.num_executors,
        )

    @_guarded
    def beginFileUpload(self):
        return self.c.call("beginFileUpload", self.c.begin_upload)

    @_guarded
    def uploadChunk(self, location, chunk):
        self.c.call("uploadChunk", self.c.upload_chunk, location, chunk)

    @_guarded
    def finishFileUpload(self, location):
        self.c.call("finishFileUpload", self.c.finish_upload, location)

    @_guarded
    def beginFileDownload(self, file):
        return self.c.call("beginFileDownload", self.c.begin_download, file)

    @_guarded
    def downloadChunk(self, id):  # noqa: A002 - Storm's argument name
        return self.c.call("downloadChunk", self.c.download_chunk, id)

    @_guarded
    def getNimbusConf(self):
        return json.dumps(self.conf)

    @_guarded
    def getClusterInfo(self):
        return self.c.call("getClusterInfo", self.c.cluster_info, self._nimbuses())

    @_guarded
    def getTopologyInfo(self, id):  # noqa: A002
        return self.c.call("getTopologyInfo", self.c.topology_info, id)

    @_guarded
    def getTopologyConf(self, id):  # noqa: A002
        return self.c.call("getTopologyConf", self.c.topology_conf, id)

    @_guarded
    def getTopology(self, id):  # noqa: A002
        return structure_to_thrift(self.c.call("getTopology", self.c.topology_structure, id))

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
        self.c.call("setTopologyConf", self.c.set_config, name, key, jsonValue)

    @_guarded
    def isTopologyNameAllowed(self, name):
        return self.c.call("isTopologyNameAllowed", self.c.is_name_allowed, name)

    def _summary(self, host: str, port: int, started: float, is_leader: bool) -> Any:
        return T.NimbusSummary(
            host=host,
            port=port,
            uptime_secs=int(time.time() - started),
            isLeader=is_leader,
            version=VERSION,
        )

    def _nimbuses(self) -> list[Any]:
        """Every registered nimbus (/nimbuses), the leader marked."""
        leader = self.leader_of()
        return [
            self._summary(n["host"], n["port"], n.get("start", time.time()), key == leader)
            for key, n in sorted(self.c.state.read_nimbuses().items())
        ]
