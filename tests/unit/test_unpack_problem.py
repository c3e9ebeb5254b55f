"""A package that does not unpack on a supervisor, though nimbus accepted it, says what to
do: the supervisor reports this text as the topology's error."""

import pytest

from squall.code_package import PackageError, unpack
from squall.supervisor.code_fetcher import unpack_problem


def test_a_corrupt_package_says_both_ways_out(tmp_path):
    package = tmp_path / "code.tgz"
    package.write_bytes(b"\x1f\x8b" + bytes(40))
    with pytest.raises(PackageError) as failed:
        unpack(package, tmp_path / "code", 10_000_000, 1000)
    text = unpack_problem(str(failed.value))
    assert text.startswith("cannot unpack the tgz: ")
    assert "kill the topology and submit it again" in text
    assert "supervisor.code.max.bytes or supervisor.code.max.entries is below nimbus's" in text
