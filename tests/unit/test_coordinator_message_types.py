"""Every coordinator-log message type nimbus's decisions write is one its store accepts: a
type the store refuses failed the request after its other instructions had run."""

import re
from pathlib import Path

from squall.nimbus.store import MESSAGE_TYPES

NIMBUS = Path(__file__).resolve().parents[2] / "nimbus"


def test_each_logged_type_is_a_stored_type():
    written = set()
    for source in NIMBUS.rglob("*.py"):
        written |= set(re.findall(r'log_message\(\s*"([a-z-]+)"', source.read_text()))
    assert {"submit", "rebalance", "rebalance-conf", "set-config"} <= written  # the scan works
    assert written <= MESSAGE_TYPES
