"""`squall nimbus`: wires ZooKeeper, the code store, the controller, timers, watches and the
Thrift server together, and takes them down on SIGTERM/SIGINT."""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from pathlib import Path
from typing import Any

from kazoo.protocol.states import KazooState

from squall import thrift_api as T
from squall import zk as zk_mod

from .cluster_state import ClusterState
from .code_store import CodeStore
from .controller import Controller
from .handler import VERSION, NimbusHandler
from .inbox import Inbox
from .server import NimbusServer
from .timers import Timers

log = logging.getLogger("squall.nimbus")


def run_nimbus(conf: dict[str, Any]) -> None:
    local = Path(conf["storm.local.dir"]).resolve() / "nimbus"
    zk = zk_mod.connect(conf)
    state = ClusterState(zk, zk_mod.layout(conf))
    timers = Timers()
    controller = Controller(
        conf,
        state,
        Inbox(local / "inbox", conf["nimbus.upload.max.bytes"]),
        CodeStore(local / "stormdist"),
        later=timers.after,
    )
    controller.prepare()
    controller.start()

    server = NimbusServer(T.Nimbus, conf)
    port = server.listen()
    host = conf["nimbus.host"]
    started = time.time()
    summary = json.dumps({"host": host, "port": port, "start": started, "version": VERSION})

    def register() -> None:
        state.register_nimbus(host, port, summary.encode())

    register()

    def on_zk_state(zk_state: str) -> None:
        if zk_state == KazooState.CONNECTED:  # after a session loss, ephemerals are gone
            controller.post("re-register", register)
            controller.post("monitor", controller.monitor_all)

    zk.add_listener(on_zk_state)

    @zk.ChildrenWatch(state.layout.supervisors)
    def _supervisors_changed(_children: list[str]) -> None:
        controller.post("supervisors changed", controller.monitor_all)

    timers.every(
        conf["nimbus.monitor.freq.secs"], lambda: controller.post("monitor", controller.monitor_all)
    )
    timers.every(
        conf["nimbus.cleanup.inbox.freq.secs"],
        lambda: controller.post("cleanup", controller.cleanup_inbox),
    )

    def shutdown(signum: int, _frame: Any) -> None:
        log.info("nimbus stopping (signal %d)", signum)
        server.close()

    def stop_when_fenced() -> None:
        controller.fenced.wait()
        log.critical("another nimbus leads now; shutting down")
        server.close()

    threading.Thread(target=stop_when_fenced, daemon=True).start()
    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    log.info("nimbus listening on %s:%d (epoch %d)", host, port, state.epoch)
    print(f"nimbus listening on {host}:{port}", flush=True)
    try:
        server.serve_forever(NimbusHandler(controller, conf, host, port))
    finally:
        timers.stop()
        controller.stop()
        zk.stop()
        zk.close()
