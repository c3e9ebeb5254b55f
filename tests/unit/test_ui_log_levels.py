"""The UI's /logconfig body and /debug path read into nimbus's Thrift calls (Storm's
UIHelpers.putTopologyLogLevel and putTopologyDebugActionSpct), bad input a BadRequest."""

import pytest

from squall import thrift_api as T
from squall.ui.errors import BadRequest
from squall.ui.log_levels import debug_request, log_config_json, log_config_request


def test_levels_set_for_a_time_or_for_good_and_removed_with_null():
    body = b"""{"namedLoggerLevels": {"a": {"target_level": "debug", "timeout": 30},
        "b": {"target_level": "WARN"}, "c": {"target_level": null}}}"""
    named = log_config_request(body).named_logger_level
    assert named["a"] == T.LogLevel(
        action=T.LogLevelAction.UPDATE, target_log_level="DEBUG", reset_log_level_timeout_secs=30
    )
    assert named["b"].reset_log_level_timeout_secs == 0
    assert named["c"] == T.LogLevel(action=T.LogLevelAction.REMOVE)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b'{"namedLoggerLevels": {}}',
        b'{"namedLoggerLevels": {"a": "DEBUG"}}',
        b'{"namedLoggerLevels": {"a": {"target_level": 5}}}',
        b'{"namedLoggerLevels": {"a": {"target_level": "INFO", "timeout": -1}}}',
        b'{"namedLoggerLevels": {"a": {"target_level": "INFO", "timeout": true}}}',
        b'{"namedLoggerLevels": {"a": {"target_level": "INFO", "timeout": 1.5}}}',
        b"[" * 100_000,
    ],
)
def test_a_bad_body_is_a_bad_request(body):
    with pytest.raises(BadRequest):
        log_config_request(body)


def test_the_config_as_storm_shows_it():
    level = T.LogLevel(
        action=T.LogLevelAction.UPDATE,
        target_log_level="DEBUG",
        reset_log_level_timeout_secs=30,
        reset_log_level_timeout_epoch=1_700_000_000_000,
        reset_log_level="INFO",
    )
    shown = log_config_json(T.LogConfig(named_logger_level={"a": level}))
    assert shown == {
        "namedLoggerLevels": {
            "a": {
                "target_level": "DEBUG",
                "reset_level": "INFO",
                "timeout": 30,
                "timeout_epoch": 1_700_000_000_000,
            }
        }
    }
    assert log_config_json(T.LogConfig()) == {"namedLoggerLevels": {}}


def test_debug_actions_and_percentages():
    assert debug_request("enable", "10") == (True, 10.0)
    assert debug_request("disable", "0") == (False, 0.0)
    assert debug_request("enable", "2.5") == (True, 2.5)
    for action, spct in (("on", "10"), ("enable", "-1"), ("enable", "101"), ("enable", "1e2")):
        with pytest.raises(BadRequest):
            debug_request(action, spct)
