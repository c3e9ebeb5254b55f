"""A topology whose tasks cannot start says so, with the cause, where an operator looks:
Storm's sched_status in getClusterInfo and getTopologyInfo, `squall list`, and the UI's REST
(whose schedulerInfo the topology page and the topology list show)."""

from pathlib import Path

import httpx
import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES, squall

pytestmark = pytest.mark.integration
CAUSE = "ModuleNotFoundError: No module named 'squall_geocoder_not_installed'"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("run-status"), supervisors=1, ui=True) as c:
        yield c


def test_a_bolt_missing_its_package_shows_tasks_not_running_and_the_cause(cluster):
    with cluster.client() as client:
        name = submit_file(client, TOPOLOGIES / "missing_package.py", cluster.client_conf())

    def status() -> str:
        with cluster.client() as client:
            [summary] = [t for t in client.getClusterInfo().topologies if t.name == name]
            return summary.sched_status or ""

    try:
        wait_for(lambda: CAUSE in status(), 120, "the cause in the topology's status")
        assert "tasks starting" in status() or "tasks not running" in status()
        with cluster.client() as client:
            info = client.getTopologyInfo(client.getTopologyInfoByName(name).id)
            assert info.status == "ACTIVE" and CAUSE in info.sched_status

        def listed() -> str:
            done = squall(cluster, "list")
            assert done.returncode == 0, done.stderr
            return done.stdout

        # a restart of the worker may come between two reads: the next read has it again
        wait_for(lambda: CAUSE in listed(), 60, f"the cause in `squall list`:\n{listed()}")
        assert f"{name} (" in listed()

        def ui(path: str) -> dict:
            headers = cluster.ui_headers()
            return httpx.get(cluster.ui_url + "/api/v1" + path, timeout=30, headers=headers).json()

        tid = info.id
        page = f"/topology/{tid}"
        wait_for(lambda: CAUSE in ui(page)["schedulerInfo"], 60, f"the UI page: {ui(page)}")
        [listed_in_ui] = [t for t in ui("/topology/summary")["topologies"] if t["id"] == tid]
        assert "tasks" in listed_in_ui["schedulerInfo"]
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_the_topology_page_in_a_browser_shows_why_its_tasks_do_not_run(cluster):
    """The cause on the page an operator opens, as headless Chromium renders it."""
    from playwright.sync_api import sync_playwright

    with cluster.client() as client:
        name = submit_file(
            client, TOPOLOGIES / "missing_package.py", cluster.client_conf(), name="page"
        )
        tid = client.getTopologyInfoByName(name).id
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
            try:
                page = browser.new_page()
                page.goto(cluster.ui_address)  # stores the token, then the clean address
                page.wait_for_selector("#topologies a", timeout=60_000)

                page.goto(f"{cluster.ui_url}/#/topology/{tid}")

                def shown() -> str:
                    page.reload()  # a fresh read of the page's data each look
                    page.wait_for_selector("#topology-scheduler", timeout=30_000)
                    return page.locator("#topology-scheduler").inner_text()

                wait_for(lambda: CAUSE in shown(), 120, "the cause on the topology page")
                assert "tasks" in shown()
            finally:
                browser.close()
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
