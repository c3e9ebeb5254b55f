"""Storm 2's setLogConfig, getLogConfig and debug (issue #17) over real Thrift and TLS on a
local cluster: levels set through nimbus reach the running worker's Python loggers and
revert at their timeout, debug makes the worker log sampled tuples on squall.eventlog and
shows in getTopologyInfo, and the calls are refused for unknown topologies and for users
without rights."""

import re
import time
from datetime import datetime

import pytest
from kazoo.exceptions import NoAuthError
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.log_config import decode
from squall.security.certificates import issue
from squall.submit import submit_file
from squall.zk.layout import ZkLayout

from .conftest import TOPOLOGIES

TICKING = TOPOLOGIES / "ticking.py"
USERS = ["alice", "bob"]
TIMEOUT_SECS = 6
HEARTBEAT_DEBUG = re.compile(r"^(\S+ \S+) DEBUG squall\.worker: heartbeat", re.M)
REVERTED = re.compile(
    r"^(\S+ \S+) INFO squall\.worker: log level of squall\.worker is now NOTSET", re.M
)
TICKED = re.compile(r"^(\S+ \S+) INFO ticking: ticked", re.M)
EVENT = re.compile(r"^(\S+ \S+) INFO squall\.eventlog: (\w+) \d+ default None \[(\d+)\]", re.M)


def _time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.users": USERS}
    with LocalCluster(tmp_path_factory.mktemp("logdebug"), supervisors=1, conf=conf) as c:
        for name in USERS:
            issue(c.base_conf_full(), name)
        yield c


@pytest.fixture(scope="module")
def ticking(cluster):
    """alice's ticking topology, its worker running (it has logged a tick)."""
    with cluster.client("alice") as client:
        submit_file(client, TICKING, cluster.client_conf(), name="ticking")
        tid = topology_id(client, "ticking")
    wait_for(lambda: TICKED.search(_worker_log(cluster, tid)), 120, "the worker's first tick")
    return tid


def _worker_log(cluster, tid: str) -> str:
    return "".join(
        path.read_text(errors="replace")
        for path in sorted(cluster.directory.glob(f"supervisor1/**/worker-{tid}-*.log"))
    )


def _update(level: str, timeout: int = 0, reset: str | None = None):
    return T.LogLevel(
        action=T.LogLevelAction.UPDATE,
        target_log_level=level,
        reset_log_level_timeout_secs=timeout,
        reset_log_level=reset,
    )


def test_log_config_round_trips_and_merges(cluster, ticking):
    with cluster.client("alice") as client:
        before = int(time.time() * 1000)
        config = T.LogConfig(named_logger_level={"ROOT": _update("INFO"), "a.b": _update("WARN")})
        client.setLogConfig(ticking, config)
        client.setLogConfig(  # a second request merges: a.b removed, c added, ROOT kept
            ticking,
            T.LogConfig(
                named_logger_level={
                    "a.b": T.LogLevel(action=T.LogLevelAction.REMOVE),
                    "c": _update("ERROR", 3600, "DEBUG"),
                }
            ),
        )
        stored = client.getLogConfig(ticking).named_logger_level
        assert sorted(stored) == ["ROOT", "c"]
        assert stored["ROOT"].target_log_level == "INFO"
        assert stored["ROOT"].reset_log_level_timeout_epoch is None  # no timeout: for good
        c = stored["c"]
        assert (c.target_log_level, c.reset_log_level, c.reset_log_level_timeout_secs) == (
            "ERROR",
            "DEBUG",
            3600,
        )
        assert before + 3600_000 <= c.reset_log_level_timeout_epoch <= time.time() * 1000 + 3600_000
        # a bad level refuses the whole request: nothing is merged
        bad = T.LogConfig(named_logger_level={"d": _update("INFO"), "e": _update("LOUD")})
        with pytest.raises(TApplicationException, match="not a log level"):
            client.setLogConfig(ticking, bad)
        assert sorted(client.getLogConfig(ticking).named_logger_level) == ["ROOT", "c"]
        assert client.getLogConfig("ticking").named_logger_level == stored  # by name too


def test_worker_applies_a_level_and_reverts_it_after_the_timeout(cluster, ticking):
    assert not HEARTBEAT_DEBUG.search(_worker_log(cluster, ticking))  # INFO until now
    with cluster.client("alice") as client:
        level = _update("DEBUG", TIMEOUT_SECS)
        client.setLogConfig(ticking, T.LogConfig(named_logger_level={"squall.worker": level}))
    first = wait_for(
        lambda: HEARTBEAT_DEBUG.search(_worker_log(cluster, ticking)), 30, "a DEBUG line"
    )
    reverted = wait_for(
        lambda: REVERTED.search(_worker_log(cluster, ticking)),
        TIMEOUT_SECS + 30,
        "squall.worker to go back to its own level",
    )
    took = _time(reverted.group(1)) - _time(first.group(1))
    # the first DEBUG line comes within a heartbeat (1 s) of the request
    assert TIMEOUT_SECS - 2 <= took <= TIMEOUT_SECS + 5

    def ticks_long_after_revert():
        later = [_time(m.group(1)) for m in TICKED.finditer(_worker_log(cluster, ticking))]
        return max(later) >= _time(reverted.group(1)) + 3

    wait_for(ticks_long_after_revert, 30, "the worker to log for 3 s after the revert")
    debug_after = [
        m
        for m in HEARTBEAT_DEBUG.finditer(_worker_log(cluster, ticking))
        if _time(m.group(1)) > _time(reverted.group(1))
    ]
    assert debug_after == []  # heartbeats each second: none logged at DEBUG any more


def test_debug_samples_tuples_into_the_event_log(cluster, ticking):
    assert not EVENT.search(_worker_log(cluster, ticking))
    with cluster.client("alice") as client:
        client.debug("ticking", "", True, 100.0)
        info = client.getTopologyInfo(ticking)
        assert info.component_debug == {ticking: T.DebugOptions(enable=True, samplingpct=100.0)}
        page = client.getTopologyPageInfo(ticking, ":all-time", False)
        assert page.debug_options == T.DebugOptions(enable=True, samplingpct=100.0)

        def sampled():
            numbers = [int(m.group(3)) for m in EVENT.finditer(_worker_log(cluster, ticking))]
            return len(numbers) >= 20 and numbers

        numbers = wait_for(sampled, 60, "20 sampled tuples in the worker log")
        assert numbers[:20] == list(range(numbers[0], numbers[0] + 20))  # 100%: every one

        client.debug(ticking, "ticks", True, 250.0)  # clamped as Storm clamps it
        client.debug(ticking, "", False, 0.0)
        info = client.getTopologyInfo(ticking)
        assert info.component_debug == {"ticks": T.DebugOptions(enable=True, samplingpct=100.0)}
        assert client.getComponentPageInfo(ticking, "ticks", ":all-time", False).debug_options
        with pytest.raises(TApplicationException, match="not a component"):
            client.debug(ticking, "nope", True, 10.0)
        client.debug(ticking, "ticks", False, 0.0)
        assert client.getTopologyInfo(ticking).component_debug == {}


def test_unknown_topology_is_not_alive(cluster, ticking):
    with cluster.client("alice") as client:
        with pytest.raises(T.NotAliveException, match="nope"):
            client.debug("nope", "", True, 10.0)
        # Storm's IDL declares no exceptions on the log calls: the refusal is named in a
        # TApplicationException
        with pytest.raises(TApplicationException, match="NotAliveException"):
            client.getLogConfig("nope")
        with pytest.raises(TApplicationException, match="NotAliveException"):
            client.setLogConfig("nope", T.LogConfig(named_logger_level={}))


def test_a_user_without_rights_is_refused(cluster, ticking):
    with cluster.client("bob") as client:  # a nimbus user, but not ticking's
        with pytest.raises(T.AuthorizationException, match="debug"):
            client.debug(ticking, "", True, 10.0)
        with pytest.raises(TApplicationException, match="AuthorizationException"):
            client.setLogConfig(ticking, T.LogConfig(named_logger_level={"x": _update("DEBUG")}))
        with pytest.raises(TApplicationException, match="AuthorizationException"):
            client.getLogConfig(ticking)
    with cluster.client("alice") as client:
        assert "x" not in client.getLogConfig(ticking).named_logger_level
        assert client.getTopologyInfo(ticking).component_debug == {}


def test_the_log_config_node_is_readable_only_as_stored_and_goes_with_the_topology(
    cluster, ticking
):
    """Runs last: kills the topology. Workers (the supervisor's login) read /logconfigs but
    cannot write it; a kill removes it."""
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    path = layout.logconfig(ticking)
    supervisor = cluster.zk_client("supervisor")
    try:
        data, _ = supervisor.get(path)
        assert "ROOT" in decode(data, path)
        with pytest.raises(NoAuthError):
            supervisor.set(path, b"{}")
    finally:
        supervisor.stop()
        supervisor.close()
    with cluster.client("alice") as client:
        client.killTopologyWithOpts("ticking", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("ticking"), 60, "ticking's removal")
    nimbus = cluster.zk_client("nimbus")
    try:
        wait_for(lambda: not nimbus.exists(path), 30, f"{path} to be removed")
    finally:
        nimbus.stop()
        nimbus.close()
