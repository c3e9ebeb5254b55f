"""The pure rules of Storm's dynamic log levels (squall.log_config): checking a request,
merging it into the stored config as Storm's nimbus does, which level each logger has at a
moment in a worker, and the stored record's strict decoding."""

import logging

import pytest

from squall import log_config as lc
from squall.log_config import LoggerLevel

NOW_MS = 1_000_000


def update(target, timeout=0, reset=None):
    return lc.change("x", lc.UPDATE, target, timeout, reset)


def test_change_checks_levels_actions_timeouts_and_names():
    assert update("debug", 5, "warn") == lc.Change(lc.UPDATE, LoggerLevel("DEBUG", 5, 0, "WARN"))
    assert lc.change("x", lc.REMOVE, None, None, None) == lc.Change(lc.REMOVE)
    assert lc.change("x", lc.UNCHANGED, "LOUD", None, None) == lc.Change(lc.UNCHANGED)
    with pytest.raises(lc.LogConfigError, match="not a log level"):
        update("LOUD")
    with pytest.raises(lc.LogConfigError, match="not a log level"):
        update(None)
    with pytest.raises(lc.LogConfigError, match="reset level"):
        update("INFO", 5, "LOUDER")
    with pytest.raises(lc.LogConfigError, match="negative timeout"):
        update("INFO", -1)
    with pytest.raises(lc.LogConfigError, match="unknown action"):
        lc.change("x", 9, "INFO", 0, None)
    with pytest.raises(lc.LogConfigError, match="characters"):
        lc.change("", lc.UPDATE, "INFO", 0, None)
    with pytest.raises(lc.LogConfigError, match="characters"):
        lc.change("x" * (lc.MAX_NAME_CHARS + 1), lc.UPDATE, "INFO", 0, None)


def test_merge_updates_removes_and_keeps_as_storm_does():
    current = {"a": LoggerLevel("WARN"), "b": LoggerLevel("ERROR"), "c": LoggerLevel("INFO")}
    changes = {
        "a": lc.Change(lc.REMOVE),
        "b": lc.Change(lc.UNCHANGED),
        "d": update("DEBUG", 30, "INFO"),
        "gone": lc.Change(lc.REMOVE),  # removing what is not there is no error
    }
    merged = lc.merge(current, changes, NOW_MS)
    assert merged == {
        "b": LoggerLevel("ERROR"),
        "c": LoggerLevel("INFO"),
        "d": LoggerLevel("DEBUG", 30, NOW_MS + 30_000, "INFO"),
    }
    assert current["a"] == LoggerLevel("WARN")  # the input is not changed
    # a timeout of 0 keeps the level for good: no reset time
    assert lc.merge({}, {"e": update("TRACE")}, NOW_MS) == {"e": LoggerLevel("TRACE")}


def test_merge_refuses_more_loggers_than_the_cap():
    current = {f"l{i}": LoggerLevel("INFO") for i in range(lc.MAX_LOGGERS)}
    assert len(lc.merge(current, {"l0": update("WARN")}, NOW_MS)) == lc.MAX_LOGGERS
    with pytest.raises(lc.LogConfigError, match="at most"):
        lc.merge(current, {"one.more": update("WARN")}, NOW_MS)


def test_levels_hold_until_the_reset_time_then_fall_back():
    config = {
        "timed": LoggerLevel("DEBUG", 10, NOW_MS + 10_000, "ERROR"),
        "back": LoggerLevel("DEBUG", 10, NOW_MS + 10_000),
        "forever": LoggerLevel("WARN"),
    }
    original = {"timed": logging.NOTSET, "back": logging.INFO, "forever": logging.NOTSET}
    assert lc.levels_at(config, NOW_MS, original) == {
        "timed": logging.DEBUG,
        "back": logging.DEBUG,
        "forever": logging.WARNING,
    }
    assert lc.levels_at(config, NOW_MS + 9_999, original)["timed"] == logging.DEBUG
    assert lc.levels_at(config, NOW_MS + 10_000, original) == {
        "timed": logging.ERROR,  # its reset level
        "back": logging.INFO,  # no reset level: the one it had before
        "forever": logging.WARNING,
    }


def test_a_removed_logger_goes_back_to_its_original_level():
    original = {"gone": logging.WARNING, "kept": logging.NOTSET}
    assert lc.levels_at({"kept": LoggerLevel("OFF")}, NOW_MS, original) == {
        "gone": logging.WARNING,
        "kept": lc.LEVELS["OFF"],
    }


def test_next_reset_is_the_earliest_future_one():
    config = {
        "a": LoggerLevel("DEBUG", 5, NOW_MS + 5_000),
        "b": LoggerLevel("DEBUG", 2, NOW_MS + 2_000),
        "c": LoggerLevel("DEBUG"),
    }
    assert lc.next_reset_ms(config, NOW_MS) == NOW_MS + 2_000
    assert lc.next_reset_ms(config, NOW_MS + 2_000) == NOW_MS + 5_000
    assert lc.next_reset_ms(config, NOW_MS + 5_000) is None
    assert lc.next_reset_ms({}, NOW_MS) is None


def test_root_is_pythons_root_logger():
    assert lc.python_logger("ROOT") == ""
    assert lc.python_logger("squall.worker") == "squall.worker"


def test_the_record_round_trips_and_malformed_ones_are_refused():
    config = {"a": LoggerLevel("DEBUG", 5, NOW_MS, "INFO"), "ROOT": LoggerLevel("WARN")}
    assert lc.decode(lc.encode(config), "/n") == config
    assert lc.decode(None, "/n") == {} == lc.decode(b"", "/n")
    for bad in (
        b"[1]",
        b"{",
        b"\xff",
        b'{"a": {"target": "LOUD"}}',
        b'{"a": {"target": "INFO", "reset_epoch_ms": -1}}',
        b'{"a": {"target": "INFO", "timeout_secs": "5"}}',
        b'{"a": {"target": "INFO", "reset_level": "NOPE"}}',
        b'{"a": {"target": "INFO", "extra": 1}}',
        b'{"a": 5}',
    ):
        with pytest.raises(lc.LogConfigError, match="/n"):
            lc.decode(bad, "/n")
