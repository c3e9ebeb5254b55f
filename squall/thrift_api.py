"""The Thrift binding of thrift/squall.thrift, loaded once by thriftpy2.

Everything that speaks Thrift (nimbus, client, supervisor) imports the generated types from
here, so there is exactly one copy of the module and exception classes compare equal.
"""

from __future__ import annotations

from importlib import resources

import thriftpy2

with resources.as_file(resources.files("squall").joinpath("squall.thrift")) as _idl:
    api = thriftpy2.load(str(_idl), module_name="squall_thrift")

Nimbus = api.Nimbus
StormTopology = api.StormTopology
SpoutSpec = api.SpoutSpec
Bolt = api.Bolt
ComponentCommon = api.ComponentCommon
ComponentObject = api.ComponentObject
PythonComponent = api.PythonComponent
ShellComponent = api.ShellComponent
GlobalStreamId = api.GlobalStreamId
Grouping = api.Grouping
NullStruct = api.NullStruct
StreamInfo = api.StreamInfo
SubmitOptions = api.SubmitOptions
KillOptions = api.KillOptions
RebalanceOptions = api.RebalanceOptions
TopologyInitialStatus = api.TopologyInitialStatus
ClusterSummary = api.ClusterSummary
SupervisorSummary = api.SupervisorSummary
TopologySummary = api.TopologySummary
NimbusSummary = api.NimbusSummary
TopologyInfo = api.TopologyInfo
ExecutorSummary = api.ExecutorSummary
ExecutorInfo = api.ExecutorInfo
ExecutorStats = api.ExecutorStats
ExecutorSpecificStats = api.ExecutorSpecificStats
SpoutStats = api.SpoutStats
BoltStats = api.BoltStats
ErrorInfo = api.ErrorInfo

AlreadyAliveException = api.AlreadyAliveException
NotAliveException = api.NotAliveException
InvalidTopologyException = api.InvalidTopologyException
AuthorizationException = api.AuthorizationException
IllegalStateException = api.IllegalStateException

DEFAULT_STREAM = "default"
