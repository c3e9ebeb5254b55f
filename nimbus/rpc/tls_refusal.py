"""What nimbus's TLS port says to a client it refuses, and how it names and logs the refusal.

A Storm or streamparse client speaks plain framed Thrift. Before TLS, nimbus looks at the
first byte of a connection (a TLS ClientHello starts with 0x16); a plain Thrift call is read
up to its method name and sequence id and answered with a TApplicationException the client
prints, naming `squall proxy` and SECURITY.md, instead of the bare EOF a TLS server gives.
A handshake that fails is named from OpenSSL's reason and verify code (expired certificate,
unknown CA, no certificate...). Each refusal is logged, at most one line per peer and reason
per interval, so a client retrying in a loop cannot flood nimbus's log.
"""

from __future__ import annotations

import logging
import ssl
import struct
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from thriftpy2.thrift import TMessageType

from squall.nimbus.rpc.thrift_call import exception_reply

TLS_HANDSHAKE = 0x16  # a TLS record of type handshake: the first byte of every ClientHello
VERSION_MASK, VERSION_1 = 0xFFFF0000, 0x80010000  # Thrift binary protocol, strict
UNSUPPORTED_CLIENT_TYPE = 10  # TApplicationException's type (libthrift 0.9.1+)
MAX_NAME_BYTES = 256
PLAIN_MESSAGE = (
    "this nimbus requires TLS with a client certificate (security: true); a plain Thrift "
    "client cannot call it. Run `squall proxy` on your machine (it forwards plain Thrift on "
    "127.0.0.1:6627 to nimbus over TLS as your squall identity) and point the client at it; "
    "see SECURITY.md"
)
PLAIN = "plain Thrift client (no TLS): answered that TLS with a client certificate is required"
NOT_THRIFT = "neither TLS nor Thrift: closed"
# OpenSSL's X509_V_ERR_* codes a client certificate fails with
VERIFY_REASONS = {
    9: "certificate not yet valid (check the clocks)",
    10: "expired certificate",
    2: "unknown CA (certificate not issued by this cluster's CA)",
    7: "unknown CA (signed by another cluster's CA of the same name)",
    18: "unknown CA (self-signed certificate)",
    19: "unknown CA (certificate not issued by this cluster's CA)",
    20: "unknown CA (certificate not issued by this cluster's CA)",
    21: "unknown CA (certificate not issued by this cluster's CA)",
}
# refusals of a client's own certificate (a supervisor that holds one takes no slots)
CERTIFICATE_REASONS = frozenset(VERIFY_REASONS.values()) | {"no certificate"}
REASONS = {
    "PEER_DID_NOT_RETURN_A_CERTIFICATE": "no certificate",
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "no certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "the client does not trust nimbus's certificate (its ca.pem "
    "is another cluster's)",
    "SSLV3_ALERT_BAD_CERTIFICATE": "the client refused nimbus's certificate",
    "WRONG_VERSION_NUMBER": "not TLS",
    "HTTP_REQUEST": "plain HTTP (no TLS)",
}


@dataclass(frozen=True)
class PlainCall:
    """The start of a plain Thrift call: enough to answer it."""

    name: str
    seqid: int
    framed: bool


def speaks_tls(first: bytes) -> bool:
    return first[:1] == bytes([TLS_HANDSHAKE])


async def read_plain_call(
    readexactly: Callable[[int], Awaitable[bytes]], max_frame: int
) -> PlainCall | None:
    """The method and sequence id of a strict binary-protocol call, framed (length, then the
    message) or not; None for anything else. Reads no further than the sequence id."""
    head = await readexactly(8)
    word, after = struct.unpack("!II", head)
    if word & VERSION_MASK == VERSION_1:  # unframed: the version word, then the name length
        version, name_length, framed = word, after, False
    elif 0 < word <= max_frame and after & VERSION_MASK == VERSION_1:
        version, framed = after, True
        (name_length,) = struct.unpack("!I", await readexactly(4))
    else:
        return None
    if version & 0xFF not in (TMessageType.CALL, TMessageType.ONEWAY):
        return None
    if name_length > MAX_NAME_BYTES:
        return None
    name = (await readexactly(name_length)).decode("utf-8", "replace")
    (seqid,) = struct.unpack("!i", await readexactly(4))
    return PlainCall(name, seqid, framed)


def plain_reply(
    call: PlainCall, message: str = PLAIN_MESSAGE, kind: int = UNSUPPORTED_CLIENT_TYPE
) -> bytes:
    """The TApplicationException (`kind`, `message`) that answers `call`, framed as the call
    was."""
    reply = exception_reply(call.name, call.seqid, kind, message)
    return struct.pack("!i", len(reply)) + reply if call.framed else reply


def handshake_refusal(exc: BaseException) -> str:
    """Why a TLS handshake failed, in an operator's words."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = exc.verify_code
        known = VERIFY_REASONS.get(code)
        return known or f"certificate refused: {exc.verify_message} (verify code {code})"
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason in REASONS:
        return REASONS[reason]
    if isinstance(exc, TimeoutError):
        return "handshake not finished within nimbus.thrift.handshake.timeout.secs"
    return f"other: {reason or exc or type(exc).__name__}"


class RefusalLog:
    """Logs a refusal at most once per (peer, reason) per `interval` seconds, with the count
    of those left unlogged since; remembers at most `max_keys` pairs (oldest forgotten)."""

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = 60.0,
        max_keys: int = 4096,
        what: str = "a Thrift connection",
    ) -> None:
        self.logger = logger
        self.what = what
        self.interval = interval
        self.max_keys = max_keys
        self.seen: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()
        # (peer, reason) -> when last seen, of certificate refusals: read off the event loop
        self.certificates: dict[tuple[str, str], float] = {}
        self.lock = threading.Lock()

    def refused_certificates(self, now: float, within: float) -> list[tuple[str, str]]:
        """(peer, reason) of each certificate refused within `within` seconds of `now`
        (monotonic), newest first; any thread may ask."""
        with self.lock:
            recent = [(at, key) for key, at in self.certificates.items() if now - at <= within]
        return [key for _, key in sorted(recent, reverse=True)]

    def note(self, peer: str, reason: str, now: float, detail: str = "") -> bool:
        """Record one refusal; returns whether a line was logged. `detail` (this one's
        particulars) is logged, not part of the key: varying it cannot flood the log."""
        key = (peer, reason)
        if reason in CERTIFICATE_REASONS:
            with self.lock:
                self.certificates.pop(key, None)
                self.certificates[key] = now
                while len(self.certificates) > self.max_keys:
                    del self.certificates[next(iter(self.certificates))]
        last = self.seen.get(key)
        if last is not None and now - last[0] < self.interval:
            self.seen[key] = (last[0], last[1] + 1)
            return False
        suppressed = last[1] if last is not None else 0
        self.seen.pop(key, None)
        self.seen[key] = (now, 0)
        while len(self.seen) > self.max_keys:
            self.seen.popitem(last=False)
        more = f" ({suppressed} more from this peer since the last line)" if suppressed else ""
        said = f"{reason} ({detail})" if detail else reason
        self.logger.warning("refused %s from %s: %s%s", self.what, peer, said, more)
        return True
