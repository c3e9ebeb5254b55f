"""A client's check of its own credentials before it connects, and the names of TLS failures.

Nimbus closes a refused TLS connection without a word the client can read (with TLS 1.3 the
client learns only at its first read, as "TSocket read 0 bytes"), and a client refusing
nimbus's certificate surfaced as "could not connect", the same as a stopped nimbus. So the
client first checks what it holds (readable, in its validity period, signed by the CA it
trusts, the key of the certificate) and says what is wrong and what to do; what still fails
at the handshake is named as a TLS failure with nimbus at host:port, never "no leader".
"""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from thriftpy2.transport import TTransportException


class ClientCertificateError(ConnectionError):
    """This client's certificate, key or CA file cannot authenticate it to nimbus."""


class TlsRefusedError(ConnectionError):
    """The TLS handshake with a nimbus failed: one side refused the other's certificate."""


def _reissue(name: str, pem: Path) -> str:
    return (
        f"issue a new one on the CA host (remove {name}.pem and {name}.key from its "
        f"credentials dir, then `squall credentials issue {name}`) and copy {name}.pem and "
        f"{name}.key into {pem.parent}"
    )


def _after(cert: x509.Certificate) -> datetime.datetime:
    """The end of `cert`'s validity, aware (cryptography 41 has only the naive UTC form)."""
    aware = getattr(cert, "not_valid_after_utc", None)
    return aware or cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def _before(cert: x509.Certificate) -> datetime.datetime:
    aware = getattr(cert, "not_valid_before_utc", None)
    return aware or cert.not_valid_before.replace(tzinfo=datetime.timezone.utc)


def _day(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _load(path: Path, what: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ClientCertificateError(f"cannot read {what} {path}: {exc}") from exc


def _signed_by(cert: x509.Certificate, cas: list[x509.Certificate]) -> bool:
    for ca in cas:
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except (ValueError, TypeError, InvalidSignature):
            continue
    return False


def certificate_problem(
    name: str, pem: Path, key: Path, ca: Path, now: datetime.datetime | None = None
) -> str | None:
    """What is wrong with identity `name`'s certificate `pem`, key `key` and trusted CA `ca`
    (None: nothing this side can see); each answer says what to do."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    try:
        cert = _load(pem, "your certificate")[0]
        cas = _load(ca, "the cluster CA certificate")
    except ClientCertificateError as exc:
        return str(exc)
    if all(now > _after(c) for c in cas):
        return f"the cluster CA {ca} expired on {_day(_after(cas[0]))}"
    if now > _after(cert):
        when = _day(_after(cert))
        return f"your certificate {pem} expired on {when}; {_reissue(name, pem)}"
    if now < _before(cert):
        when = _day(_before(cert))
        return f"your certificate {pem} is not valid before {when}: check this host's clock"
    if not _signed_by(cert, cas):
        return (
            f"your certificate {pem} is not signed by the CA in {ca}: they come from different "
            f"clusters (every cluster's CA has the same name). Copy this cluster's ca.pem "
            f"into {ca.parent}, or {_reissue(name, pem)}"
        )
    try:
        private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        return f"cannot read your private key {key}: {exc}"
    if private.public_key() != cert.public_key():
        return (
            f"{key} is not the private key of {pem}: copy the pair that was issued together "
            f"(`squall credentials issue {name}` writes both)"
        )
    return None


def describe(pem: Path) -> str:
    """One line on a certificate, for -v."""
    try:
        cert = x509.load_pem_x509_certificate(pem.read_bytes())
    except (OSError, ValueError) as exc:
        return f"{pem}: unreadable ({exc})"
    return (
        f"{pem}: subject {cert.subject.rfc4514_string()}, issuer {cert.issuer.rfc4514_string()},"
        f" valid {_day(_before(cert))} to {_day(_after(cert))}"
    )


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def tls_failure(exc: BaseException, address: str, identity: str, ca: Path) -> str | None:
    """The TLS failure `exc` (raised connecting to, or on the first call of, a TLS client of
    the nimbus at `address`) in words, or None when it is not one."""
    for link in _chain(exc):
        if isinstance(link, ssl.SSLCertVerificationError):
            return (
                f"this client does not trust the certificate of nimbus at {address} "
                f"({link.verify_message}): the CA in {ca} did not sign it, or nimbus is not "
                "reached by a name its certificate holds; copy the cluster's ca.pem from "
                "nimbus's credentials dir"
            )
        if isinstance(link, ssl.SSLError):
            return f"TLS refused by nimbus at {address}: {link.reason or link}"
    if isinstance(exc, TTransportException) and exc.type == TTransportException.END_OF_FILE:
        return (
            f"TLS refused by nimbus at {address}: it closed the connection right after the "
            f"handshake, so it refused the certificate of {identity!r} (nimbus's log names the "
            "reason: expired certificate, unknown CA, ...)"
        )
    return None
