// The Nimbus service. Names, field ids and exception field names follow Apache Storm's
// storm.thrift, so a client generated from it (or streamparse's `sparse`) talks to squall.
// squall adds one member to ComponentObject (python_object, id 100) for Python components
// and squall_version (id 100) to the summaries, a SparkBolt's micro-batch figures (ids
// 100-102) to BoltAggregateStats, latency histograms (SpoutAggregateStats 100,
// BoltAggregateStats 103-104); ids Storm uses are never reused for other meanings.
//
// Every method Storm has declares exactly Storm 2's exceptions (tests/unit/test_storm_idl.py
// checks it against tests/storm_idl/storm2.thrift). A Storm client skips a result field it
// does not know, so an exception Storm does not declare would read as a normal return there:
// nimbus answers such refusals (not the leader, an illegal transition, a bad upload location
// or argument) with a TApplicationException carrying the message, as Storm's nimbus does.

namespace py squall
namespace java org.apache.storm.generated

struct JavaObjectArg {
  1: i32 int_arg;
  2: i64 long_arg;
  3: string string_arg;
  4: bool bool_arg;
  5: binary binary_arg;
  6: double double_arg;
}

struct JavaObject {
  1: required string full_class_name;
  2: required list<JavaObjectArg> args_list;
}

struct NullStruct {
}

struct GlobalStreamId {
  1: required string componentId;
  2: required string streamId;
}

union Grouping {
  1: list<string> fields; // empty list means global grouping
  2: NullStruct shuffle;
  3: NullStruct all;
  4: NullStruct none;
  5: NullStruct direct;
  6: JavaObject custom_object;
  7: binary custom_serialized;
  8: NullStruct local_or_shuffle;
}

struct StreamInfo {
  1: required list<string> output_fields;
  2: required bool direct;
}

struct ShellComponent {
  1: string execution_command;
  2: string script;
}

// squall's Python component: a class importable from the uploaded code package.
struct PythonComponent {
  1: required string module_name;
  2: required string class_name;
  3: optional string kwargs_json = "{}";
}

union ComponentObject {
  1: binary serialized_java;
  2: ShellComponent shell;
  3: JavaObject java_object;
  100: PythonComponent python_object;
}

struct ComponentCommon {
  1: required map<GlobalStreamId, Grouping> inputs;
  2: required map<string, StreamInfo> streams;
  3: optional i32 parallelism_hint;
  4: optional string json_conf;
}

struct SpoutSpec {
  1: required ComponentObject spout_object;
  2: required ComponentCommon common;
}

struct Bolt {
  1: required ComponentObject bolt_object;
  2: required ComponentCommon common;
}

struct StateSpoutSpec {
  1: required ComponentObject state_spout_object;
  2: required ComponentCommon common;
}

struct StormTopology {
  1: required map<string, SpoutSpec> spouts;
  2: required map<string, Bolt> bolts;
  3: required map<string, StateSpoutSpec> state_spouts;
}

exception AlreadyAliveException {
  1: required string msg;
}

exception NotAliveException {
  1: required string msg;
}

exception AuthorizationException {
  1: required string msg;
}

exception InvalidTopologyException {
  1: required string msg;
}

// Declared only by squall's own methods (setTopologyConf): a change that is not legal in the
// topology's current status, or a write to a nimbus that is not the leader. Storm's methods
// answer the same refusals with a TApplicationException.
exception IllegalStateException {
  1: required string msg;
}

struct TopologySummary {
  1: required string id;
  2: required string name;
  3: required i32 num_tasks;
  4: required i32 num_executors;
  5: required i32 num_workers;
  6: required i32 uptime_secs;
  7: required string status;
  // Storm's field: the scheduler's last word ("Fully Scheduled", or why it cannot fit)
  513: optional string sched_status;
  514: optional string owner;  // Storm's: the submitter (principal, or nimbus's OS user)
  // Storm's: what the topology's tasks declared, all of them and those placed
  521: optional double requested_memonheap;
  522: optional double requested_memoffheap;
  523: optional double requested_cpu;
  524: optional double assigned_memonheap;
  525: optional double assigned_memoffheap;
  526: optional double assigned_cpu;
  527: optional map<string, double> requested_generic_resources;
  528: optional map<string, double> assigned_generic_resources;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

struct SupervisorSummary {
  1: required string host;
  2: required i32 uptime_secs;
  3: required i32 num_workers;
  4: required i32 num_used_workers;
  5: required string supervisor_id;
  6: optional string version = "VERSION_NOT_PROVIDED";
  7: optional map<string, double> total_resources;
  8: optional double used_mem;
  9: optional double used_cpu;
  // Storm's: what is left on a supervisor too small for one more task and acker (else 0)
  10: optional double fragmented_mem;
  11: optional double fragmented_cpu;
  12: optional bool blacklisted;
  13: optional map<string, double> used_generic_resources;
  // squall: its own version; `version` is the Storm-compatible "2.8.8+squall.<version>"
  100: optional string squall_version;
  // squall: why the blacklist scheduler left it out of scheduling (set when blacklisted)
  101: optional string blacklist_reason;
  // squall: its warm Spark Connect server: "off", "starting", "ready" or "failed: <reason>"
  102: optional string spark_connect;
}

struct NimbusSummary {
  1: required string host;
  2: required i32 port;
  3: required i32 uptime_secs;
  4: required bool isLeader;
  5: required string version;
  // squall: its own version; `version` is the Storm-compatible "2.8.8+squall.<version>"
  100: optional string squall_version;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

struct ClusterSummary {
  1: required list<SupervisorSummary> supervisors;
  // 2: nimbus_uptime_secs, removed in Storm; never reuse
  3: required list<TopologySummary> topologies;
  4: required list<NimbusSummary> nimbuses;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

struct ErrorInfo {
  1: required string error;
  2: required i32 error_time_secs;
  3: optional string host;
  4: optional i32 port;
}

struct ExecutorInfo {
  1: required i32 task_start;
  2: required i32 task_end;
}

struct BoltStats {
  1: required map<string, map<GlobalStreamId, i64>> acked;
  2: required map<string, map<GlobalStreamId, i64>> failed;
  3: required map<string, map<GlobalStreamId, double>> process_ms_avg;
  4: required map<string, map<GlobalStreamId, i64>> executed;
  5: required map<string, map<GlobalStreamId, double>> execute_ms_avg;
}

struct SpoutStats {
  1: required map<string, map<string, i64>> acked;
  2: required map<string, map<string, i64>> failed;
  3: required map<string, map<string, double>> complete_ms_avg;
}

union ExecutorSpecificStats {
  1: BoltStats bolt;
  2: SpoutStats spout;
}

// Each map goes from a time window (":all-time", or seconds such as "600") to per-stream
// figures. squall keeps "600", "10800", "86400" and ":all-time" (worker/task_stats.py).
struct ExecutorStats {
  1: required map<string, map<string, i64>> emitted;
  2: required map<string, map<string, i64>> transferred;
  3: required ExecutorSpecificStats specific;
  4: required double rate;
}

struct ExecutorSummary {
  1: required ExecutorInfo executor_info;
  2: required string component_id;
  3: required string host;
  4: required i32 port;
  5: required i32 uptime_secs;
  7: optional ExecutorStats stats;
}

struct TopologyInfo {
  1: required string id;
  2: required string name;
  3: required i32 uptime_secs;
  4: required list<ExecutorSummary> executors;
  5: required string status;
  6: required map<string, list<ErrorInfo>> errors;
  7: optional map<string, DebugOptions> component_debug;  // Storm 2's: debug()'s options
  513: optional string sched_status;  // Storm's field, as in TopologySummary
  514: optional string owner;  // Storm's, as in TopologySummary
  // Storm's: what the topology's tasks declared, all of them and those placed
  521: optional double requested_memonheap;
  522: optional double requested_memoffheap;
  523: optional double requested_cpu;
  524: optional double assigned_memonheap;
  525: optional double assigned_memoffheap;
  526: optional double assigned_cpu;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

enum TopologyInitialStatus {
  ACTIVE = 1,
  INACTIVE = 2
}

// Storm's: a topology's user credentials (submit, uploadNewCredentials)
struct Credentials {
  1: required map<string,string> creds;
  2: optional string topoOwner;
}

struct SubmitOptions {
  1: required TopologyInitialStatus initial_status;
  2: optional Credentials creds;
}

struct KillOptions {
  1: optional i32 wait_secs;
}

struct RebalanceOptions {
  1: optional i32 wait_secs;
  2: optional i32 num_workers;
  3: optional map<string, i32> num_executors;
  // Storm 2's: per component, resources to use from now on ({"onheap.memory.mb": 512, ...})
  4: optional map<string, map<string, double>> topology_resources_overrides;
  // Storm 2's: a JSON object of topology conf keys to merge into the topology's conf
  5: optional string topology_conf_overrides;
  // set by Storm's nimbus itself; ignored when a client sends it
  6: optional string principal;
}

// Storm 2 read calls for the UI and CLI: structs copied from Storm 2's storm.thrift (names,
// field ids, types and requiredness as there).
struct DebugOptions {
  1: optional bool enable;
  2: optional double samplingpct;
}

struct CommonAggregateStats {
  1: optional i32 num_executors;
  2: optional i32 num_tasks;
  3: optional i64 emitted;
  4: optional i64 transferred;
  5: optional i64 acked;
  6: optional i64 failed;
  7: optional map<string, double> resources_map;
}

// squall's: a cumulative latency histogram, all time, summed over a component's tasks
// (squall/latency_histogram.py). bucket_counts are per bucket, not cumulative, one more than
// upper_bounds_ms (the last bucket is +Inf).
struct LatencyHistogram {
  1: list<double> upper_bounds_ms;
  2: list<i64> bucket_counts;
  3: double sum_ms;
}

struct SpoutAggregateStats {
  1: optional double complete_latency_ms;
  // squall's: only in the ":all-time" window (a Storm client skips it)
  100: optional LatencyHistogram complete_latency_histogram;
}

struct BoltAggregateStats {
  1: optional double execute_latency_ms;
  2: optional double process_latency_ms;
  3: optional i64 executed;
  4: optional double capacity;
  // squall's: a SparkBolt's micro-batches in the window (a Storm client skips them)
  100: optional i64 spark_jobs;
  101: optional i64 spark_rows;
  102: optional double spark_job_ms;  // the average time of one Spark job
  // squall's: only in the ":all-time" window (a Storm client skips them)
  103: optional LatencyHistogram execute_latency_histogram;
  104: optional LatencyHistogram process_latency_histogram;
}

union SpecificAggregateStats {
  1: BoltAggregateStats bolt;
  2: SpoutAggregateStats spout;
}

enum ComponentType {
  BOLT = 1,
  SPOUT = 2
}

struct ComponentAggregateStats {
  1: optional ComponentType type;
  2: optional CommonAggregateStats common_stats;
  3: optional SpecificAggregateStats specific_stats;
  4: optional ErrorInfo last_error;
}

struct TopologyStats {
  1: optional map<string, i64> window_to_emitted;
  2: optional map<string, i64> window_to_transferred;
  3: optional map<string, double> window_to_complete_latencies_ms;
  4: optional map<string, i64> window_to_acked;
  5: optional map<string, i64> window_to_failed;
}

struct WorkerSummary {
  1: optional string supervisor_id;
  2: optional string host;
  3: optional i32 port;
  4: optional string topology_id;
  5: optional string topology_name;
  6: optional i32 num_executors;
  7: optional map<string, i64> component_to_num_tasks;
  8: optional i32 time_secs;
  9: optional i32 uptime_secs;
  521: optional double requested_memonheap;
  522: optional double requested_memoffheap;
  523: optional double requested_cpu;
  524: optional double assigned_memonheap;
  525: optional double assigned_memoffheap;
  526: optional double assigned_cpu;
  527: optional string owner;
}

struct SupervisorPageInfo {
  1: optional list<SupervisorSummary> supervisor_summaries;
  2: optional list<WorkerSummary> worker_summaries;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

struct TopologyPageInfo {
  1: required string id;
  2: optional string name;
  3: optional i32 uptime_secs;
  4: optional string status;
  5: optional i32 num_tasks;
  6: optional i32 num_workers;
  7: optional i32 num_executors;
  8: optional string topology_conf;
  9: optional map<string, ComponentAggregateStats> id_to_spout_agg_stats;
  10: optional map<string, ComponentAggregateStats> id_to_bolt_agg_stats;
  11: optional string sched_status;
  12: optional TopologyStats topology_stats;
  13: optional string owner;
  14: optional DebugOptions debug_options;
  15: optional i32 replication_count;
  16: optional list<WorkerSummary> workers;
  17: optional string storm_version;
  18: optional string topology_version;
  521: optional double requested_memonheap;
  522: optional double requested_memoffheap;
  523: optional double requested_cpu;
  524: optional double assigned_memonheap;
  525: optional double assigned_memoffheap;
  526: optional double assigned_cpu;
  527: optional double requested_regular_on_heap_memory;
  528: optional double requested_shared_on_heap_memory;
  529: optional double requested_regular_off_heap_memory;
  530: optional double requested_shared_off_heap_memory;
  531: optional double assigned_regular_on_heap_memory;
  532: optional double assigned_shared_on_heap_memory;
  533: optional double assigned_regular_off_heap_memory;
  534: optional double assigned_shared_off_heap_memory;
  535: optional map<string, double> requested_generic_resources;
  536: optional map<string, double> assigned_generic_resources;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

struct ExecutorAggregateStats {
  1: optional ExecutorSummary exec_summary;
  2: optional ComponentAggregateStats stats;
}

struct ComponentPageInfo {
  1: required string component_id;
  2: required ComponentType component_type;
  3: optional string topology_id;
  4: optional string topology_name;
  5: optional i32 num_executors;
  6: optional i32 num_tasks;
  7: optional map<string, ComponentAggregateStats> window_to_stats;
  8: optional map<GlobalStreamId, ComponentAggregateStats> gsid_to_input_stats;
  9: optional map<string, ComponentAggregateStats> sid_to_output_stats;
  10: optional list<ExecutorAggregateStats> exec_stats;
  11: optional list<ErrorInfo> errors;
  12: optional string eventlog_host;
  13: optional i32 eventlog_port;
  14: optional DebugOptions debug_options;
  15: optional string topology_status;
  16: optional map<string, double> resources_map;
  // squall: set while nimbus answers from what it last read (ZooKeeper unreachable):
  // since when (epoch seconds) and the cause
  600: optional double stale_since;
  601: optional string stale_cause;
}

enum NumErrorsChoice {
  ALL,
  NONE,
  ONE
}

struct GetInfoOptions {
  1: optional NumErrorsChoice num_err_choice;
}

struct TopologyHistoryInfo {
  1: list<string> topo_ids;
}

struct OwnerResourceSummary {
  1: required string owner;
  2: optional i32 total_topologies;
  3: optional i32 total_executors;
  4: optional i32 total_workers;
  5: optional double memory_usage;
  6: optional double cpu_usage;
  7: optional double memory_guarantee;
  8: optional double cpu_guarantee;
  9: optional double memory_guarantee_remaining;
  10: optional double cpu_guarantee_remaining;
  11: optional i32 isolated_node_guarantee;
  12: optional i32 total_tasks;
  13: optional double requested_on_heap_memory;
  14: optional double requested_off_heap_memory;
  15: optional double requested_total_memory;
  16: optional double requested_cpu;
  17: optional double assigned_on_heap_memory;
  18: optional double assigned_off_heap_memory;
}
// end of the Storm 2 read calls' structs

// Storm 2 log levels and debug: structs copied from Storm 2's storm.thrift (DebugOptions,
// above, is shared with the read calls).
enum LogLevelAction {
  UNCHANGED = 1,
  UPDATE    = 2,
  REMOVE    = 3
}

struct LogLevel {
  1: required LogLevelAction action;
  2: optional string target_log_level;
  // seconds the target level is kept (0: for good), then reset_log_level applies
  3: optional i32 reset_log_level_timeout_secs;
  // set by nimbus: when (milliseconds since the epoch) the target level ends
  4: optional i64 reset_log_level_timeout_epoch;
  5: optional string reset_log_level;
}

struct LogConfig {
  2: optional map<string, LogLevel> named_logger_level;
}
// end of the Storm 2 log levels and debug structs
// Storm 2 blobstore: structs and exceptions (as in Storm 2's storm.thrift)
exception KeyNotFoundException {
  1: required string msg;
}

exception KeyAlreadyExistsException {
  1: required string msg;
}

enum AccessControlType {
  OTHER = 1,
  USER = 2
}

struct AccessControl {
  1: required AccessControlType type;
  2: optional string name; //Name of user or group in ACL
  3: required i32 access; //bitmasks READ=0x1, WRITE=0x2, ADMIN=0x4
}

struct SettableBlobMeta {
  1: required list<AccessControl> acl;
  2: optional i32 replication_factor
}

struct ReadableBlobMeta {
  1: required SettableBlobMeta settable;
  2: required i64 version;
}

struct ListBlobsResult {
  1: required list<string> keys;
  2: required string session;
}

struct BeginDownloadResult {
  1: required i64 version;
  2: required string session;
  3: optional i64 data_size;
}
// end of the Storm 2 blobstore structs

// Storm 2 profiling, credentials and daemon-internal calls: structs copied from Storm 2's
// storm.thrift (squall's supervisors use ZooKeeper, so the daemon-internal ones are only ever
// decoded as arguments: nimbus/rpc/daemon_calls.py says what a caller gets)
struct NodeInfo {
    1: required string node;
    2: required set<i64> port;
}

struct WorkerResources {
    1: optional double mem_on_heap;
    2: optional double mem_off_heap;
    3: optional double cpu;
    4: optional double shared_mem_on_heap;
    5: optional double shared_mem_off_heap;
    6: optional map<string, double> resources;
    7: optional map<string, double> shared_resources;
}

struct Assignment {
    1: required string master_code_dir;
    2: optional map<string, string> node_host = {};
    3: optional map<list<i64>, NodeInfo> executor_node_port = {};
    4: optional map<list<i64>, i64> executor_start_time_secs = {};
    5: optional map<NodeInfo, WorkerResources> worker_resources = {};
    6: optional map<string, double> total_shared_off_heap = {};
    7: optional string owner;
}

enum ProfileAction {
  JPROFILE_STOP,
  JPROFILE_START,
  JPROFILE_DUMP,
  JMAP_DUMP,
  JSTACK_DUMP,
  JVM_RESTART
}

struct ProfileRequest {
  1: required NodeInfo nodeInfo,
  2: required ProfileAction action,
  3: optional i64 time_stamp;
}

struct SupervisorWorkerHeartbeat {
  1: required string storm_id;
  2: required list<ExecutorInfo> executors
  3: required i32 time_secs;
}

struct SupervisorWorkerHeartbeats {
  1: required string supervisor_id;
  2: required list<SupervisorWorkerHeartbeat> worker_heartbeats;
}

struct SupervisorAssignments {
  1: optional map<string, Assignment> storm_assignment = {}
}

struct WorkerMetricPoint {
  1: required string metricName;
  2: required i64 timestamp;
  3: required double metricValue;
  4: required string componentId;
  5: required string executorId;
  6: required string streamId;
}

struct WorkerMetricList {
  1: list<WorkerMetricPoint> metrics;
}

struct WorkerMetrics {
  1: required string topologyId;
  2: required i32 port;
  3: required string hostname;
  4: required WorkerMetricList metricList;
}
// end of the Storm 2 profiling, credentials and daemon-internal structs

service Nimbus {
  void submitTopology(1: string name, 2: string uploadedJarLocation, 3: string jsonConf, 4: StormTopology topology)
    throws (1: AlreadyAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze);
  void submitTopologyWithOpts(1: string name, 2: string uploadedJarLocation, 3: string jsonConf, 4: StormTopology topology, 5: SubmitOptions options)
    throws (1: AlreadyAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze);
  void killTopology(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void killTopologyWithOpts(1: string name, 2: KillOptions options) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void activate(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void deactivate(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  void rebalance(1: string name, 2: RebalanceOptions options)
    throws (1: NotAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze);

  string beginFileUpload() throws (1: AuthorizationException aze);
  void uploadChunk(1: string location, 2: binary chunk) throws (1: AuthorizationException aze);
  void finishFileUpload(1: string location) throws (1: AuthorizationException aze);
  // Storm 1.x's (removed in Storm 2); squall's supervisors fetch code with it
  string beginFileDownload(1: string file) throws (1: AuthorizationException aze);
  binary downloadChunk(1: string id) throws (1: AuthorizationException aze);

  string getNimbusConf() throws (1: AuthorizationException aze);
  ClusterSummary getClusterInfo() throws (1: AuthorizationException aze);
  TopologyInfo getTopologyInfo(1: string id) throws (1: NotAliveException e, 2: AuthorizationException aze);
  string getTopologyConf(1: string id) throws (1: NotAliveException e, 2: AuthorizationException aze);
  StormTopology getTopology(1: string id) throws (1: NotAliveException e, 2: AuthorizationException aze);
  StormTopology getUserTopology(1: string id) throws (1: NotAliveException e, 2: AuthorizationException aze);
  NimbusSummary getLeader() throws (1: AuthorizationException aze);
  bool isTopologyNameAllowed(1: string name) throws (1: AuthorizationException aze);

  // squall: change one setting of a running topology (a set-config coordinator message).
  void setTopologyConf(1: string name, 2: string key, 3: string jsonValue)
    throws (1: NotAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze, 4: IllegalStateException ise);

  // Storm 2 read calls for the UI and CLI (signatures as in Storm 2's storm.thrift).
  list<TopologySummary> getTopologySummaries() throws (1: AuthorizationException aze);
  TopologySummary getTopologySummaryByName(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologySummary getTopologySummary(1: string id) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoByName(1: string name) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoByNameWithOpts(1: string name, 2: GetInfoOptions options) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyInfo getTopologyInfoWithOpts(1: string id, 2: GetInfoOptions options) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyPageInfo getTopologyPageInfo(1: string id, 2: string window, 3: bool is_include_sys) throws (1: NotAliveException e, 2: AuthorizationException aze);
  SupervisorPageInfo getSupervisorPageInfo(1: string id, 2: string host, 3: bool is_include_sys) throws (1: NotAliveException e, 2: AuthorizationException aze);
  ComponentPageInfo getComponentPageInfo(1: string topology_id, 2: string component_id, 3: string window, 4: bool is_include_sys) throws (1: NotAliveException e, 2: AuthorizationException aze);
  TopologyHistoryInfo getTopologyHistory(1: string user) throws (1: AuthorizationException aze);
  list<OwnerResourceSummary> getOwnerResourceSummaries(1: string owner) throws (1: AuthorizationException aze);

  // Storm 2 log levels and debug (signatures as in Storm 2's storm.thrift: the log calls
  // declare no exceptions, so their refusals reach clients as TApplicationException)
  void setLogConfig(1: string name, 2: LogConfig config);
  LogConfig getLogConfig(1: string name);
  void debug(1: string name, 2: string component, 3: bool enable, 4: double samplingPercentage) throws (1: NotAliveException e, 2: AuthorizationException aze);

  // Storm 2 blobstore (signatures as in Storm 2's storm.thrift; nimbus/blobs/blob_calls.py).
  string beginCreateBlob(1: string key, 2: SettableBlobMeta meta) throws (1: AuthorizationException aze, 2: KeyAlreadyExistsException kae);
  string beginUpdateBlob(1: string key) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void uploadBlobChunk(1: string session, 2: binary chunk) throws (1: AuthorizationException aze);
  void finishBlobUpload(1: string session) throws (1: AuthorizationException aze);
  void cancelBlobUpload(1: string session) throws (1: AuthorizationException aze);
  ReadableBlobMeta getBlobMeta(1: string key) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void setBlobMeta(1: string key, 2: SettableBlobMeta meta) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  BeginDownloadResult beginBlobDownload(1: string key) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  binary downloadBlobChunk(1: string session) throws (1: AuthorizationException aze);
  void deleteBlob(1: string key) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf, 3: IllegalStateException ise);
  ListBlobsResult listBlobs(1: string session); //empty string "" means start at the beginning
  i32 getBlobReplication(1: string key) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  i32 updateBlobReplication(1: string key, 2: i32 replication) throws (1: AuthorizationException aze, 2: KeyNotFoundException knf);
  void createStateInZookeeper(1: string key);
  bool isRemoteBlobExists(1: string blobKey) throws (1: AuthorizationException aze);

  // Storm's profiling actions and credentials (nimbus/rpc/profiler_calls.py, credential_calls.py)
  void setWorkerProfiler(1: string id, 2: ProfileRequest  profileRequest);
  list<ProfileRequest> getComponentPendingProfileActions(1: string id, 2: string component_id, 3: ProfileAction action);
  void uploadNewCredentials(1: string name, 2: Credentials creds) throws (1: NotAliveException e, 2: InvalidTopologyException ite, 3: AuthorizationException aze);

  // Storm 2's daemon-internal calls: authorized as Storm does, never served (nimbus/rpc/daemon_calls.py)
  SupervisorAssignments getSupervisorAssignments(1: string node) throws (1: AuthorizationException aze);
  void sendSupervisorWorkerHeartbeats(1: SupervisorWorkerHeartbeats heartbeats) throws (1: AuthorizationException aze);
  void sendSupervisorWorkerHeartbeat(1: SupervisorWorkerHeartbeat heatbeat) throws (1: AuthorizationException aze, 2: NotAliveException e);
  void processWorkerMetrics(1: WorkerMetrics metrics);
}
