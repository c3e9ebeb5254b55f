"""The Thrift server: framed transport, binary protocol (what Storm clients speak), and the
limits that keep a hostile client from taking nimbus down.

- A frame larger than nimbus.thrift.max_buffer_size, or with a negative length, closes that
  connection before anything is allocated for it.
- At most nimbus.thrift.max.connections connections are served at once; more are closed.
- A connection silent for nimbus.thrift.client.idle.secs is closed.
- Any error while decoding a request closes only that connection.
"""

from __future__ import annotations

import logging
import struct
import threading
from io import BytesIO
from typing import Any

from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import TServerSocket, TTransportException
from thriftpy2.transport.base import readall
from thriftpy2.transport.framed import TFramedTransport

log = logging.getLogger("squall.nimbus.server")


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
    def __init__(self, service: Any, conf: dict[str, Any]) -> None:
        self.service = service
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

    def _serve(self, client: Any) -> None:
        trans = BoundedFramedTransport(client, self.max_frame)
        proto = self.protocol.get_protocol(trans)
        assert self.processor is not None
        try:
            while not self.closed.is_set():
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
