"""Worker logs stay under their cap whatever a worker writes, and keep its last lines."""

import os

from squall.local import wait_for
from squall.supervisor.worker_log import LogPump, RotatingLog, log_caps


def test_rotation_bounds_every_file_and_keeps_the_newest(tmp_path):
    log = RotatingLog(tmp_path / "w.log", max_bytes=1000, backups=2)
    for i in range(100):
        log.write(f"line {i:04d} ".encode() * 10)  # 100 bytes a write
    log.write(b"x" * 2500)  # one write larger than a file
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["w.log", "w.log.1", "w.log.2"]
    assert all((tmp_path / f).stat().st_size <= 1000 for f in files)
    assert (tmp_path / "w.log").read_bytes() == b"x" * 500


def test_no_backups_truncates_in_place(tmp_path):
    log = RotatingLog(tmp_path / "w.log", max_bytes=10, backups=0)
    log.write(b"0123456789abc")
    log.close()
    assert [p.name for p in tmp_path.iterdir()] == ["w.log"]
    assert (tmp_path / "w.log").read_bytes() == b"abc"


def test_pump_copies_a_pipe_and_keeps_its_tail(tmp_path):
    read_fd, write_fd = os.pipe()
    pump = LogPump(os.fdopen(read_fd, "rb"), RotatingLog(tmp_path / "w.log", 10_000, 1))
    pump.start()
    with os.fdopen(write_fd, "wb") as w:
        for i in range(3000):
            w.write(f"line {i}\n".encode())
    pump.join(10)
    assert not pump.is_alive()
    assert pump.tail(2) == "line 2998\nline 2999"
    total = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert total <= 20_000


class FullDisk(RotatingLog):
    """A log whose disk is full until `space` is set."""

    space = False

    def write(self, data: bytes) -> None:
        if not self.space:
            raise OSError(28, "No space left on device")
        super().write(data)


def test_a_full_disk_loses_output_but_the_pump_keeps_reading(tmp_path):
    read_fd, write_fd = os.pipe()
    log = FullDisk(tmp_path / "w.log", 10_000, 1)
    pump = LogPump(os.fdopen(read_fd, "rb"), log)
    pump.start()
    with os.fdopen(write_fd, "wb", buffering=0) as w:
        w.write(b"lost\n" * 20_000)  # more than a pipe holds: a pump that stopped blocks here
        wait_for(lambda: pump.lost == 100_000, 10, "the pump to read past the failures")
        log.space = True
        w.write(b"kept\n")
    pump.join(10)
    assert not pump.is_alive()
    assert (
        tmp_path / "w.log"
    ).read_bytes() == b"[squall: up to 100000 bytes of output lost]\nkept\n"
    assert pump.tail(1) == "kept"


def test_a_topology_may_lower_its_workers_log_caps_never_raise_them():
    supervisor = {"worker.log.max.bytes": 100_000, "worker.log.backups": 3}
    assert log_caps({"worker.log.max.bytes": 8192, "worker.log.backups": 1}, supervisor) == (
        8192,
        1,
    )
    assert log_caps({"worker.log.max.bytes": 10**9, "worker.log.backups": 50}, supervisor) == (
        100_000,
        3,
    )
    assert log_caps({}, supervisor) == (100_000, 3)
