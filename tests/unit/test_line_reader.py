"""LineReader on real files: lines as Python's text mode gives them for \\n and \\r\\n files,
the last line without its newline, follow mode holding back a torn line, bad UTF-8 kept."""

from squall.line_reader import LineReader


def test_lines_in_batches_with_crlf_and_a_last_line_without_newline(tmp_path):
    path = tmp_path / "p"
    path.write_bytes(b"a\r\nb\n\nc d\r\nlast")
    reader = LineReader(path, follow=False)
    assert reader.read(2).to_pylist() == ["a", "b"]
    assert reader.read(10).to_pylist() == ["", "c d", "last"] and reader.at_end
    assert reader.read(10).to_pylist() == []


def test_skip_resumes_at_a_line(tmp_path):
    path = tmp_path / "p"
    path.write_text("".join(f"{i}\n" for i in range(250_000)))
    reader = LineReader(path, follow=False)
    assert reader.skip(200_001) == 200_001
    assert reader.read(2).to_pylist() == ["200001", "200002"]
    assert reader.skip(10**6) == 49_997


def test_follow_holds_back_a_torn_line_until_its_newline(tmp_path):
    path = tmp_path / "p"
    path.write_text("one\ntw")
    reader = LineReader(path, follow=True)
    assert reader.read(5).to_pylist() == ["one"] and reader.at_end
    with path.open("a") as f:
        f.write("o\nthree")
    assert reader.read(5).to_pylist() == ["two"]
    with path.open("a") as f:
        f.write("\n")
    assert reader.read(5).to_pylist() == ["three"]


def test_invalid_utf8_is_replaced_not_lost(tmp_path):
    path = tmp_path / "p"
    path.write_bytes(b"ok\nbad \xff byte\nnext\n")
    reader = LineReader(path, follow=False)
    assert reader.read(5).to_pylist() == ["ok", "bad \ufffd byte", "next"]


def test_a_line_longer_than_a_block(tmp_path):
    path = tmp_path / "p"
    long = "x" * (3 << 20)
    path.write_text(f"{long}\nshort\n")
    assert LineReader(path, follow=False).read(5).to_pylist() == [long, "short"]
