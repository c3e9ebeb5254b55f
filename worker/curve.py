"""ZeroMQ CURVE on the sockets between a topology's workers (keys: squall.security.topology_keys).

A worker's receiving socket is a CURVE server with the topology's secret key. CURVE alone
lets in any client that knows the server's public key; a ZAP handler (pyzmq's
ThreadAuthenticator) narrows that to clients whose own public key is the topology's, which
only a holder of the topology's secret can prove. Sending sockets use the topology's keypair
as their own. A peer speaking plain ZeroMQ fails the handshake (libzmq drops it); a CURVE
client with another key is refused by the ZAP handler and logged at most once per 10 s.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable

import zmq
from zmq.auth.thread import ThreadAuthenticator

from squall.security.topology_keys import TopologyKeys

from .framing import Throttle

log = logging.getLogger("squall.worker.curve")
ZAP_DOMAIN = "squall-worker"
REFUSED_LOG_SECS = 10.0


class TopologyPeers:
    """ZAP credentials provider: admits the topology's own public key, nothing else."""

    def __init__(self, public: bytes, clock: Callable[[], float] = time.monotonic) -> None:
        self.public = public
        self.clock = clock
        self.refused = Throttle(REFUSED_LOG_SECS)

    def callback(self, domain: str, key: bytes) -> bool:
        if domain == ZAP_DOMAIN and hmac.compare_digest(key, self.public):
            return True
        self.refused.warn(
            log, "refused %d CURVE client(s) without the topology's key", now=self.clock()
        )
        return False


def serve(ctx: zmq.Context, sock: zmq.Socket, keys: TopologyKeys) -> ThreadAuthenticator:
    """Make `sock` (not yet bound) a CURVE server admitting only the topology's workers. The
    ZAP handler starts first: libzmq admits every CURVE client while none answers."""
    auth = ThreadAuthenticator(ctx, log=logging.getLogger("squall.worker.zap"))
    auth.start()
    auth.configure_curve_callback(ZAP_DOMAIN, TopologyPeers(keys.public))
    sock.zap_domain = ZAP_DOMAIN.encode()
    sock.curve_secretkey = keys.secret
    sock.curve_publickey = keys.public
    sock.curve_server = True
    return auth


def connect_as_peer(sock: zmq.Socket, keys: TopologyKeys) -> None:
    """Make `sock` (not yet connected) a CURVE client of the topology's workers."""
    sock.curve_serverkey = keys.public
    sock.curve_publickey = keys.public
    sock.curve_secretkey = keys.secret
