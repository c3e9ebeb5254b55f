"""squall/security/certificate_check.py: a client names what is wrong with its own credentials
before it connects, and names a TLS failure as one."""

import datetime
import shutil
import ssl

from thriftpy2.transport import TTransportException

from squall.config import cluster_conf
from squall.security.certificate_check import certificate_problem, tls_failure
from squall.security.certificates import ensure_credentials
from tests.security.cert_factory import client_certificate

NOW = datetime.datetime.now(datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


def _ca(tmp_path, name):
    return ensure_credentials(cluster_conf(**{"storm.local.dir": str(tmp_path / name)}))


def test_good_credentials_pass_and_each_fault_is_named_with_what_to_do(tmp_path):
    ca = _ca(tmp_path, "cluster")
    good = client_certificate(ca, tmp_path / "good", "alice")
    assert certificate_problem("alice", *good, ca / "ca.pem") is None
    old = client_certificate(
        ca, tmp_path / "old", "alice", not_before=NOW - 3 * DAY, not_after=NOW - DAY
    )
    expired = certificate_problem("alice", *old, ca / "ca.pem")
    assert expired is not None and f"{old[0]} expired on " in expired
    assert "`squall credentials issue alice`" in expired and "CA host" in expired
    early = client_certificate(
        ca, tmp_path / "early", "alice", not_before=NOW + DAY, not_after=NOW + 2 * DAY
    )
    assert "not valid before" in (certificate_problem("alice", *early, ca / "ca.pem") or "")
    other = _ca(tmp_path, "other")
    foreign = certificate_problem("admin", other / "admin.pem", other / "admin.key", ca / "ca.pem")
    assert foreign is not None and "is not signed by the CA in" in foreign
    mismatch = certificate_problem("alice", good[0], ca / "admin.key", ca / "ca.pem")
    assert mismatch is not None and "is not the private key of" in mismatch
    missing = certificate_problem("alice", tmp_path / "none.pem", good[1], ca / "ca.pem")
    assert missing is not None and "cannot read your certificate" in missing
    shutil.copy(good[1], tmp_path / "garbage.pem")
    garbage = certificate_problem("alice", tmp_path / "garbage.pem", good[1], ca / "ca.pem")
    assert garbage is not None and "cannot read" in garbage


def test_tls_failures_are_named_and_others_are_not(tmp_path):
    verify = ssl.SSLCertVerificationError(1, "certificate verify failed")
    verify.verify_message = "self-signed certificate in certificate chain"
    connect = TTransportException(TTransportException.NOT_OPEN, "Could not connect")
    connect.__context__ = verify
    named = tls_failure(connect, "h:1", "alice", tmp_path / "ca.pem")
    assert named is not None and "does not trust the certificate of nimbus at h:1" in named
    eof = TTransportException(TTransportException.END_OF_FILE, "TSocket read 0 bytes")
    refused = tls_failure(eof, "h:1", "alice", tmp_path / "ca.pem")
    assert refused is not None and refused.startswith("TLS refused by nimbus at h:1")
    plain_refused = TTransportException(TTransportException.NOT_OPEN, "Could not connect")
    plain_refused.__context__ = ConnectionRefusedError(111, "Connection refused")
    assert tls_failure(plain_refused, "h:1", "alice", tmp_path / "ca.pem") is None
