"""Storm UI REST API v1's log levels and debug sampling of a running topology:
GET/POST /topology/:id/logconfig and POST /topology/:id[/component/:c]/debug/:action/:spct,
as Storm's UIHelpers reads and writes them (getTopolgoyLogConfig, putTopologyLogLevel,
putTopologyDebugActionSpct). Pure: JSON to Thrift and back; nimbus judges the levels.
"""

from __future__ import annotations

import json
import re
from typing import Any

from squall import thrift_api as T

from .errors import BadRequest

MAX_TIMEOUT_SECS = 2**31 - 1  # Storm's Math.toIntExact into an i32


def log_config_json(config: Any) -> dict[str, Any]:
    """{"namedLoggerLevels": {logger: {target_level, reset_level, timeout, timeout_epoch}}}."""
    named = {}
    for name, level in sorted((config.named_logger_level or {}).items()):
        named[name] = {
            "target_level": level.target_log_level,
            "reset_level": level.reset_log_level,
            "timeout": level.reset_log_level_timeout_secs,
            "timeout_epoch": level.reset_log_level_timeout_epoch,
        }
    return {"namedLoggerLevels": named}


def log_config_request(body: bytes) -> Any:
    """The LogConfig a POST body asks for: {"namedLoggerLevels": {logger: {"target_level":
    "DEBUG", "timeout": 30}}}; a null target_level removes the logger's level (Storm's
    REMOVE), a timeout of 0 (or none) keeps the level for good."""
    try:
        given = json.loads(body or b"{}")
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from None
    named = given.get("namedLoggerLevels") if isinstance(given, dict) else None
    if not isinstance(named, dict) or not named:
        raise BadRequest('the body wants {"namedLoggerLevels": {logger: {"target_level": ...}}}')
    levels = {}
    for name, want in named.items():
        if not isinstance(want, dict):
            raise BadRequest(f"namedLoggerLevels[{name!r:.60}] must be a JSON object")
        target, timeout = want.get("target_level"), want.get("timeout", 0)
        if target is None:
            levels[str(name)] = T.LogLevel(action=T.LogLevelAction.REMOVE)
            continue
        if not isinstance(target, str):
            raise BadRequest(f"{name!r:.60}: target_level must be a level name or null")
        if type(timeout) is not int or not 0 <= timeout <= MAX_TIMEOUT_SECS:
            raise BadRequest(
                f"{name!r:.60}: timeout must be whole seconds >= 0, not {timeout!r:.40}"
            )
        levels[str(name)] = T.LogLevel(
            action=T.LogLevelAction.UPDATE,
            target_log_level=target.upper(),
            reset_log_level_timeout_secs=timeout,
        )
    return T.LogConfig(named_logger_level=levels)


def debug_request(action: str, spct: str) -> tuple[bool, float]:
    """(enable, sampling percent) of a debug action: "enable" or "disable", and a percent
    from 0 to 100 (Storm's Integer.parseInt; squall also takes a decimal)."""
    if action not in ("enable", "disable"):
        raise BadRequest(f"the debug action is enable or disable, not {action!r:.40}")
    if not re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,6})?", spct) or float(spct) > 100:
        raise BadRequest(f"the sampling percent is a number from 0 to 100, not {spct!r:.40}")
    return action == "enable", float(spct)
