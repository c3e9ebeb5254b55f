"""A topology's ZeroMQ CURVE keypair: what lets its workers, and only them, talk to each other.

Nimbus makes one keypair per topology when the topology is created and stores it in
ZooKeeper at /credentials/<topology-id> (Storm's path), next to the topology's other nodes and
removed with them. Workers read it at start: every worker port is a CURVE server with the
topology's secret key and admits only clients that prove they hold the same secret (their
public key is the topology's), so a peer without the keys can neither read nor forge tuples.

The secret is never part of the code package, the topology conf, nimbus's conf, a command
line or a log line: `repr` leaves it out, so logging an object that holds keys cannot leak it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import zmq

Z85_KEY_CHARS = 40  # a 32-byte Curve25519 key in Z85


class TopologyKeysError(ValueError):
    """A /credentials node that does not hold a usable CURVE keypair."""


@dataclass(frozen=True)
class TopologyKeys:
    """A CURVE keypair, both keys Z85-encoded (what pyzmq's socket options take)."""

    public: bytes
    secret: bytes = field(repr=False)


def new_keys() -> TopologyKeys:
    """A fresh keypair from libzmq's CSPRNG (the one impure function here)."""
    public, secret = zmq.curve_keypair()
    return TopologyKeys(public, secret)


def encode_keys(keys: TopologyKeys) -> bytes:
    return json.dumps({"public": keys.public.decode(), "secret": keys.secret.decode()}).encode()


def decode_keys(data: bytes | None, where: str) -> TopologyKeys:
    """The keypair in a /credentials node. Anything else (junk, a key of the wrong length, a
    public key that is not the secret's) is refused with the node's name, never the secret."""
    try:
        raw = json.loads((data or b"").decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TopologyKeysError(f"{where}: not a JSON CURVE keypair") from exc
    if not isinstance(raw, dict):
        raise TopologyKeysError(f"{where}: not a JSON CURVE keypair")
    public, secret = raw.get("public"), raw.get("secret")
    for name, key in (("public", public), ("secret", secret)):
        if not (isinstance(key, str) and len(key) == Z85_KEY_CHARS and key.isascii()):
            raise TopologyKeysError(f"{where}: the {name} key is not {Z85_KEY_CHARS} Z85 chars")
    assert isinstance(public, str) and isinstance(secret, str)  # for the type checker
    try:
        derived = zmq.curve_public(secret.encode())
    except (zmq.ZMQError, ValueError) as exc:
        raise TopologyKeysError(f"{where}: the secret key is not Z85") from exc
    if derived != public.encode():
        raise TopologyKeysError(f"{where}: the public key does not belong to the secret key")
    return TopologyKeys(public.encode(), secret.encode())
