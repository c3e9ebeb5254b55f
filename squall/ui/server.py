"""Runs the UI app on uvicorn at ui.host:ui.port: plain HTTP on a loopback address, else
HTTPS requiring a client certificate from the cluster CA (see access.py for who may do
what). The certificate's CN reaches the app through the protocol below, which puts it in
each request's scope state; uvicorn itself does not hand the peer certificate to apps."""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from squall.certificates import ui_server_files
from squall.security import security_on
from squall.tls import client_context, peer_principal

from .access import is_loopback
from .app import build_app
from .nimbus_link import UI_IDENTITY
from .token import QUERY, ensure_ui_token

log = logging.getLogger(__name__)
MAX_CONCURRENT = 256  # connections and requests in flight; each request is one Thrift call


class PrincipalH11Protocol(H11Protocol):
    """H11Protocol that records the TLS client certificate's CN per connection."""

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        principal = peer_principal(ssl_object.getpeercert()) if ssl_object else None
        self.app_state = {**self.app_state, "tls_principal": principal}


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
        http=PrincipalH11Protocol,
        lifespan="off",
        limit_concurrency=MAX_CONCURRENT,  # past it: 503 at once, not an unbounded queue
        timeout_keep_alive=5,
        log_level="warning",
        access_log=False,
        **tls,
    )


def ui_address(conf: dict[str, Any]) -> str:
    """Where to point a browser: on loopback with security on, with the UI's token (the
    page turns it into a cookie), as Jupyter prints its address."""
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
