"""A download of a topology file nimbus cannot read says whose copy it is and how to get it
back, not only the OS's reason (a supervisor reports this text as the topology's error)."""

import pytest

from squall.nimbus.blobs.code_store import CodeStore, CodeUnreadable, unreadable_message
from squall.nimbus.store import Store


def test_an_unreadable_copy_names_the_file_and_the_fix(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}", source="test")
    code = CodeStore(tmp_path / "stormdist", store)
    store.save_topology("t-1", "t", {}, {"spouts": {}, "bolts": {}}, b"code", 0.0)
    download = code.begin_download("t-1/code.tgz", 0.0)
    cached = tmp_path / "stormdist" / "t-1" / "code.tgz"
    cached.unlink()
    cached.mkdir()  # what a read of it meets: IsADirectoryError
    with pytest.raises(CodeUnreadable) as refused:
        code.read_chunk(download, 1.0)
    assert str(refused.value) == (
        f"nimbus cannot read its copy {cached} (Is a directory): remove {cached.parent} on "
        "the nimbus host and nimbus writes it again from its store"
    )
    assert download not in code.downloads  # the failed download is not kept


def test_the_message_falls_back_to_the_error_without_a_reason(tmp_path):
    text = unreadable_message(tmp_path / "x", OSError("odd"))
    assert text.startswith(f"nimbus cannot read its copy {tmp_path / 'x'} (odd): ")
