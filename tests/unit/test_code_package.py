"""Code packages cannot escape their directory when unpacked, and nimbus's check at submit
refuses what unpacking would, naming the package as sent (jar or tgz)."""

import io
import os
import tarfile
import zipfile

import pytest

from squall.code_package import PackageError, check, kind, pack_directory, unpack


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


def test_too_many_entries_are_refused_and_nothing_is_left(tmp_path):
    package = tgz(tmp_path, [(f"f{i}.py", "file") for i in range(51)])
    with pytest.raises(PackageError, match="more than 50 entries"):
        unpack(package, tmp_path / "out", max_entries=50)
    assert not (tmp_path / "out").exists()
    unpack(package, tmp_path / "ok", max_entries=51)
    assert len(list((tmp_path / "ok").iterdir())) == 51


def test_a_compression_bomb_is_refused_by_the_bytes_written(tmp_path):
    """4 MB of zeros packs to a few KB; the limit counts what unpacking writes."""
    path = tmp_path / "bomb.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for i in range(4):
            info = tarfile.TarInfo(f"zeros{i}.bin")
            info.size = 1 << 20
            tar.addfile(info, io.BytesIO(bytes(info.size)))
    assert path.stat().st_size < 50_000
    with pytest.raises(PackageError, match="more than 3000000 bytes"):
        unpack(path, tmp_path / "out", max_bytes=3_000_000)
    assert not (tmp_path / "out").exists()
    unpack(path, tmp_path / "ok", max_bytes=4 << 20)
    assert (tmp_path / "ok" / "zeros3.bin").stat().st_size == 1 << 20


def test_a_truncated_package_is_a_package_error(tmp_path):
    package = tgz(tmp_path, [("a.py", "file")])
    package.write_bytes(package.read_bytes()[:20])
    with pytest.raises(PackageError, match="cannot unpack"):
        unpack(package, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def jar_bytes(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as jar:
        for name, data in entries.items():
            jar.writestr(name, data)
    return buf.getvalue()


def test_check_accepts_what_unpack_accepts_and_writes_nothing(tmp_path):
    package = tgz(tmp_path, [("a.py", "file"), ("pkg/b.py", "file")])
    jar = tmp_path / "p.jar"
    jar.write_bytes(jar_bytes({"META-INF/MANIFEST.MF": b"v", "resources/s.py": b"x"}))
    before = sorted(tmp_path.rglob("*"))
    check(package)
    check(jar)
    assert sorted(tmp_path.rglob("*")) == before
    assert (kind(package), kind(jar)) == ("tgz", "jar")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not a code package", r"neither a jar \(a zip\) nor a tgz .* begins b'not a co'"),
        (b"PK\x03\x04" + bytes(40), "cannot unpack the jar"),
        (b"\x1f\x8b" + bytes(40), "cannot unpack the tgz"),
        (jar_bytes({"../evil.py": b"x"}), "jar entry '../evil.py' escapes its directory"),
        (jar_bytes({"resources/zeros": bytes(5000)}), "the jar unpacks to more than 1000 bytes"),
        (jar_bytes({f"r/{i}": b"x" for i in range(5)}), "the jar has more than 4 entries"),
    ],
)
def test_check_names_what_is_wrong_and_the_package_as_sent(tmp_path, data, problem):
    package = tmp_path / "code.tgz"  # nimbus's stored name: never the one in a message
    package.write_bytes(data)
    with pytest.raises(PackageError, match=problem) as refused:
        check(package, max_bytes=1000, max_entries=4)
    assert "code.tgz" not in str(refused.value)


def test_a_tgz_bomb_is_refused_by_check_as_by_unpack(tmp_path):
    path = tmp_path / "bomb.tgz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("zeros.bin")
        info.size = 1 << 20
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    with pytest.raises(PackageError, match="the tgz unpacks to more than 1000 bytes"):
        check(path, max_bytes=1000)
    with pytest.raises(PackageError, match="tgz entry 'l' is not a plain file"):
        check(tgz(tmp_path, [("l", "symlink")]))
