"""getNimbusConf's view of the conf: no password leaves nimbus."""

from squall.nimbus.reads.redaction import REDACTED, redacted


def test_the_zookeeper_payload_and_the_store_password_are_redacted():
    conf = {
        "storm.zookeeper.auth.payload": "squall:s3cret",
        "nimbus.store.url": "postgresql+psycopg://nimbus:s3cret@db.example:5432/squall",
        "nimbus.thrift.port": 6627,
    }
    shown = redacted(conf)
    assert shown["storm.zookeeper.auth.payload"] == REDACTED
    assert shown["nimbus.store.url"] == "postgresql+psycopg://nimbus:***@db.example:5432/squall"
    assert shown["nimbus.thrift.port"] == 6627
    assert "s3cret" not in repr(shown)
    assert conf["storm.zookeeper.auth.payload"] == "squall:s3cret"  # the original is kept


def test_settings_without_secrets_are_shown_as_they_are():
    conf = {"storm.zookeeper.auth.payload": "", "nimbus.store.url": "sqlite:////var/store.db"}
    assert redacted(conf) == conf


def test_a_store_url_that_cannot_be_parsed_is_hidden_whole():
    assert redacted({"nimbus.store.url": "not a url :: s3cret"})["nimbus.store.url"] == REDACTED


def test_any_key_naming_a_secret_or_key_path_is_redacted():
    conf = {
        "nimbus.thrift.tls.server.keystore.password": "pw",
        "my.api.token": "t0ken",
        "drpc.https.keystore.path": "/etc/ks.jks",
        "blobstore.hdfs.keytab": "/etc/nimbus.keytab",
        "worker.private.key.path": "/etc/k.pem",
        "some.client.secret": "s",
        "security.dir": "/var/squall/credentials",
        "security.user": "admin",
    }
    shown = redacted(conf)
    for key in list(conf)[:6]:
        assert shown[key] == REDACTED, key
    assert shown["security.dir"] == "/var/squall/credentials"
    assert shown["security.user"] == "admin"
