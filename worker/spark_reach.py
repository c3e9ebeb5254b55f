"""Whether a worker can reach the Spark its topology names, asked before PySpark is: a
`spark.remote` Connect server and a `spark://` standalone master that refuse or do not
answer would otherwise cost minutes of PySpark's and Spark's own retries (the task counted as
stalled, the worker restarted, and the topology saying only "stopped heartbeating"). The
answer is one line naming the address, the conf key and the cause, which the SparkBolt
reports as its error.

A Connect URL with a token for a host other than `localhost` makes PySpark speak TLS; a
server that answers the handshake with plain gRPC is said to be one, with the way out.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Any

from squall import spark_tunnel as st


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    key: str  # the conf key that names it
    tls: bool = False  # PySpark will speak TLS to it


def connect_endpoint(url: str) -> Endpoint:
    """A `spark.remote` URL's address, and whether PySpark uses TLS for it (by PySpark's own
    reading of the URL and of SPARK_CONNECT_AUTHENTICATE_TOKEN)."""
    from pyspark.sql.connect.client import DefaultChannelBuilder

    builder = DefaultChannelBuilder(url)
    host, _, port = builder.endpoint.rpartition(":")
    tls = builder.use_ssl or (builder.secure and builder.host != "localhost")
    return Endpoint(host.strip("[]"), int(port), "spark.remote", tls)


def master_endpoints(master: str) -> list[Endpoint]:
    """The masters of a `spark://h1:p1,h2:p2` URL; none for any other master."""
    if not master.startswith("spark://"):
        return []
    found = []
    for part in master.removeprefix("spark://").split(","):
        host, port = st.split_address(part if ":" in part else f"{part}:7077")
        found.append(Endpoint(host, port, "spark.master"))
    return found


def endpoints(conf: dict[str, Any]) -> list[Endpoint]:
    """What the topology conf points its Spark at; a `spark.remote` wins, as in PySpark."""
    if conf.get("spark.remote"):
        return [connect_endpoint(str(conf["spark.remote"]))]
    return master_endpoints(str(conf.get("spark.master") or ""))


def _try(endpoint: Endpoint, timeout: float) -> str | None:
    """None when it answers (and, for TLS, completes a handshake); else why not."""
    try:
        with socket.create_connection((endpoint.host, endpoint.port), timeout) as raw:
            if endpoint.tls:  # whether it speaks TLS at all: its certificate is gRPC's to judge
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                with context.wrap_socket(raw, server_hostname=endpoint.host):
                    pass
    except ssl.SSLError as exc:
        if exc.reason == "WRONG_VERSION_NUMBER":
            return (
                "it speaks plain gRPC, but PySpark uses TLS for a token sent to a host other "
                "than localhost; use `squall spark connect-server` there and "
                f"{st.REMOTE} here (docs/spark.md)"
            )
        return st.explain(exc, timeout)
    except OSError as exc:
        return st.explain(exc, timeout)
    return None


def unreachable(conf: dict[str, Any], timeout: float) -> str | None:
    """Why the topology's Spark cannot be reached (every master of a list failing), or None
    when it can, or when it is local."""
    found = endpoints(conf)
    causes = [_try(endpoint, timeout) for endpoint in found]
    if not found or any(cause is None for cause in causes):
        return None
    where = ", ".join(f"{e.host}:{e.port}" for e in found)
    why = "; ".join(dict.fromkeys(cause for cause in causes if cause))
    return f"cannot reach Spark at {where} ({found[0].key}): {why}"
