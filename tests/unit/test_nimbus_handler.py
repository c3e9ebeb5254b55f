"""NimbusHandler serves every Thrift call by its name, through the object that implements
it: its own methods or one of its call groups (nimbus/rpc/handler.py). Built here on an
in-memory SQLite store and a stand-in controller, in open mode unless a test says otherwise."""

from types import SimpleNamespace

import pytest
from sqlalchemy import create_engine
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.config import cluster_conf
from squall.nimbus.rpc.handler import CALL_GROUPS, NimbusHandler


def built(security: bool) -> NimbusHandler:
    controller = SimpleNamespace(
        store=SimpleNamespace(engine=create_engine("sqlite://")),
        read_model=lambda: pytest.fail("these calls name no topology"),
        code=SimpleNamespace(conf=lambda tid: {}),
    )
    conf = dict(cluster_conf(security=security))
    return NimbusHandler(controller, conf, "localhost", 6627, lambda: None)


@pytest.fixture
def handler():
    return built(security=False)


def test_every_thrift_call_is_bound_to_the_object_that_serves_it(handler):
    groups = {type(getattr(handler, call).__self__) for call in T.Nimbus.thrift_services}
    assert groups == {NimbusHandler, *CALL_GROUPS}
    for group in CALL_GROUPS:
        for call in group.CALLS:
            assert isinstance(getattr(handler, call).__self__, group), call
    assert handler.submitTopology.__self__ is handler


def test_a_call_served_by_a_group_answers_through_the_handler(handler):
    with pytest.raises(TApplicationException) as refused:
        handler.getSupervisorAssignments("node-1")
    assert refused.value.type == TApplicationException.UNKNOWN_METHOD
    assert "getSupervisorAssignments: not served" in refused.value.message
    assert handler.createStateInZookeeper("some-key") is None


def test_a_call_served_by_a_group_is_judged_by_the_handlers_authorizer():
    with pytest.raises(T.AuthorizationException, match="getSupervisorAssignments"):
        built(security=True).getSupervisorAssignments("node-1")  # no identity bound
