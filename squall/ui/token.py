"""The secret that lets a browser or an HTTP client use `squall ui` on a loopback address.

On loopback the UI is plain HTTP (no certificates in a browser), but every user of the host
can reach it and it acts as an admin towards nimbus: so, as Jupyter does, it wants a token
made at first start and readable only by the cluster's OS user (`security.dir`/ui.token,
0600). A request carries it as `Authorization: Bearer <token>` (curl, Prometheus's
`credentials_file`, and the page's own script) or as `?token=`. The address that `squall ui`
and `squall local` print ends in `?token=`: the page's script moves it into the localStorage
of the UI's origin (scheme, host and port) and cleans the address. It is never a cookie:
cookies are not port-scoped, so a browser would send one to every other server on
127.0.0.1, and SameSite does not help. Open mode (`security: false`) and HTTPS with client
certificates need none.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from squall.security.certificates import _locked, _write_new
from squall.security.mode import credentials_dir, security_on

TOKEN_FILE = "ui.token"
QUERY = "token"


def token_path(conf: Mapping[str, Any]) -> Path:
    return credentials_dir(dict(conf)) / TOKEN_FILE


def ensure_ui_token(conf: Mapping[str, Any]) -> str | None:
    """The UI's token, made if missing (never replaced: HA UIs sharing the directory agree);
    None in open mode."""
    if not security_on(dict(conf)):
        return None
    path = token_path(conf)
    if not path.exists():
        with _locked(path.parent):
            _write_new(path, secrets.token_urlsafe(32).encode(), 0o600)
    return path.read_text().strip()


def presented(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The token a request carries, wherever it carries it; None when it carries none.
    (A cookie is not looked at: see the module's docstring.)"""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get(QUERY) or None


def matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
