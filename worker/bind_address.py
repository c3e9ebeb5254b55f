"""Which address a worker binds: its supervisor's host resolved to one IP address, since ZeroMQ
binds an address or an interface, never a name, and binding every interface would let
strangers on other networks reach the worker."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

Resolver = Callable[..., list[tuple[Any, ...]]]


class BindError(ValueError):
    """The worker's host has no address this machine can bind."""


def bind_address(host: str, resolve: Resolver = socket.getaddrinfo) -> str:
    """The IP address to bind for `host` (ZeroMQ binds an address or an interface, never a
    name): its first IPv4 address, else its first IPv6 one."""
    if not host:
        raise BindError("a worker needs its supervisor's host to bind to")
    try:
        infos = resolve(host, None, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise BindError(f"cannot resolve the worker's host {host!r}: {exc}") from exc
    for family in (socket.AF_INET, socket.AF_INET6):
        for info in infos:
            if info[0] == family:
                return str(info[4][0])
    raise BindError(f"the worker's host {host!r} has no IPv4 or IPv6 address")


def loopback_surprise(host: str, address: str) -> bool:
    """Whether a host *name* other than localhost resolved to a loopback address (Debian's
    /etc/hosts maps the machine's name to 127.0.1.1): workers on other machines then cannot
    reach this one, and storm.local.hostname should name a reachable address."""
    try:
        ipaddress.ip_address(host)
        return False  # an address given literally is meant as given
    except ValueError:
        pass
    return host != "localhost" and ipaddress.ip_address(address).is_loopback


def endpoint(address: str, port: int) -> str:
    """The ZeroMQ TCP endpoint of an IP address (IPv6 ones in brackets)."""
    return f"tcp://[{address}]:{port}" if ":" in address else f"tcp://{address}:{port}"
