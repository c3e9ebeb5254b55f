"""What getNimbusConf may show: the cluster conf less its secrets.

Every user nimbus.users admits may call getNimbusConf, so a password must never travel in
it: the ZooKeeper digest payload is replaced, the store URL keeps everything but its
password, and so is any key whose name says it holds a password, secret, token or private key
(or the path of one): a key added later is hidden without anyone remembering this list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

REDACTED = "<redacted>"
SECRET_KEYS = ("storm.zookeeper.auth.payload", "security.zookeeper.payload")
URL_KEYS = ("nimbus.store.url",)
SECRET_WORDS = ("password", "passwd", "secret", "token", "payload", "keystore", "private")
SECRET_SUFFIXES = (".key", ".key.path", ".keytab")


def is_secret(key: str) -> bool:
    lowered = key.lower()
    return any(w in lowered for w in SECRET_WORDS) or lowered.endswith(SECRET_SUFFIXES)


def redacted(conf: Mapping[str, Any]) -> dict[str, Any]:
    shown = dict(conf)
    for key in [*SECRET_KEYS, *(k for k in shown if isinstance(k, str) and is_secret(k))]:
        if shown.get(key):
            shown[key] = REDACTED
    for key in URL_KEYS:
        if shown.get(key):
            shown[key] = _without_password(str(shown[key]))
    return shown


def _without_password(url: str) -> str:
    try:
        parsed = make_url(url)
    except ArgumentError:
        return REDACTED  # not a URL we can take apart: show none of it
    if parsed.password is None:
        return url
    return parsed.render_as_string(hide_password=True)  # the password shows as ***
