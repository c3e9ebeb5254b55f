"""How a supervisor starts one worker: with its topology's conf as nimbus has it (fetched off
the sync loop, conf_fetcher.py) over the supervisor's own, and its topology's ZooKeeper login,
never the supervisor's or its host's. The slot machine (slot.py) decides when; a start that
raises is its topology's error there, retried with back-off."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from squall.zk.identity import without_zk_logins

from .launcher import SUBMITTER, Launcher
from .sync import WorkerSpec

# a topology's ZooKeeper logins, by its id and submitter
WorkerAuth = Callable[[str, str | None], dict[str, Any]]


def start_worker(
    launcher: Launcher,
    spec: WorkerSpec,
    code_dir: Path,
    supervisor_conf: Mapping[str, Any],
    topology_conf: Mapping[str, Any],
    worker_auth: WorkerAuth,
) -> None:
    """Start the worker; raises when it cannot (a user it cannot run as, a failed spawn)."""
    conf = without_zk_logins({**supervisor_conf, **topology_conf})
    user = topology_conf.get(SUBMITTER) or None
    auth = worker_auth(spec.topology_id, user)
    launcher.start(spec, code_dir, {**conf, **auth})
