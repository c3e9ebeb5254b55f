"""squall.security.user_credentials: uploadNewCredentials' merge, owner check and stored form."""

import pytest

from squall.security import user_credentials as uc


def test_an_upload_merges_into_what_is_stored():
    assert uc.merged({"a": "1", "b": "2"}, {"b": "3", "c": "4"}) == {"a": "1", "b": "3", "c": "4"}
    assert uc.merged({"a": "1"}, None) == {"a": "1"}


def test_bad_or_too_big_credentials_are_refused():
    with pytest.raises(uc.CredentialsError, match="strings"):
        uc.merged({}, {"a": 1})
    with pytest.raises(uc.CredentialsError, match="exceed"):
        uc.merged({}, {"big": "x" * uc.MAX_BYTES})


def test_credentials_for_another_owner_are_refused():
    assert uc.owner_problem(None, "alice") is None
    assert uc.owner_problem("alice", "alice") is None
    assert "bob" in uc.owner_problem("bob", "alice")


def test_stored_form_round_trips_and_junk_is_an_error():
    assert uc.decode(uc.encode({"k": "v"}, "alice"), "w") == {"k": "v"}
    assert uc.decode(None, "w") == {}
    for junk in (b"nope", b"[]", b'{"creds": [1]}', b'{"creds": {"k": 1}}'):
        with pytest.raises(uc.CredentialsError, match="w"):
            uc.decode(junk, "w")
