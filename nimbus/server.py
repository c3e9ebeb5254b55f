"""The Thrift server: framed transport, binary protocol (what Storm clients speak), and the
limits that keep a hostile client from taking nimbus down.

- A frame larger than nimbus.thrift.max_buffer_size, or with a negative length, closes that
  connection before anything is allocated for it.
- At most nimbus.thrift.max.connections connections are served at once; more are closed.
- A connection silent for nimbus.thrift.client.idle.secs is closed.
- Any error while decoding a request closes only that connection.
- With an ssl_context (security on), each connection's TLS handshake runs on its own thread
  with a deadline, never in the accept loop, and must present a client certificate signed
  by the cluster CA; the certificate's CN is bound as the request's principal
  (request_context) around every call on that connection.
"""

from __future__ import annotations

import logging
import ssl
import struct
import threading
from io import BytesIO
from typing import Any

from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import TServerSocket, TTransportException
from thriftpy2.transport.base import readall
from thriftpy2.transport.framed import TFramedTransport

from squall.tls import peer_principal

from .request_context import RequestContext, bind

log = logging.getLogger("squall.nimbus.server")
HANDSHAKE_SECS = 10  # a client that has not finished its TLS handshake by then is dropped


class BoundedFramedTransport(TFramedTransport):
    def __init__(self, trans: Any, max_frame: int) -> None:
        super().__init__(trans)
        self.max_frame = max_frame

    def read_frame(self) -> None:
        (size,) = struct.unpack("!i", readall(self._trans.read, 4))
        if size < 0 or size > self.max_frame:
            raise TTransportException(TTransportException.UNKNOWN, f"frame of {size} bytes refused")
        self._rbuf = BytesIO(readall(self._trans.read, size))


class NimbusServer:
    def __init__(
        self, service: Any, conf: dict[str, Any], ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.service = service
        self.ssl_context = ssl_context
        self.idle_secs = conf["nimbus.thrift.client.idle.secs"]
        self.processor: TProcessor | None = None
        self.max_frame = conf["nimbus.thrift.max_buffer_size"]
        self.slots = threading.BoundedSemaphore(conf["nimbus.thrift.max.connections"])
        self.socket = TServerSocket(
            host=conf["nimbus.host"],
            port=conf["nimbus.thrift.port"],
            client_timeout=conf["nimbus.thrift.client.idle.secs"] * 1000,
        )
        self.protocol = TBinaryProtocolFactory()
        self.closed = threading.Event()

    def listen(self) -> int:
        """Bind and listen; returns the port (useful when configured as 0)."""
        self.socket.listen()
        return self.socket.sock.getsockname()[1]

    def serve_forever(self, handler: Any) -> None:
        self.processor = TProcessor(self.service, handler)
        while not self.closed.is_set():
            try:
                client = self.socket.accept()
            except Exception:  # noqa: BLE001 - the accept loop must survive anything
                if self.closed.is_set():
                    return
                log.exception("accept failed")
                continue
            if not self.slots.acquire(blocking=False):
                log.warning("too many Thrift connections; closing a new one")
                client.close()
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _handshake(self, client: Any) -> RequestContext:
        """TLS with the client when configured (its socket is replaced by the TLS one); the
        connection's identity and address."""
        peer = client.sock.getpeername()
        address = f"{peer[0]}:{peer[1]}"
        if self.ssl_context is None:
            return RequestContext(principal=None, address=address)
        client.sock.settimeout(HANDSHAKE_SECS)
        client.sock = self.ssl_context.wrap_socket(
            client.sock, server_side=True, do_handshake_on_connect=False
        )
        client.sock.do_handshake()
        client.sock.settimeout(self.idle_secs)
        principal = peer_principal(client.sock.getpeercert())
        if not principal:
            raise ssl.SSLError(f"the client certificate from {address} names no CN")
        return RequestContext(principal=principal, address=address)

    def _serve(self, client: Any) -> None:
        trans = BoundedFramedTransport(client, self.max_frame)
        proto = self.protocol.get_protocol(trans)
        assert self.processor is not None
        try:
            ctx = self._handshake(client)
        except (ssl.SSLError, OSError) as exc:
            log.info("refused a Thrift connection at the TLS handshake: %s", exc)
            trans.close()
            self.slots.release()
            return
        try:
            while not self.closed.is_set():
                with bind(ctx):
                    self.processor.process(proto, proto)
        except TTransportException:
            pass
        except Exception as exc:  # noqa: BLE001 - a bad request closes its connection only
            log.info("closing a Thrift connection after a bad request: %s", exc)
        finally:
            trans.close()
            self.slots.release()

    def close(self) -> None:
        self.closed.set()
        self.socket.close()
