"""What getNimbusConf may show: the cluster conf less its secrets.

Anyone who reaches nimbus's Thrift port can call getNimbusConf (Thrift is not yet
authenticated), so a password must never travel in it: the ZooKeeper digest payload is
replaced and the store URL keeps everything but its password.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

REDACTED = "<redacted>"
SECRET_KEYS = ("storm.zookeeper.auth.payload", "security.zookeeper.payload")
URL_KEYS = ("nimbus.store.url",)


def redacted(conf: Mapping[str, Any]) -> dict[str, Any]:
    shown = dict(conf)
    for key in SECRET_KEYS:
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
