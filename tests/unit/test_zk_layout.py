"""Every ZooKeeper path the layout names is a string under the root (a property that lost its
decorator once handed nimbus a bound method, and every cluster failed to start)."""

from squall.zk.layout import ZkLayout


def test_every_root_path_is_a_string_under_the_root():
    layout = ZkLayout("/squall")
    roots = [name for name, value in vars(ZkLayout).items() if isinstance(value, property)]
    assert "credentials_root" in roots and "assignments" in roots
    for name in roots:
        path = getattr(layout, name)
        assert isinstance(path, str) and path.startswith("/squall/"), name
