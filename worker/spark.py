"""The worker's one SparkSession, started on first use (only workers running a SparkBolt pay
for a JVM). `spark.master` comes from the topology conf: local[*] by default, any Spark
cluster URL works, and `spark.remote` selects a Spark Connect endpoint.

How a micro-batch reaches the session and comes back is spark_handoff.py's.

The driver listens only on the worker's own address (spark.driver.host and
spark.driver.bindAddress, and SPARK_LOCAL_IP for the servers that read only that), as the
worker's ZeroMQ port does, unless the topology conf names its own.

Under a supervisor that runs a shared Spark Connect server (squall/spark_connect.py), a
topology that names no Spark of its own gets a Connect session there instead: the worker
waits for the server to be ready (supervisor.spark.connect.start.timeout.secs) and starts a
SparkSession of its own if it never is.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from squall import spark_connect as sc
from squall import spark_tunnel as st
from squall.components import Batch, Tuple
from squall.security.certificates import SUPERVISOR
from squall.security.mode import security_on

from .root_cause import KnownCause, jvm_exit_cause
from .spark_forwarder import Forwarder
from .spark_handoff import Handoff, result_table
from .spark_reach import unreachable
from .stderr_tail import StderrTail

_NOT_FORWARDED = {"spark.master", "spark.remote"}
log = logging.getLogger("squall.worker")
STALL = "topology.executor.stall.secs"
AUTH_FILE = "topology.spark.auth.file"


def submit_args(current: str | None, auth_file: str) -> str:
    """PYSPARK_SUBMIT_ARGS with a Spark properties file (spark.authenticate and its secret,
    for a standalone master started with it): spark-submit reads the secret from the file,
    so it is on no command line (PySpark puts the session's settings there) and in no conf."""
    rest = current or "pyspark-shell"
    return f"--properties-file {shlex.quote(auth_file)} {rest}"


def session_settings(
    conf: dict[str, Any], host: str, address: str, remote: bool | None = None
) -> dict[str, str]:
    """What the SparkSession builder is given besides the master/remote and app name: the
    conf's `spark.` keys, and for a driver in this process (not Spark Connect: `remote`,
    by default whether the conf names a spark.remote) no UI, the driver bound to the
    worker's address and (a local master) Spark's RPC authentication. With security on a
    topology's conf cannot undo those three (a submitter could otherwise open the driver's
    ports, or its UI, on every interface); in open mode it may. A Connect session applies
    the SQL keys and skips the rest."""
    if remote is None:
        remote = bool(conf.get("spark.remote"))
    # a Connect session can set SQL settings only (the server's JVM is started already)
    prefix = "spark.sql." if remote else "spark."
    settings = {
        key: str(value)
        for key, value in conf.items()
        if key.startswith(prefix) and key not in _NOT_FORWARDED
    }
    if remote:
        return settings
    defaults = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": host,
        "spark.driver.bindAddress": address,
    }
    if not security_on(conf):
        return {**defaults, **settings}
    enforced = {"spark.ui.enabled": "false", "spark.driver.bindAddress": address}
    if str(conf.get("spark.master", "local")).startswith("local"):
        # Spark makes its own secret for a local master, so the driver's RPC and block
        # ports answer only this JVM's own parts, not whoever reaches the worker's address
        enforced["spark.authenticate"] = "true"
    return {**defaults, **settings, **enforced}


class SparkHolder:
    def __init__(
        self,
        conf: dict[str, Any],
        app_name: str,
        handoff_dir: Path,
        host: str = "127.0.0.1",
        address: str = "127.0.0.1",
        shared_dir: Path | None = None,
    ) -> None:
        """`host` and `address`: the worker's host name and the IP it binds (loopback for
        the in-process runner); `shared_dir`: the supervisor's Spark Connect server to use
        (its state and token files), None for a Spark of this worker's own."""
        self.conf = conf
        self.shared_dir = shared_dir
        self.shared: sc.ServerState | None = None  # the server this session is on
        self.app_name = app_name
        self.host = host
        self.address = address
        self._session: Any = None
        self._remote = False  # a Spark Connect session: no SparkContext
        self.forwarder: Forwarder | None = None  # to topology.spark.connect.remote
        self.lost: str | None = None  # why alive() found the Spark gone, when it says why
        self._lock = threading.Lock()
        self.handoff = Handoff(conf, handoff_dir, on_this_host=shared_dir is not None)

    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                os.environ.setdefault("SPARK_LOCAL_IP", self.address)
                from pyspark.sql import SparkSession

                builder = SparkSession.builder.appName(self.app_name)
                remote = self._shared_url() or self._tunnel_url() or self._own_spark()
                if remote:
                    builder = builder.remote(remote)
                else:
                    builder = builder.master(self.conf.get("spark.master", "local[*]"))
                settings = session_settings(self.conf, self.host, self.address, bool(remote))
                for key, value in settings.items():
                    builder = builder.config(key, value)
                session = _started(builder)
                self._remote = bool(remote)
                if remote:
                    _bound_retries(session)
                # The first job pays for class loading and code generation; pay it here,
                # before the task reports ready, not on the first batch of real tuples: the
                # way a micro-batch goes (the handoff, an aggregation, the result as Arrow).
                try:
                    warm = pa.table({"x": ["a", "b", "b"], "n": [1, 2, 3]})
                    with self.handoff.frame(session, partial(self._cores, session), warm) as df:
                        result_table(df.groupBy("x").sum("n"))
                except BaseException:
                    session.stop()  # not kept: nothing else would stop it
                    raise
                self._session = session
            return self._session

    def _shared_url(self) -> str | None:
        """The supervisor's server's URL once it is ready; None (this worker starts a Spark
        of its own) when there is none, it failed, or it is not ready in time."""
        if self.shared_dir is None:
            return None
        # at most half the stall limit: a task waiting here counts as busy, and its own
        # SparkSession must still fit in the rest
        wait = min(self.conf.get(sc.START_TIMEOUT, 120), self.conf.get(STALL, 120) / 2)
        deadline = time.monotonic() + wait
        state = sc.read_state(self.shared_dir)
        while state is None or state.state == sc.STARTING:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
            state = sc.read_state(self.shared_dir)
        if state is None or state.state != sc.READY:
            why = state.reason if state and state.reason else "not ready in time"
            log.warning(
                "the supervisor's Spark Connect server is unusable (%s): "
                "starting a Spark of this worker's own",
                why,
            )
            self.shared_dir = None
            return None
        self.shared = state
        os.environ[sc.TOKEN_ENV] = sc.token_file(self.shared_dir).read_text().strip()
        return sc.remote_url(state.port)

    def _tunnel_url(self) -> str | None:
        """With topology.spark.connect.remote: the URL of a forwarder to that server (its
        token given to PySpark in the environment, never in the URL); None without it."""
        remote = self.conf.get(st.REMOTE)
        if not remote:
            return None
        try:
            address = st.split_address(str(remote))
        except ValueError as exc:
            raise KnownCause(f"{st.REMOTE}: {exc}") from None
        identity = str(self.conf.get(st.CLIENT_IDENTITY) or SUPERVISOR)
        if self.forwarder is not None:  # a session that failed to start left it
            self.forwarder.close()
            self.forwarder = None
        forwarder = Forwarder(
            st.dialer_context(self.conf, identity), address, float(self.conf.get(st.TIMEOUT, 10))
        )
        try:
            port = forwarder.open()
        except st.SparkUnreachable as exc:
            raise KnownCause(str(exc)) from None
        self.forwarder = forwarder
        os.environ[sc.TOKEN_ENV] = forwarder.token
        return sc.remote_url(port)

    def _own_spark(self) -> str | None:
        """The topology's spark.remote, if any, once its Spark (a Connect server or a
        spark:// master) answers; a KnownCause saying why not, at once, else."""
        cause = unreachable(self.conf, float(self.conf.get(st.TIMEOUT, 10)))
        if cause is not None:
            raise KnownCause(cause)
        auth_file = self.conf.get(AUTH_FILE)
        if auth_file and not self.conf.get("spark.remote"):
            os.environ["PYSPARK_SUBMIT_ARGS"] = submit_args(
                os.environ.get("PYSPARK_SUBMIT_ARGS"), str(auth_file)
            )
        return self.conf.get("spark.remote") or None

    def alive(self) -> bool:
        """False once a started SparkSession's SparkContext has stopped (the JVM died or
        Spark shut it down), or the supervisor's server it uses has gone or been replaced:
        no later job can run. True before the start, and for a Spark Connect server of the
        topology's own, whose side this process cannot see."""
        session = self._session
        if session is not None and self.shared is not None and self.shared_dir is not None:
            now = sc.read_state(self.shared_dir)
            return now == self.shared and sc.pid_alive(self.shared.pid)
        if session is not None and self._remote:
            self.lost = self._unreachable_now()
            return self.lost is None
        if session is None:
            return True
        try:
            return not session.sparkContext._jsc.sc().isStopped()
        except Exception:  # noqa: BLE001 - py4j raises when the JVM is gone
            return False

    def _unreachable_now(self) -> str | None:
        """Why the Connect server this session was on cannot be reached now (asked after a
        job failed), or None."""
        if self.forwarder is not None:
            try:
                self.forwarder.probe()
            except st.SparkUnreachable as exc:
                return str(exc)
            return None
        return unreachable(self.conf, float(self.conf.get(st.TIMEOUT, 10)))

    def stop(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.stop()
                self._session = None
            if self.forwarder is not None:
                self.forwarder.close()
                self.forwarder = None
        self.handoff.clear()

    @contextlib.contextmanager
    def dataframe(self, fields: Sequence[str], items: Sequence[Tuple | Batch]) -> Iterator[Any]:
        """The DataFrame of a micro-batch (spark_handoff.py), valid until the block ends."""
        session = self.session()
        with self.handoff.dataframe(session, partial(self._cores, session), fields, items) as df:
            yield df

    def _cores(self, session: Any) -> int:
        """The session's cores, asked per batch (a cluster's grow as its executors register):
        a micro-batch's Parquet file has a row group for each. A Connect session has no
        SparkContext to ask; the shared server runs local[*] on this host."""
        if self._remote:
            return os.cpu_count() or 1
        return session.sparkContext.defaultParallelism


CONNECT_RETRIES = 5  # PySpark's waits 0.05, 0.2, 0.8, 3.2, 12.8 s: about 17 s in all


def _bound_retries(session: Any) -> None:
    """A Connect client retries an unavailable server for 10 minutes by default, far past
    the stall limit: the task then counted as stalled and the worker was restarted without
    a word of the cause. About 17 s of retries, then the job fails, and alive() asks
    whether the server can still be reached, which becomes the task's error."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    session.client.set_retry_policies([DefaultPolicy(max_retries=CONNECT_RETRIES)])


def _started(builder: Any) -> Any:
    """The builder's session. When the JVM exits before PySpark reaches it, the reason is
    only in what the JVM printed: that becomes the error's cause (KnownCause)."""
    with StderrTail() as tail:
        try:
            return builder.getOrCreate()
        except Exception as exc:
            gone = "Java gateway process exited" in str(exc)
            cause = jvm_exit_cause(tail.lines()) if gone else None
            if cause is None:
                raise
            raise KnownCause(cause) from exc
