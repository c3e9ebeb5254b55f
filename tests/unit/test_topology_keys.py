"""A topology's CURVE keypair: made fresh, stored as JSON, read back strictly, never shown,
and made by nimbus's shell only when security is on."""

import json
from types import SimpleNamespace

import pytest
import zmq

from squall.config import load_defaults
from squall.nimbus.controller import Controller
from squall.nimbus.core import instructions as ins
from squall.records import Assignment, StormBase
from squall.security.topology_keys import (
    TopologyKeys,
    TopologyKeysError,
    decode_keys,
    encode_keys,
    new_keys,
)

WHERE = "/squall/credentials/t-1"


def test_new_keys_are_a_matching_pair_and_differ_each_time():
    a, b = new_keys(), new_keys()
    assert zmq.curve_public(a.secret) == a.public
    assert a.public != b.public and a.secret != b.secret


def test_keys_survive_encoding():
    keys = new_keys()
    assert decode_keys(encode_keys(keys), WHERE) == keys


def test_the_secret_is_not_in_the_repr():
    keys = new_keys()
    assert keys.secret.decode() not in repr(keys)
    assert keys.public.decode() in repr(keys)


def stored(public, secret) -> bytes:
    return json.dumps({"public": public, "secret": secret}).encode()


@pytest.mark.parametrize(
    "data, why",
    [
        (None, "not a JSON"),
        (b"\xff", "not a JSON"),
        (b"[1]", "not a JSON"),
        (b'{"public": "x"}', "public key"),
        (stored("a" * 40, None), "secret key"),
        (stored("a" * 40, "b" * 39), "secret key"),
        (stored("a" * 40, "\u00e9" * 40), "secret key"),
        (stored("a" * 40, "\x7f" * 40), "not Z85"),
        (stored("a" * 40, new_keys().secret.decode()), "does not belong"),
    ],
)
def test_anything_but_a_keypair_is_refused_naming_the_node(data, why):
    with pytest.raises(TopologyKeysError, match=why) as info:
        decode_keys(data, WHERE)
    assert WHERE in str(info.value)


def test_a_refusal_never_shows_the_secret():
    secret = new_keys().secret.decode()
    with pytest.raises(TopologyKeysError) as info:
        decode_keys(stored("a" * 40, secret), WHERE)
    assert secret not in str(info.value)


def created_with(conf_overrides):
    made = []

    def create_topology(tid, base, tasks, assignment, keys):
        made.append(keys)

    state = SimpleNamespace(epoch=1, create_topology=create_topology)
    conf = {**load_defaults(), **conf_overrides}
    shell = Controller(conf, state, inbox=None, code=SimpleNamespace(store=None), later=None)
    base = StormBase("t", "active", 0, 1, {})
    assignment = Assignment(epoch=1, code_dir="", node_host={}, task_slots={}, task_start_secs={})
    shell.runner.run(ins.CreateTopology("t-1", base, {1: "a"}, assignment, 1))
    return made


def test_nimbus_makes_a_keypair_per_topology_only_with_security_on():
    (first,) = created_with({})
    (second,) = created_with({})
    assert isinstance(first, TopologyKeys) and first != second
    assert created_with({"security": False}) == [None]
