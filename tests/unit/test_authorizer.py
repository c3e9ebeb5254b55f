"""nimbus.authorizer: Storm's SimpleACLAuthorizer semantics, as a pure decision."""

import pytest

from squall.config import ConfigError
from squall.nimbus.rpc.authorizer import (
    BLOB_READ_COMMANDS,
    DENY,
    NOOP,
    SIMPLE,
    SUPERVISOR_COMMANDS,
    TOPOLOGY_COMMANDS,
    TOPOLOGY_READ_COMMANDS,
    USER_COMMANDS,
    Acl,
    UnixGroups,
    authorizer_kind,
    decide,
    denial,
    permits,
)

ACL = Acl(
    admins=frozenset({"admin"}),
    admin_groups=frozenset({"wheel"}),
    supervisors=frozenset({"supervisor"}),
)
NONE: frozenset[str] = frozenset()
ALICE_TOPOLOGY = {"topology.submitter.principal": "alice", "topology.submitter.user": "alice"}
EVERY = USER_COMMANDS | SUPERVISOR_COMMANDS | TOPOLOGY_COMMANDS
WRITES = TOPOLOGY_COMMANDS - TOPOLOGY_READ_COMMANDS


@pytest.mark.parametrize("operation", sorted(EVERY))
def test_admins_by_name_or_group_may_do_anything(operation):
    assert permits(ACL, "admin", NONE, operation, ALICE_TOPOLOGY)
    assert permits(ACL, "carol", frozenset({"wheel"}), operation, ALICE_TOPOLOGY)


def test_supervisors_may_only_download_and_find_the_leader():
    for operation in sorted(EVERY):
        allowed = permits(ACL, "supervisor", NONE, operation, ALICE_TOPOLOGY)
        # the blob reads: then each blob's ACL decides (supervisors may READ any blob)
        downloads = {"fileDownload", "getLeader"} | BLOB_READ_COMMANDS
        # Storm 2's daemon-internal calls (nimbus answers them UNKNOWN_METHOD once allowed)
        downloads |= {"getSupervisorAssignments", "sendSupervisorWorkerHeartbeats"}
        downloads |= {"processWorkerMetrics"}
        assert allowed == (operation in downloads), operation
    assert "deleteBlob" in EVERY and "getBlobMeta" in EVERY
    # listed as a topology user too, a supervisor still cannot kill
    listed = {**ALICE_TOPOLOGY, "topology.users": ["supervisor"]}
    assert not permits(ACL, "supervisor", NONE, "killTopology", listed)


def test_nobody_else_downloads_code():
    assert not permits(ACL, "alice", NONE, "fileDownload", None)
    assert not permits(ACL, "alice", NONE, "fileDownload", ALICE_TOPOLOGY)


def test_user_commands_need_nimbus_users_empty_or_listing():
    for operation in sorted(USER_COMMANDS):
        assert permits(ACL, "bob", NONE, operation, None)
    restricted = Acl(users=frozenset({"alice"}), groups=frozenset({"analysts"}))
    assert permits(restricted, "alice", NONE, "submitTopology", None)
    assert not permits(restricted, "bob", NONE, "submitTopology", None)
    assert not permits(restricted, "bob", NONE, "fileUpload", None)
    assert permits(restricted, "bob", frozenset({"analysts"}), "submitTopology", None)


@pytest.mark.parametrize("operation", sorted(TOPOLOGY_COMMANDS))
def test_the_submitter_may_act_on_its_topology_and_others_may_not(operation):
    assert permits(ACL, "alice", NONE, operation, ALICE_TOPOLOGY)
    assert not permits(ACL, "bob", NONE, operation, ALICE_TOPOLOGY)


@pytest.mark.parametrize("operation", sorted(TOPOLOGY_COMMANDS))
def test_topology_users_and_groups_may_act_on_it(operation):
    assert permits(ACL, "bob", NONE, operation, {**ALICE_TOPOLOGY, "topology.users": ["bob"]})
    by_group = {**ALICE_TOPOLOGY, "topology.groups": ["ops"]}
    assert permits(ACL, "bob", frozenset({"ops"}), operation, by_group)
    assert not permits(ACL, "bob", frozenset({"dev"}), operation, by_group)


def test_readonly_users_may_only_read():
    conf = {**ALICE_TOPOLOGY, "topology.readonly.users": ["bob"]}
    groups_conf = {**ALICE_TOPOLOGY, "topology.readonly.groups": ["audit"]}
    for operation in sorted(TOPOLOGY_READ_COMMANDS):
        assert permits(ACL, "bob", NONE, operation, conf)
        assert permits(ACL, "bob", frozenset({"audit"}), operation, groups_conf)
    for operation in sorted(WRITES):
        assert not permits(ACL, "bob", NONE, operation, conf)
        assert not permits(ACL, "bob", frozenset({"audit"}), operation, groups_conf)


def test_an_empty_submitter_matches_nobody():
    """Topologies submitted in open mode record "" as their submitter: not a wildcard."""
    anonymous = {"topology.submitter.principal": "", "topology.submitter.user": ""}
    assert not permits(ACL, "", NONE, "killTopology", anonymous)
    assert not permits(ACL, "bob", NONE, "killTopology", anonymous)


def test_unknown_operations_and_missing_principals_are_denied():
    assert not permits(ACL, "bob", NONE, "noSuchOperation", ALICE_TOPOLOGY)
    assert not permits(ACL, None, NONE, "getClusterInfo", None)
    assert not permits(ACL, "bob", NONE, "killTopology", None)  # no topology conf: no owner


def test_kinds_noop_and_deny():
    assert decide(NOOP, ACL, None, NONE, "killTopology", None)
    assert not decide(DENY, ACL, "admin", NONE, "getClusterInfo", None)
    assert decide(SIMPLE, ACL, "admin", NONE, "getClusterInfo", None)


def test_authorizer_kind_from_storm_class_names():
    storm = "org.apache.storm.security.auth.authorizer."
    assert authorizer_kind({"security": True}) == SIMPLE
    assert authorizer_kind({"security": False}) == NOOP
    assert authorizer_kind({"nimbus.authorizer": storm + "SimpleACLAuthorizer"}) == SIMPLE
    assert authorizer_kind({"nimbus.authorizer": storm + "NoopAuthorizer"}) == NOOP
    assert authorizer_kind({"nimbus.authorizer": storm + "DenyAuthorizer"}) == DENY
    with pytest.raises(ConfigError, match="unknown authorizer"):
        authorizer_kind({"nimbus.authorizer": "com.example.AllowAll"})
    with pytest.raises(ConfigError, match="security: true"):
        authorizer_kind({"security": False, "nimbus.authorizer": storm + "SimpleACLAuthorizer"})


def test_acl_from_conf_and_denial_message():
    acl = Acl.from_conf(
        {"nimbus.admins": ["root"], "nimbus.users": ["alice"], "nimbus.supervisor.users": []}
    )
    assert acl == Acl(admins=frozenset({"root"}), users=frozenset({"alice"}))
    message = denial("bob", "killTopology", "wordcount")
    assert "bob" in message and "killTopology" in message and "wordcount" in message
    assert "unauthenticated" in denial(None, "getClusterInfo", None)


def test_group_lookups_are_cached_for_their_duration(monkeypatch):
    from squall.nimbus.rpc import authorizer

    lookups = []
    monkeypatch.setattr(
        authorizer, "_lookup_groups", lambda user: lookups.append(user) or frozenset({"g"})
    )
    now = [0.0]
    groups = UnixGroups(120, lambda: now[0])
    assert groups("alice") == frozenset({"g"})
    now[0] = 119
    groups("alice")
    assert lookups == ["alice"]
    now[0] = 121
    groups("alice")
    assert lookups == ["alice", "alice"]
    assert groups(None) == frozenset()


def test_a_principal_with_no_local_account_has_no_groups():
    from squall.nimbus.rpc.authorizer import _lookup_groups

    assert _lookup_groups("no-such-user-squall-test") == frozenset()


def test_every_thrift_method_is_authorized_as_a_known_operation():
    """A method added to the IDL without an authorization check would be open to anyone."""
    from squall import thrift_api as T

    for method in T.Nimbus.thrift_services:
        operation = getattr(_served_by(method), "operation", None)
        assert operation in EVERY, f"{method} is not authorized"


def _served_by(method):
    """The function that serves Thrift `method`: NimbusHandler's own, or the one of the
    call group whose CALLS name it."""
    from squall.nimbus.rpc.handler import CALL_GROUPS, NimbusHandler

    serving = [group for group in CALL_GROUPS if method in group.CALLS]
    if method in vars(NimbusHandler):
        serving.append(NimbusHandler)
    assert len(serving) == 1, f"{method} is served by {serving or 'nothing'}"
    return vars(serving[0])[method]


def test_every_thrift_method_is_served_once_and_no_group_names_a_call_it_lacks():
    from squall import thrift_api as T
    from squall.nimbus.rpc.handler import CALL_GROUPS

    for group in CALL_GROUPS:
        assert set(group.CALLS) <= set(T.Nimbus.thrift_services), group
        assert all(callable(vars(group).get(call)) for call in group.CALLS), group
    for method in T.Nimbus.thrift_services:
        _served_by(method)


def test_the_submitter_is_what_nimbus_says_not_what_the_client_says():
    import json

    from squall.nimbus.rpc.handler import _with_submitter

    forged = json.dumps({"topology.submitter.principal": "admin", "topology.workers": 2})
    conf = json.loads(_with_submitter(forged, "alice"))
    assert conf == {
        "topology.submitter.principal": "alice",
        "topology.submitter.user": "alice",
        "topology.workers": 2,
    }
    assert json.loads(_with_submitter(None, None))["topology.submitter.principal"] == ""
    assert _with_submitter("[1, 2]", "alice") == "[1, 2]"  # refused later, with its message
    assert _with_submitter("{not json", "alice") == "{not json"


def test_a_topology_call_acts_on_the_topology_it_was_judged_on():
    """Judged by name, run by name: a kill allowed on alice's old "etl" would land on a new
    "etl" resubmitted (by someone else) before the controller ran it. The call gets the id."""
    from squall.nimbus.rpc.operations import op

    class Handler:
        def __init__(self, judged):
            self.judged, self.acted = judged, []

        def _authorize(self, operation, topology):
            return self.judged

        @op("killTopology", topology=True, acts=True)
        def killTopology(self, name):
            self.acted.append(name)

        @op("getTopologyInfo", topology=True)
        def getTopologyInfoByName(self, name):
            self.acted.append(name)

    judged = Handler("etl-1-1700000000")
    judged.killTopology("etl")
    assert judged.acted == ["etl-1-1700000000"]
    unjudged = Handler(None)  # authorization off: nothing was resolved, the name goes on
    unjudged.killTopology("etl")
    assert unjudged.acted == ["etl"]
    judged.getTopologyInfoByName("etl")  # a read keeps what it was given (a name lookup)
    assert judged.acted[-1] == "etl"


def test_every_call_that_changes_a_topology_acts_on_the_id_it_was_authorized_on():
    acting = {"killTopology", "killTopologyWithOpts", "activate", "deactivate", "rebalance"}
    acting |= {"setTopologyConf", "setLogConfig", "debug", "setWorkerProfiler"}
    acting |= {"uploadNewCredentials"}
    from squall import thrift_api as T

    for method in T.Nimbus.thrift_services:
        assert _served_by(method).acts == (method in acting), method
