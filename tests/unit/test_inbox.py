"""The inbox's files: an upload that goes untouched, finished or not, expires with its file."""

from squall.config import cluster_conf
from squall.nimbus.blobs.inbox import Inbox
from squall.nimbus.blobs.upload_policy import UploadQuota


def test_finished_but_unsubmitted_uploads_expire(tmp_path):
    inbox = Inbox(tmp_path / "inbox", UploadQuota.from_conf(cluster_conf()))
    idle = inbox.begin(now=0.0, owner="alice")
    finished = inbox.begin(now=0.0, owner="alice")
    inbox.append(finished, b"code", 0.0, "alice")
    inbox.finish(finished, 0.0, "alice")
    paths = [inbox.uploads[location].path for location in (idle, finished)]
    assert all(path.exists() for path in paths)
    assert inbox.expire(3600.0, max_age=3600) == []
    assert set(inbox.expire(3601.0, max_age=3600)) == {idle, finished}
    assert not any(path.exists() for path in paths)
