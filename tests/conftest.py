"""Marks for the whole suite: the tests under integration/ and security/ run real servers
(ZooKeeper, nimbus, supervisors, Spark) and are marked `integration`, so
`pytest -m 'not integration'` runs the pure unit tests alone."""

from pathlib import Path

import pytest

WITH_SERVERS = (Path(__file__).parent / "integration", Path(__file__).parent / "security")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(directory in item.path.parents for directory in WITH_SERVERS):
            item.add_marker(pytest.mark.integration)
