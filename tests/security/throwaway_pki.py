"""A throwaway certificate authority for tests: a CA, a server certificate for 127.0.0.1
and client certificates whose subject CN names an identity. Made fresh per test session with
the `cryptography` package; nothing here is meant for a real cluster (squall/tls.py is)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    directory: Path
    ca: Path

    def pair(self, name: str) -> tuple[Path, Path]:
        return self.directory / f"{name}.crt", self.directory / f"{name}.key"

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(self.ca))
        ctx.load_cert_chain(*map(str, self.pair("server")))
        ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

    def client_context(self, name: str | None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))
        if name is not None:
            ctx.load_cert_chain(*map(str, self.pair(name)))
        return ctx


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write(directory: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey):
    (directory / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / f"{name}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def make_pki(directory: Path, clients: tuple[str, ...]) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("squall test CA"))
        .issuer_name(_name("squall test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    _write(directory, "ca", ca, ca_key)

    def issue(name: str, usage: x509.ObjectIdentifier, san: x509.GeneralName | None) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if san is not None:
            builder = builder.add_extension(x509.SubjectAlternativeName([san]), critical=False)
        _write(directory, name, builder.sign(ca_key, hashes.SHA256()), key)

    issue(
        "server", ExtendedKeyUsageOID.SERVER_AUTH, x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    )
    for client in clients:
        issue(client, ExtendedKeyUsageOID.CLIENT_AUTH, None)
    return Pki(directory, directory / "ca.crt")
