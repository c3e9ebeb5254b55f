"""`squall nimbus`: wires ZooKeeper, the store, the controller, timers, watches, the leader
election and the Thrift server together, and takes them down on SIGTERM/SIGINT.

Every nimbus serves Thrift from the start: a standby answers reads and serves code; writes
need the leader. Leadership comes from kazoo's Election recipe. A leader that loses its
ZooKeeper session, or finds its epoch fenced, steps down by exiting: its process manager
restarts it as a standby, and it never writes on a stale view.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from kazoo.protocol.states import KazooState

from squall import __version__
from squall import thrift_api as T
from squall.config import zk_hosts
from squall.nimbus.blobs.code_store import CodeStore
from squall.nimbus.blobs.inbox import Inbox
from squall.nimbus.blobs.upload_policy import UploadQuota
from squall.nimbus.cluster_state import ClusterState
from squall.nimbus.controller import Controller
from squall.nimbus.controller_jobs import TakeLead
from squall.nimbus.reads.last_known import ZkOutage
from squall.nimbus.rpc.authorizer import authorizer_kind
from squall.nimbus.rpc.handler import NimbusHandler
from squall.nimbus.rpc.server import NimbusServer
from squall.nimbus.store import Store
from squall.nimbus.timers import Timers
from squall.security.credentials import ensure_cluster_credentials
from squall.security.tls import server_context
from squall.zk import connection as zk_mod

log = logging.getLogger("squall.nimbus")


def store_url(conf: dict[str, Any], local: Path) -> str:
    return conf["nimbus.store.url"] or f"sqlite:///{local / 'store.db'}"


def run_nimbus(conf: dict[str, Any]) -> None:
    local = Path(conf["storm.local.dir"]).resolve() / "nimbus"
    local.mkdir(parents=True, exist_ok=True)
    authorizer_kind(conf)  # an unknown nimbus.authorizer stops nimbus here, before it serves
    if directory := ensure_cluster_credentials(conf):
        log.info("credentials in %s", directory)
    server = NimbusServer(T.Nimbus, conf, ssl_context=server_context(conf))
    port = server.listen()
    host = conf["nimbus.host"]
    me = f"{host}:{port}"

    zk = zk_mod.connect(conf, "nimbus")
    state = ClusterState(zk, zk_mod.layout(conf))
    state.ensure_layout()
    election = zk.Election(state.layout.nimbus_leader, identifier=me)
    outage = ZkOutage(zk_hosts(conf))
    outage.listen(zk)

    def leader_of() -> str | None:
        """The election's first contender; while ZooKeeper is unreachable the last one seen
        (this nimbus, when it leads and saw none: it has not stepped down)."""
        try:
            seen: list[str] = []
            contenders = controller.reads.remembered(("leader",), election.contenders, seen)
        except Exception:  # noqa: BLE001 - ZooKeeper refused the read: no known leader
            return None
        if not contenders and controller.leading and outage.stale() is not None:
            return me
        return contenders[0] if contenders else None

    timers = Timers()
    store = Store(store_url(conf, local), source=me)
    controller = Controller(
        conf,
        state,
        Inbox(local / "inbox", UploadQuota.from_conf(conf)),
        CodeStore(local / "stormdist", store),
        later=timers.after,
        leader_of=leader_of,
        outage=outage,
    )
    controller.start()
    summary = json.dumps({"host": host, "port": port, "start": time.time(), "version": __version__})

    def register() -> None:
        state.register_nimbus(host, port, summary.encode())

    register()
    controller.reads.read_nimbuses()  # kept: getLeader during an outage from the start
    stop = threading.Event()

    stepped_down = threading.Event()

    def lead() -> None:
        try:
            controller.call(TakeLead(), timeout=600)
        except Exception as exc:  # noqa: BLE001 - never hold the lead half-prepared
            step_down(f"could not take the lead: {exc}")
            return
        print(f"nimbus {me} is the leader (epoch {state.epoch})", flush=True)
        stop.wait()  # leadership is held until this returns

    def step_down(reason: str) -> None:
        log.critical("%s; stepping down", reason)
        stepped_down.set()
        stop.set()
        server.close()

    def on_zk_state(zk_state: str) -> None:
        # a stop closes the session itself: that LOST is no reason to step down (exit 3)
        if zk_state == KazooState.LOST and controller.leading and not stop.is_set():
            threading.Thread(target=step_down, args=("ZooKeeper session lost",)).start()
        elif zk_state == KazooState.CONNECTED:  # re-register after a session loss
            timers.after(0, register)  # not on kazoo's thread: it would block it

    zk.add_listener(on_zk_state)

    @zk.ChildrenWatch(state.layout.supervisors)
    def _supervisors_changed(_children: list[str]) -> None:
        timers.after(0, lambda: controller.monitor(supervisors_changed=True))

    timers.every(conf["nimbus.monitor.freq.secs"], controller.monitor)
    timers.every(conf["nimbus.cleanup.inbox.freq.secs"], controller.requests.cleanup_inbox)

    def fenced() -> None:
        controller.fenced.wait()
        step_down("another nimbus leads now (epoch fenced)")

    threading.Thread(target=fenced, daemon=True).start()
    threading.Thread(target=election.run, args=(lead,), name="election", daemon=True).start()

    def shutdown(signum: int, _frame: Any) -> None:
        log.info("nimbus stopping (signal %d)", signum)
        stop.set()
        server.close()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    log.info("nimbus %s serving (pid %d)", me, os.getpid())
    print(f"nimbus listening on {me}", flush=True)
    try:
        refusals = server.refusals.refused_certificates
        handler = NimbusHandler(controller, conf, host, port, leader_of, refusals)
        server.serve_forever(handler)
    finally:
        stop.set()
        election.cancel()
        timers.stop()
        controller.stop()
        store.close()
        zk.remove_listener(outage.changed)  # stopping is no outage
        zk.stop()
        zk.close()
    if stepped_down.is_set():
        raise SystemExit(3)  # not a clean stop: a process manager restarts us as a standby
