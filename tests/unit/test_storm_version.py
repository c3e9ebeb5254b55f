"""The version Storm tooling reads: Storm 2 to both of Storm's parsers, squall's own inside."""

import re

from packaging.version import Version

from squall.storm_version import storm_compatible

STORM_SIMPLE_VERSION = re.compile(r"^(\d+)[\.\-\_]+(\d+).*$")  # Storm's SimpleVersion


def test_storm_parsers_read_storm_2_and_squall_stays_visible():
    for own in ("0.1.0", "0.2.0rc1", "0.0.0+unknown", "1.0.0.dev3+g1234"):
        reported = storm_compatible(own)
        assert Version(reported).major == 2  # streamparse: packaging.parse_version
        match = STORM_SIMPLE_VERSION.match(reported)
        assert match and (match.group(1), match.group(2)) == ("2", "8")
        assert "squall" in reported
    assert storm_compatible("0.1.0") == "2.8.8+squall.0.1.0"
    assert storm_compatible("") == "2.8.8+squall.unknown"
