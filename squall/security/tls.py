"""The TLS contexts of nimbus's Thrift port and the identity of a verified peer.

Identity is mutual TLS: one cluster CA signs nimbus's server certificate and a client
certificate per identity (made by squall/security/certificates.py); the client certificate's
subject CN is the principal nimbus's authorizer judges.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from squall.security.certificate_check import ClientCertificateError, certificate_problem
from squall.security.certificates import ADMIN, CA, SERVER, CertificateFilesError, credential_paths
from squall.security.mode import security_on


def _require(path: Path, name: str) -> Path:
    if not path.exists():
        raise CertificateFilesError(
            f"{path} is missing: identity {name!r} has no certificate here; run "
            f"`squall credentials issue {name}` where the cluster's CA key is and copy "
            f"{name}.pem, {name}.key and ca.pem into {path.parent}"
        )
    return path


def server_context(conf: dict[str, Any]) -> ssl.SSLContext | None:
    """Nimbus's side: its own certificate, and a client certificate signed by the cluster CA
    required of every connection. None in open mode (security: false)."""
    if not security_on(conf):
        return None
    pem, key = credential_paths(conf, SERVER)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=_require(credential_paths(conf, CA)[0], SERVER))
    context.load_cert_chain(_require(pem, SERVER), _require(key, SERVER))
    return context


def client_context(conf: dict[str, Any], name: str | None = None) -> ssl.SSLContext | None:
    """A client's side as identity `name` (default security.user): trusts only the cluster
    CA and checks nimbus's host name. None in open mode. Credentials that cannot work
    (expired, another CA's, a key of another certificate) are refused here, saying why
    (ClientCertificateError), rather than by nimbus without a word."""
    if not security_on(conf):
        return None
    name = name or conf.get("security.user") or ADMIN
    pem, key = (_require(path, name) for path in credential_paths(conf, name))
    ca = _require(credential_paths(conf, CA)[0], name)
    problem = certificate_problem(name, pem, key, ca)
    if problem is not None:
        raise ClientCertificateError(problem)
    context = ssl.create_default_context(cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(pem, key)
    return context


def peer_principal(peer_cert: dict[str, Any] | None) -> str | None:
    """The subject CN of a verified peer certificate (ssl.SSLSocket.getpeercert())."""
    for rdn in (peer_cert or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None
