"""Storm 2's setLogConfig, getLogConfig and debug, served for the NimbusHandler: requests are
checked and turned into plain data here (squall.log_config), decided on the controller thread
(nimbus.log_debug), and read back from ZooKeeper.

Authorized as Storm's SimpleACLAuthorizer does: all three are topology operations;
getLogConfig is also a topology read. Storm's IDL declares no exceptions on the two log
calls, so their refusals (unknown topology, no rights, bad levels) reach clients as
TApplicationException naming the refusal (thrift_call.undeclared_message).
"""

from __future__ import annotations

from typing import Any

from squall import log_config
from squall import thrift_api as T
from squall.nimbus.controller import Controller
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op
from squall.validation import invalid


def changes_of(config: Any) -> dict[str, log_config.Change]:
    """A Thrift LogConfig as validated changes (InvalidTopologyException: nothing merged)."""
    named = (config.named_logger_level if config is not None else None) or {}
    if len(named) > log_config.MAX_LOGGERS:
        raise invalid(f"setLogConfig: at most {log_config.MAX_LOGGERS} loggers per request")
    out = {}
    for logger, level in named.items():
        if level is None:
            raise invalid(f"setLogConfig: logger {logger!r} has no LogLevel")
        try:
            out[logger] = log_config.change(
                logger,
                level.action,
                level.target_log_level,
                level.reset_log_level_timeout_secs,
                level.reset_log_level,
            )
        except log_config.LogConfigError as exc:
            raise invalid(f"setLogConfig: {exc}") from exc
    return out


def to_thrift(config: log_config.LogConfig) -> Any:
    """The stored config as Storm's LogConfig (every entry an UPDATE, as Storm returns it)."""
    return T.LogConfig(
        named_logger_level={
            name: T.LogLevel(
                action=T.LogLevelAction.UPDATE,
                target_log_level=entry.target,
                reset_log_level_timeout_secs=entry.timeout_secs,
                reset_log_level_timeout_epoch=entry.reset_epoch_ms or None,
                reset_log_level=entry.reset_level or None,
            )
            for name, entry in sorted(config.items())
        }
    )


class LogDebugCalls:
    CALLS = ("setLogConfig", "getLogConfig", "debug")

    def __init__(self, controller: Controller, auth: CallAuthorizer):
        self.c = controller
        self._authorize = auth.authorize  # operations.op judges each call by it

    @op("setLogConfig", topology=True, acts=True)
    def setLogConfig(self, name, config):
        self.c.requests.set_log_config(name, changes_of(config))

    @op("getLogConfig", topology=True)
    def getLogConfig(self, name):
        topology = self.c.read_model().find(name)
        return to_thrift(self.c.read_log_config(topology.id))

    @op("debug", topology=True, acts=True)
    def debug(self, name, component, enable, samplingPercentage):
        self.c.requests.debug(name, component or "", bool(enable), float(samplingPercentage or 0.0))
