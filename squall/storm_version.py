"""The version squall reports where Storm's summaries carry one.

Storm tooling reads NimbusSummary.version and SupervisorSummary.version as a Storm version and
picks its code paths by it: streamparse parses it with `packaging` and compares the major,
Storm's own SimpleVersion matches `^(\\d+)[.\\-_]+(\\d+).*`. squall's own "0.1.0" read there
says "Storm older than 1.0". squall speaks Storm 2's wire (its IDL is a superset of Storm
2.8.8's), so it reports "2.8.8+squall.<squall version>": a valid PEP 440 version (a local
segment) whose major and minor are Storm's, and which still says it is squall.
"""

from __future__ import annotations

import re

STORM_WIRE_VERSION = "2.8.8"  # the Storm release whose storm.thrift squall's IDL contains


def storm_compatible(squall_version: str) -> str:
    """`squall_version` as Storm tooling should read it, e.g. "2.8.8+squall.0.1.0"."""
    local = re.sub(r"[^A-Za-z0-9]+", ".", squall_version).strip(".").lower() or "unknown"
    return f"{STORM_WIRE_VERSION}+squall.{local}"
