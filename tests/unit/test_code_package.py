"""Code packages cannot escape their directory when unpacked."""

import io
import os
import tarfile

import pytest

from squall.code_package import PackageError, pack_directory, unpack


def tgz(tmp_path, members):
    path = tmp_path / "p.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = 2
                tar.addfile(info, io.BytesIO(b"hi"))
    return path


@pytest.mark.parametrize(
    "member", [("../evil.py", "file"), ("/abs.py", "file"), ("a/../../x", "file"), ("l", "symlink")]
)
def test_hostile_entries_are_refused(tmp_path, member):
    with pytest.raises(PackageError):
        unpack(tgz(tmp_path, [member]), tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def test_pack_and_unpack_round_trip_skipping_caches(tmp_path):
    src = tmp_path / "src"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "topo.py").write_text("x = 1")
    (src / "pkg" / "__pycache__" / "c.pyc").write_bytes(b"x")
    (src / ".hidden").write_text("secret")
    data = pack_directory(src, 10_000_000)
    (tmp_path / "p.tgz").write_bytes(data)
    unpack(tmp_path / "p.tgz", tmp_path / "out")
    assert (tmp_path / "out" / "topo.py").read_text() == "x = 1"
    assert not (tmp_path / "out" / ".hidden").exists()
    assert not (tmp_path / "out" / "pkg" / "__pycache__").exists()


def test_pack_size_limit(tmp_path):
    (tmp_path / "big.bin").write_bytes(os.urandom(100_000))
    with pytest.raises(PackageError, match="more than"):
        pack_directory(tmp_path, 1000)
