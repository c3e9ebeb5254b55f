"""Runs the UI app on uvicorn at ui.host:ui.port: plain HTTP on a loopback address, else
HTTPS requiring a client certificate from the cluster CA (see access.py for who may do
what). The certificate's CN reaches the app through the protocol below, which puts it in
each request's scope state; uvicorn itself does not hand the peer certificate to apps."""

from __future__ import annotations

import itertools
import logging
import ssl
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from squall.security.certificates import ui_server_files
from squall.security.mode import security_on
from squall.security.tls import client_context, peer_principal

from .access import is_loopback
from .app import VOUCH, build_app
from .connections import Limits, Seen, to_close
from .nimbus_link import UI_IDENTITY
from .token import QUERY, ensure_ui_token

log = logging.getLogger(__name__)


class PrincipalH11Protocol(H11Protocol):
    """H11Protocol that records the TLS client certificate's CN per connection."""

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        principal = peer_principal(ssl_object.getpeercert()) if ssl_object else None
        self.app_state = {**self.app_state, "tls_principal": principal}


class GuardedH11Protocol(PrincipalH11Protocol):
    """Admits every connection, closing the oldest unproven ones past the limits, and
    closes a connection with no complete request head within the header deadline
    (squall/ui/connections.py says why). `limits` and `open_now` are set per server by
    guarded_protocol()."""

    limits: Limits = Limits()
    open_now: dict[int, GuardedH11Protocol] = {}
    ids = itertools.count(1)

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.seen = Seen(next(self.ids), str((self.client or ("?",))[0]), time.monotonic(), False)
        self.app_state = {**self.app_state, VOUCH: self.vouch}
        self.open_now[self.seen.id] = self
        self.deadline: Any = None
        self.arm_header_deadline()
        views = [c.seen for c in self.open_now.values()]
        for id_ in to_close(views, self.seen, self.limits):
            self.open_now.pop(id_).transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.open_now.pop(self.seen.id, None)
        if self.deadline is not None:
            self.deadline.cancel()
        super().connection_lost(exc)

    def vouch(self) -> None:
        """The app admitted a request of this connection: it is never closed for others."""
        if not self.seen.proven:
            self.seen = Seen(self.seen.id, self.seen.peer, self.seen.opened, True)

    def arm_header_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        armed = self.cycle
        self.deadline = self.loop.call_later(self.limits.header_secs, self.header_late, armed)

    def header_late(self, armed: Any) -> None:
        idle = armed is None or armed.response_complete  # not inside a request's handling
        if self.cycle is armed and idle and not self.transport.is_closing():  # no new head
            self.transport.abort()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self.arm_header_deadline()


def guarded_protocol(limits: Limits) -> type[GuardedH11Protocol]:
    """A protocol class with its own server's connection table."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits, "open_now": {}})


def uvicorn_config(conf: dict[str, Any]) -> uvicorn.Config:
    host, port = str(conf["ui.host"]), int(conf["ui.port"])
    if security_on(conf):
        client_context(conf, UI_IDENTITY)  # a missing "ui" certificate: one clear error now
    tls: dict[str, Any] = {}
    if not is_loopback(host):
        if not security_on(conf):
            raise ValueError(
                f"ui.host {host} is not a loopback address: the UI then needs the cluster's "
                "certificates to authenticate its users (security: true)"
            )
        pem, key, ca = ui_server_files(conf)
        tls = {
            "ssl_certfile": str(pem),
            "ssl_keyfile": str(key),
            "ssl_ca_certs": str(ca),
            "ssl_cert_reqs": ssl.CERT_REQUIRED,
        }
    return uvicorn.Config(
        build_app(conf),
        host=host,
        port=port,
        http=guarded_protocol(Limits()),
        lifespan="off",
        limit_concurrency=None,  # it counted idle strangers: the protocol's limits instead
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,  # a request head's bytes
        log_level="warning",
        access_log=False,
        **tls,
    )


def ui_address(conf: dict[str, Any]) -> str:
    """Where to point a browser: on loopback with security on, with the UI's token (the
    page moves it into its origin's localStorage), as Jupyter prints its address."""
    host, port = str(conf["ui.host"]), int(conf["ui.port"])
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        return f"https://{shown}:{port}/"
    token = ensure_ui_token(conf)
    return f"http://{shown}:{port}/" + (f"?{QUERY}={token}" if token else "")


def run_ui(conf: dict[str, Any], announce: Callable[[str], None] = log.info) -> None:
    config = uvicorn_config(conf)
    announce(f"squall ui on {ui_address(conf)}")
    uvicorn.Server(config).run()
