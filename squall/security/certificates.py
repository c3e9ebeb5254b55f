"""The cluster's certificates: one CA, nimbus's server certificate and a client certificate per
identity, made with `cryptography` (squall/security/tls.py turns them into TLS contexts).

Files live in credentials_dir(conf): ca.pem/ca.key, nimbus.pem/nimbus.key, and
<name>.pem/<name>.key per client identity ("admin", "supervisor" and "ui" are made at first
start). Nothing is ever overwritten: a file that exists is kept, so a running cluster's
identities survive restarts, and two processes creating credentials at once (nimbus and
`squall credentials init`) serialize on a lock file and see each other's work.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import ipaddress
import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from squall.security.mode import credentials_dir

CA = "ca"
SERVER = "nimbus"
ADMIN = "admin"
SUPERVISOR = "supervisor"
UI = "ui"  # the `squall ui` daemon's client identity towards nimbus
UI_HTTPS = "ui-https"  # its HTTPS server certificate when ui.host is not loopback
CA_DAYS = 3650
CERT_DAYS = 825
UNSPECIFIED = {"", "0.0.0.0", "::"}


class CertificateFilesError(RuntimeError):
    """A certificate or key this process needs is missing or cannot be made."""


def credential_paths(conf: dict[str, Any], name: str) -> tuple[Path, Path]:
    """Identity `name`'s certificate and key files."""
    directory = credentials_dir(conf)
    return directory / f"{name}.pem", directory / f"{name}.key"


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Write `path` whole or not at all (temp file, then rename); never replace a file."""
    if path.exists():
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # unlike rename, fails if another process made the file first
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    with (directory / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _key_bytes(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "squall"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, public: Any, days: int
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # small clock skew
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
    )


def _create_ca(conf: dict[str, Any]) -> None:
    pem, key_path = credential_paths(conf, CA)
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name("squall cluster CA")
    cert = (
        _builder(name, name, key.public_key(), CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    _write_new(key_path, _key_bytes(key), 0o600)
    _write_new(pem, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _load_ca(conf: dict[str, Any]) -> tuple[x509.Certificate, Any]:
    pem, key_path = credential_paths(conf, CA)
    if not key_path.exists():
        raise CertificateFilesError(
            f"cannot issue certificates here: the CA key {key_path} is missing "
            "(run this where the cluster's CA key is)"
        )
    cert = x509.load_pem_x509_certificate(pem.read_bytes())
    return cert, serialization.load_pem_private_key(key_path.read_bytes(), password=None)


def server_names(conf: dict[str, Any]) -> list[str]:
    """Every name a client may reach nimbus by: loopback, this host's names, nimbus.host and
    the hosts of nimbus.seeds."""
    names = ["localhost", "127.0.0.1", "::1", socket.getfqdn(), socket.gethostname()]
    names.append(str(conf.get("nimbus.host") or ""))
    for seed in conf.get("nimbus.seeds") or []:
        host, sep, port = str(seed).rpartition(":")
        names.append(host if sep and port.isdigit() else str(seed))
    unique = []
    for name in names:
        name = name.strip("[]")
        if name not in UNSPECIFIED and name not in unique:
            unique.append(name)
    return unique


def _san(names: list[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _issue(conf: dict[str, Any], name: str, server: bool, names: list[str] | None = None) -> None:
    pem, key_path = credential_paths(conf, name)
    if pem.exists() and key_path.exists():
        return
    if pem.exists() or key_path.exists():
        raise CertificateFilesError(f"{pem} or {key_path} exists without the other; remove it")
    ca_cert, ca_key = _load_ca(conf)
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        _builder(_name(name), ca_cert.subject, key.public_key(), CERT_DAYS)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if server:
        builder = builder.add_extension(_san(names or server_names(conf)), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    _write_new(key_path, _key_bytes(key), 0o600)
    _write_new(pem, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def check_name(name: str) -> str:
    """A client identity is a file name in the credentials dir and a CN: keep it plain."""
    if not name or not all(c.isalnum() or c in "-_." for c in name) or name[0] == ".":
        raise CertificateFilesError(f"{name!r} is not a valid identity (letters, digits, - _ .)")
    if name in (CA, SERVER):
        raise CertificateFilesError(f"{name!r} is reserved for the cluster's own certificates")
    return name


def issue(conf: dict[str, Any], name: str) -> Path:
    """A client certificate for identity `name` (kept if it exists); returns its .pem path.
    Needs the CA key, so it runs where nimbus's credentials are."""
    check_name(name)
    with _locked(credentials_dir(conf)):
        _issue(conf, name, server=False)
    return credential_paths(conf, name)[0]


def ensure_credentials(conf: dict[str, Any]) -> Path:
    """Create whatever of the CA, nimbus's server certificate and the admin and supervisor
    client certificates is missing; returns the directory."""
    directory = credentials_dir(conf)
    with _locked(directory):
        ca_pem, ca_key = credential_paths(conf, CA)
        if not ca_pem.exists():
            if ca_key.exists():
                raise CertificateFilesError(f"{ca_key} exists without {ca_pem}; remove it")
            _create_ca(conf)
        _issue(conf, SERVER, server=True)
        for name in (ADMIN, SUPERVISOR, UI):
            _issue(conf, name, server=False)
    return directory


def ui_server_files(conf: dict[str, Any]) -> tuple[Path, Path, Path]:
    """The UI's HTTPS certificate and key (made where missing: needs the CA key, so the UI
    runs where nimbus's credentials are, like `squall credentials issue`) and ca.pem, which
    its clients' certificates must chain to. Its names: ui.host and this host's names."""
    names = [str(conf.get("ui.host") or ""), *server_names(conf)]
    unique = [n for i, n in enumerate(names) if n and n not in UNSPECIFIED and n not in names[:i]]
    with _locked(credentials_dir(conf)):
        _issue(conf, UI_HTTPS, server=True, names=unique)
    pem, key = credential_paths(conf, UI_HTTPS)
    return pem, key, credential_paths(conf, CA)[0]


def issue_server(conf: dict[str, Any], name: str, names: list[str]) -> Path:
    """A server certificate for identity `name` naming `names` (kept if it exists); returns
    its .pem path. Needs the CA key (`squall spark certificate`: the Spark host's listener)."""
    check_name(name)
    with _locked(credentials_dir(conf)):
        _issue(conf, name, server=True, names=names)
    return credential_paths(conf, name)[0]
