"""The cluster's credentials: made once, private, never overwritten; clear errors when a
certificate is missing; nothing at all in open mode."""

import os
import stat

import pytest
from cryptography import x509

from squall.config import cluster_conf
from squall.security.certificates import (
    CertificateFilesError,
    check_name,
    ensure_credentials,
    issue,
    server_names,
)
from squall.security.tls import client_context, peer_principal, server_context

FILES = {"ca", "nimbus", "admin", "supervisor"}


@pytest.fixture
def conf(tmp_path):
    return cluster_conf(
        **{
            "storm.local.dir": str(tmp_path),
            "nimbus.host": "10.0.0.7",
            "nimbus.seeds": ["nimbus-a.example:6627", "nimbus-b.example"],
        }
    )


def test_first_start_creates_private_credentials(conf, tmp_path):
    directory = ensure_credentials(conf)
    assert directory == tmp_path / "credentials"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for name in FILES:
        assert stat.S_IMODE((directory / f"{name}.key").stat().st_mode) == 0o600
        assert (directory / f"{name}.pem").exists()
    assert not [p for p in directory.iterdir() if p.name.startswith(".") and p.name != ".lock"]
    server = x509.load_pem_x509_certificate((directory / "nimbus.pem").read_bytes())
    san = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    names = {str(n) for n in san.get_values_for_type(x509.DNSName)}
    addresses = {str(a) for a in san.get_values_for_type(x509.IPAddress)}
    assert {"localhost", "nimbus-a.example", "nimbus-b.example"} <= names
    assert {"127.0.0.1", "::1", "10.0.0.7"} <= addresses


def test_existing_credentials_are_never_replaced(conf):
    directory = ensure_credentials(conf)
    before = {p.name: p.read_bytes() for p in directory.glob("*.*")}
    ensure_credentials(conf)
    issue(conf, "admin")
    assert {p.name: p.read_bytes() for p in directory.glob("*.*")} == before


def test_issue_makes_a_user_certificate_signed_by_the_ca(conf):
    ensure_credentials(conf)
    pem = issue(conf, "alice")
    cert = x509.load_pem_x509_certificate(pem.read_bytes())
    ca = x509.load_pem_x509_certificate((pem.parent / "ca.pem").read_bytes())
    cert.verify_directly_issued_by(ca)
    cn = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
    assert cn == "alice"
    assert client_context({**conf, "security.user": "alice"}) is not None


def test_issuing_needs_the_ca_key(conf):
    directory = ensure_credentials(conf)
    os.unlink(directory / "ca.key")
    with pytest.raises(CertificateFilesError, match="ca.key"):
        issue(conf, "bob")


@pytest.mark.parametrize("name", ["", "../evil", ".hidden", "a b", "ca", "nimbus"])
def test_identity_names_are_plain_and_not_the_clusters_own(name):
    with pytest.raises(CertificateFilesError):
        check_name(name)


def test_a_missing_certificate_names_the_file_and_the_fix(conf):
    ensure_credentials(conf)
    with pytest.raises(CertificateFilesError) as info:
        client_context({**conf, "security.user": "bob"})
    message = str(info.value)
    assert "bob.pem" in message and "squall credentials issue bob" in message


def test_contexts_require_tls12_and_certificates_both_ways(conf):
    ensure_credentials(conf)
    server, client = server_context(conf), client_context(conf)
    import ssl

    assert server.verify_mode == ssl.CERT_REQUIRED
    assert client.verify_mode == ssl.CERT_REQUIRED and client.check_hostname
    assert server.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert client.minimum_version >= ssl.TLSVersion.TLSv1_2


def test_open_mode_needs_no_credentials(tmp_path):
    conf = cluster_conf(**{"storm.local.dir": str(tmp_path), "security": False})
    assert server_context(conf) is None and client_context(conf) is None
    assert not (tmp_path / "credentials").exists()


def test_server_names_skip_wildcard_addresses():
    names = server_names({"nimbus.host": "0.0.0.0", "nimbus.seeds": ["[::1]:6627"]})
    assert "0.0.0.0" not in names and "::1" in names


def test_peer_principal_is_the_subject_cn():
    cert = {"subject": ((("organizationName", "squall"),), (("commonName", "alice"),))}
    assert peer_principal(cert) == "alice"
    assert peer_principal({}) is None and peer_principal(None) is None
