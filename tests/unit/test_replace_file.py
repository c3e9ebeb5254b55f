"""squall.zk.identity.replace_file: what a supervisor writes as root into a directory a
worker's user owns replaces names there and never writes through a link the user left."""

from __future__ import annotations

import pytest

from squall.zk.identity import replace_file


def test_a_link_at_the_destination_is_replaced_not_followed(tmp_path):
    secret = tmp_path / "root-only"
    secret.write_text("keep me")
    code_dir = tmp_path / "code"
    code_dir.mkdir()
    (code_dir / "stormconf.json").symlink_to(secret)
    (code_dir / "stormconf.json.part").symlink_to(secret)  # the old fixed part name
    replace_file(code_dir / "stormconf.json", [b'{"a": ', b"1}"])
    assert secret.read_text() == "keep me"
    assert not (code_dir / "stormconf.json").is_symlink()
    assert (code_dir / "stormconf.json").read_bytes() == b'{"a": 1}'


def test_a_failed_download_leaves_no_part_file_and_the_old_file(tmp_path):
    dest = tmp_path / "stormjar.jar"
    dest.write_bytes(b"old")

    def chunks():
        yield b"new, half"
        raise ConnectionError("nimbus went away")

    with pytest.raises(ConnectionError):
        replace_file(dest, chunks())
    assert dest.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stormjar.jar"]
