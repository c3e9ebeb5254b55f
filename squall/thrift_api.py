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
# Storm 2 read calls for the UI and CLI
DebugOptions = api.DebugOptions
CommonAggregateStats = api.CommonAggregateStats
SpoutAggregateStats = api.SpoutAggregateStats
BoltAggregateStats = api.BoltAggregateStats
LatencyHistogram = api.LatencyHistogram
SpecificAggregateStats = api.SpecificAggregateStats
ComponentType = api.ComponentType
ComponentAggregateStats = api.ComponentAggregateStats
TopologyStats = api.TopologyStats
WorkerSummary = api.WorkerSummary
SupervisorPageInfo = api.SupervisorPageInfo
TopologyPageInfo = api.TopologyPageInfo
ExecutorAggregateStats = api.ExecutorAggregateStats
ComponentPageInfo = api.ComponentPageInfo
NumErrorsChoice = api.NumErrorsChoice
GetInfoOptions = api.GetInfoOptions
TopologyHistoryInfo = api.TopologyHistoryInfo
OwnerResourceSummary = api.OwnerResourceSummary
# Storm 2 log levels and debug
LogLevelAction = api.LogLevelAction
LogLevel = api.LogLevel
LogConfig = api.LogConfig
# Storm 2 blobstore
AccessControlType = api.AccessControlType
AccessControl = api.AccessControl
SettableBlobMeta = api.SettableBlobMeta
ReadableBlobMeta = api.ReadableBlobMeta
ListBlobsResult = api.ListBlobsResult
BeginDownloadResult = api.BeginDownloadResult
KeyNotFoundException = api.KeyNotFoundException
KeyAlreadyExistsException = api.KeyAlreadyExistsException

AlreadyAliveException = api.AlreadyAliveException
NotAliveException = api.NotAliveException
InvalidTopologyException = api.InvalidTopologyException
AuthorizationException = api.AuthorizationException
IllegalStateException = api.IllegalStateException

from squall.components import DEFAULT_STREAM  # noqa: E402,F401 - Storm's name for it, here too

# Storm's profiling actions, credentials and daemon-internal calls
NodeInfo = api.NodeInfo
Credentials = api.Credentials
ProfileAction = api.ProfileAction
ProfileRequest = api.ProfileRequest
