"""Who may use `squall ui`, as a pure policy over plain data and one request's headers.

The UI calls nimbus as its own identity ("ui", a nimbus admin), so whoever reaches it acts
with those rights. Hence: on a loopback ui.host (the default) it is plain HTTP for the
host's own users, who must present the UI's token (token.py: a host's other users are
strangers to a cluster that acts as an admin) with every API request; the page's own files
(PAGE) hold nothing secret and are served without it, since a browser's navigation cannot
carry a header and the token is no cookie (cookies are not port-scoped: any other server on
127.0.0.1 would receive it); on any other address it speaks HTTPS and
wants a client certificate from the cluster CA whose CN is in nimbus.admins (anything) or
ui.users (the reads). Open mode (security: false) on loopback wants neither. Always: the
Host header must name the UI (no DNS rebinding), and a POST a browser sends from another
site's page is refused (no CSRF).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .token import matches, presented

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
PAGE = frozenset({"/", "/index.html", "/ui.js", "/ui.css"})  # squall/ui/static


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _names(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset([value]) if value else frozenset()
    return frozenset(str(v) for v in value or ())


@dataclass(frozen=True)
class AccessPolicy:
    needs_certificate: bool
    host_names: frozenset[str]  # what the Host header may name
    readers: frozenset[str]
    admins: frozenset[str]
    token: str | None = None  # wanted from every request (loopback with security on)

    @staticmethod
    def from_conf(
        conf: Mapping[str, Any], extra_names: tuple[str, ...] = (), token: str | None = None
    ) -> AccessPolicy:
        """`token`: the UI's (token.py), wanted on a loopback ui.host; None: not wanted."""
        host = str(conf.get("ui.host") or "127.0.0.1")
        local = is_loopback(host)
        names = {host.strip("[]"), *LOOPBACK_NAMES, *extra_names}
        if not local:
            names |= {socket.getfqdn(), socket.gethostname()}
        admins = _names(conf.get("nimbus.admins"))
        return AccessPolicy(
            needs_certificate=not local,
            host_names=frozenset(n.lower() for n in names if n),
            readers=admins | _names(conf.get("ui.users")),
            admins=admins,
            token=token if local else None,
        )


def _host_only(netloc: str) -> str:
    """ "host:port", "[::1]:8080" or "host" -> the host, lower case ("" for what does not
    parse: "[" raised ValueError, a 500 with a stack trace for anyone)."""
    try:
        parsed = urlsplit("//" + netloc)
        return (parsed.hostname or "").lower()
    except ValueError:
        return ""


def _netloc(origin: str) -> str | None:
    """An Origin header's host[:port], lower case; None when it does not parse."""
    try:
        return urlsplit(origin).netloc.lower()
    except ValueError:
        return None


def decide(
    policy: AccessPolicy,
    method: str,
    host_header: str,
    origin: str | None,
    principal: str | None,
    token: str | None = None,
    path: str = "",
) -> tuple[int, str] | None:
    """None to serve the request, else (status, why). The page's files need no token, but
    a wrong one (a stale printed address) is refused at once."""
    if _host_only(host_header) not in policy.host_names:
        return 400, f"the Host header {host_header!r} does not name this UI"
    page = path in PAGE and method in ("GET", "HEAD") and token is None
    if policy.token is not None and not page and not matches(policy.token, token):
        return 401, (
            "this UI wants its token: open the address `squall ui` printed (it ends in "
            "?token=...) in this browser, or send "
            "'Authorization: Bearer <the token in security.dir/ui.token>'"
        )
    if policy.needs_certificate:
        if principal is None:
            return 403, "a client certificate from the cluster CA is required"
        if principal not in policy.readers:
            return 403, f"{principal} is not in ui.users or nimbus.admins"
        if method not in ("GET", "HEAD") and principal not in policy.admins:
            return 403, f"{principal} may read but not act (not in nimbus.admins)"
    cross_site = origin is not None and (origin == "null" or _netloc(origin) != host_header.lower())
    if method not in ("GET", "HEAD") and cross_site:
        return 403, f"refused a {method} from another site's page ({origin})"
    return None


def refusal(policy: AccessPolicy, request: Any) -> tuple[int, str] | None:
    """decide() for a Starlette request; the TLS principal is put in the scope's state by
    the server's protocol (squall.ui.server)."""
    state = request.scope.get("state") or {}
    return decide(
        policy,
        request.method,
        request.headers.get("host", ""),
        request.headers.get("origin"),
        state.get("tls_principal"),
        presented(request.headers, request.query_params),
        request.url.path,
    )


def credentialed(policy: AccessPolicy, request: Any) -> bool:
    """Whether an admitted request proved who sent it (its token; on HTTPS the handshake's
    certificate; open mode has nothing to prove): its connection is then never closed to
    make room for others (squall/ui/connections.py)."""
    if policy.token is None:
        return True
    return matches(policy.token, presented(request.headers, request.query_params))
