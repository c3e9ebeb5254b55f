"""Storm's JSONP: with a `callback` query parameter the JSON answer comes wrapped as
`callback(<json>);` with content type application/javascript (UIHelpers.getJsonResponseBody).

The name is checked strictly, with Storm's pattern (dotted JavaScript identifiers, at most
128 characters), so a caller cannot inject script into the answer; a bad one is a 400 here
where Storm ignores it silently. And because a <script> tag from any other site's page would
carry the browser's client certificate, JSONP is refused to requests a browser marks as
cross-site (Sec-Fetch-Site): other sites cannot read the cluster through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .topology_json import BadRequest

PARAMETER = "callback"
NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
MAX_LENGTH = 128
MEDIA_TYPE = "application/javascript"


class CrossSite(PermissionError):
    """JSONP asked for by another site's page; answered with a 403."""


def callback(query: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    """The checked callback name of a request, None when it asks for plain JSON."""
    name = query.get(PARAMETER)
    if name is None:
        return None
    if len(name) > MAX_LENGTH or not NAME.fullmatch(name):
        raise BadRequest(
            f"callback must be a JavaScript name (letters, digits, _ and $, dotted, at most "
            f"{MAX_LENGTH} characters); got {name!r:.60}"
        )
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise CrossSite("JSONP is not served to another site's page")
    return name


def wrap(name: str, body: bytes) -> bytes:
    return name.encode() + b"(" + body + b");"
