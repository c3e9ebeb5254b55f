"""The conf file a supervisor writes for a worker (issue 36 item 1): its topology's ZooKeeper
login and no other, mode 0600, owned by the worker's user where workers run as their
submitter. Before: it held the supervisor role's login and its host's.

The supervisor's own start path (worker_starts.start_worker, Launcher.start) writes it; the
worker process is a `sleep` run as the worker's user (the file is what is checked)."""

import json
import os
import pwd
import stat
import subprocess

import pytest

from squall.config import cluster_conf
from squall.supervisor.launcher import RUN_AS_USER, SUBMITTER, Launcher
from squall.supervisor.sync import WorkerSpec
from squall.supervisor.worker_starts import start_worker
from squall.zk.connection import worker_auth_conf
from squall.zk.identity import (
    HOST_KEY,
    TOPOLOGY_KEY,
    ensure_host_identity,
    ensure_zk_identities,
    load_identity,
    topology_login,
)

TID = "victim-1-1"
USER = "nobody"


class SleepingLauncher(Launcher):
    """A Launcher whose worker is `sleep`, started as the worker's user as a real one is."""

    def _popen(self, tid, port, conf_file, code_dir, identity, gated=False):
        return subprocess.Popen(
            ["sleep", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **identity,
        )


@pytest.mark.skipif(os.geteuid() != 0, reason="workers run as their user only under root")
def test_the_worker_conf_holds_its_topologys_login_only_and_is_its_users_alone(tmp_path):
    local = tmp_path / "supervisor"
    conf = cluster_conf(**{"storm.local.dir": str(tmp_path), RUN_AS_USER: True})
    ensure_zk_identities(conf)
    conf = {**conf, HOST_KEY: ensure_host_identity(local, "supervisor1")}
    (local / "stormdist" / TID).mkdir(parents=True)
    launcher = SleepingLauncher(local, "supervisor1", "127.0.0.1", conf)
    code_dir = local / "stormdist" / TID
    try:
        spec = WorkerSpec(TID, 6700, (1,), 1)
        start_worker(launcher, spec, code_dir, conf, {SUBMITTER: USER}, worker_auth_conf(conf))
        conf_file = local / "stormdist" / TID / "worker-6700.json"
        info = conf_file.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600
        assert info.st_uid == pwd.getpwnam(USER).pw_uid
        text = conf_file.read_text()
        worker_conf = json.loads(text)
        supervisor = load_identity(conf, "supervisor")
        nimbus = load_identity(conf, "nimbus")
        assert worker_conf[TOPOLOGY_KEY] == topology_login(supervisor.payload, TID)
        assert HOST_KEY not in worker_conf
        for secret in (supervisor.payload, nimbus.payload, conf[HOST_KEY]):
            assert secret.partition(":")[2] not in text
    finally:
        launcher.stop_all()
