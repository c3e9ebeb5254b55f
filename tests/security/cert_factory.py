"""Client certificates for tests of refusals: expired, not yet valid, or signed by the CA of
another cluster, made with `cryptography` from a credentials dir's CA (or none)."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def client_certificate(
    ca_dir: Path,
    out_dir: Path,
    name: str,
    *,
    not_before: datetime.datetime | None = None,
    not_after: datetime.datetime | None = None,
) -> tuple[Path, Path]:
    """<out_dir>/<name>.pem and .key, a client certificate CN=name signed by ca_dir's CA,
    valid from `not_before` to `not_after` (default: an hour ago to a day ahead)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_cert = x509.load_pem_x509_certificate((ca_dir / "ca.pem").read_bytes())
    ca_key = serialization.load_pem_private_key((ca_dir / "ca.key").read_bytes(), None)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "squall"),
            x509.NameAttribute(NameOID.COMMON_NAME, name),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or now - datetime.timedelta(hours=1))
        .not_valid_after(not_after or now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]  # an EC key
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    pem, key_path = out_dir / f"{name}.pem", out_dir / f"{name}.key"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return pem, key_path


def foreign_supervisor_security(credentials: Path, other_ca: Path, target: Path) -> Path:
    """A supervisor's security dir (at `target`, from the cluster's `credentials`) whose
    certificate and key another CA (`other_ca`'s) signed, while its ca.pem trusts both CAs:
    the supervisor's own certificate check passes and nimbus refuses it."""
    shutil.copytree(credentials, target)
    for name in ("supervisor.pem", "supervisor.key"):
        shutil.copy(other_ca / name, target / name)
    (target / "ca.pem").write_bytes(
        (other_ca / "ca.pem").read_bytes() + (credentials / "ca.pem").read_bytes()
    )
    return target
