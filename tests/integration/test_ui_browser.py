"""The page of `squall ui` in a real headless Chromium (Debian's chromium, driven by
Playwright; no browser download): a running word count's component graph drawn as SVG
with counts that grow between two reads, its tables, and a deactivation through the page's
button (with its confirmation) that takes effect in nimbus; debug sampling and log levels
set through the page's prompts. Saves a screenshot to the test's tmp
dir (SQUALL_UPDATE_SCREENSHOT=1: also to docs/ui-topology.png, the README's)."""

import os
import shutil
from pathlib import Path

import pytest

from squall.local import LocalCluster, topology_id, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
)
SCREENSHOT = Path(__file__).parents[2] / "docs" / "ui-topology.png"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("ui-browser"), supervisors=1, ui=True) as c:
        with c.client() as client:
            submit_file(client, TOPOLOGIES / "ui_words.py", c.client_conf(), name="words")
        yield c


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


def _emitted(page, component: str) -> int:
    text = page.locator(f'#graph [data-component="{component}"] text.emitted').text_content()
    return int(text.split()[-1])


def test_topology_page_live_graph_and_deactivate(cluster, browser, tmp_path):
    with cluster.client() as client:
        tid = topology_id(client, "words")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto(cluster.ui_address)  # with the token, as `squall local` prints it
        page.wait_for_selector("#topologies a", timeout=60_000)
        # no ambient credential: the token left the address for this origin's localStorage,
        # and no cookie (one would go to every server on 127.0.0.1) carries it
        assert page.url == cluster.ui_url + "/"
        assert page.context.cookies() == []
        token = cluster.ui_address.split("?token=")[1]
        assert page.evaluate("localStorage.getItem('squall-ui-token')") == token
        assert page.locator("#cluster td").first.inner_text() == "1"  # one supervisor
        assert "supervisor1" in page.locator("#supervisors").inner_text()
        page.click("#topologies a")
        page.wait_for_selector("#graph [data-component='count']", timeout=60_000)
        nodes = {
            page.locator("#graph .node").nth(i).get_attribute("data-component")
            for i in range(page.locator("#graph .node").count())
        }
        assert nodes == {"sentences", "split", "count"}
        assert page.locator("#graph path.edge").count() == 2
        # Storm's windows: a row per window in the topology's stats, a picker for the rest
        assert page.locator("#topology-stats tr").count() == 1 + 4
        assert "All time" in page.locator("#window-hint").inner_text()

        first = _emitted(page, "sentences")
        wait_for(lambda: _emitted(page, "sentences") > first, 60, "the page's counts to grow")
        wait_for(lambda: "/s" in page.locator("#spouts").inner_text(), 30, "a rate")
        page.click("#window-picker [data-window='600']")
        wait_for(lambda: "10m 0s" in page.locator("#window-hint").inner_text(), 30, "10m window")
        page.screenshot(path=str(tmp_path / "ui-topology.png"), full_page=True)
        if os.environ.get("SQUALL_UPDATE_SCREENSHOT"):  # refresh the README's picture
            shutil.copy(tmp_path / "ui-topology.png", SCREENSHOT)

        confirmations = []

        def accept(dialog):
            confirmations.append(dialog.message)
            dialog.accept()

        page.on("dialog", accept)
        page.click("#deactivate")
        wait_for(lambda: confirmations, 10, "the confirmation")
        assert "deactivate topology words" in confirmations[0]

        def inactive() -> bool:
            with cluster.client() as client:
                return client.getTopologySummary(tid).status == "INACTIVE"

        wait_for(inactive, 30, "nimbus to deactivate words")
        wait_for(
            lambda: page.locator("#topology-status").inner_text() == "INACTIVE",
            30,
            "the page to show INACTIVE",
        )

        page.click("#graph [data-component='count']")  # a node leads to its component page
        page.wait_for_selector("#executors", timeout=30_000)
        assert page.locator("#executors tr").count() == 1 + 2  # header and two executors
        assert page.locator("#component-errors").inner_text() == "none"
        inputs = page.locator("#input-stats tr")  # count's one input: split's default stream
        assert inputs.count() == 1 + 1
        component, stream, executed = inputs.nth(1).inner_text().split("\t")[:3]
        assert (component, stream) == ("split", "default") and int(executed) > 0
    finally:
        page.close()


def test_debug_and_log_levels_from_the_topology_page(cluster, browser):
    """Storm's Debug, Stop debug and Change log level buttons: each asks (a prompt), nimbus
    takes it, and the page shows the sampling and the logger's level, with a button that
    clears the level."""
    with cluster.client() as client:
        tid = topology_id(client, "words")
    answers = {"sampling percentage": "20", "logger=LEVEL": "squall.worker=DEBUG:300"}
    page = browser.new_page(viewport={"width": 1200, "height": 900})

    def answer(dialog):
        said = next((a for q, a in answers.items() if q in dialog.message), None)
        if said is None:
            dialog.dismiss()
        else:
            dialog.accept(said)

    page.on("dialog", answer)
    try:
        page.goto(cluster.ui_address + f"#/topology/{tid}")
        page.wait_for_selector("#debug-state", timeout=60_000)
        assert page.locator("#debug-state").inner_text() == "debug: off"
        page.click("#debug")
        wait_for(lambda: "sampling 20%" in page.locator("#debug-state").inner_text(), 30, "debug")
        with cluster.client() as client:
            assert client.getTopologyPageInfo(tid, ":all-time", False).debug_options.enable
        page.click("#stop-debug")
        wait_for(lambda: page.locator("#debug-state").inner_text() == "debug: off", 30, "off")

        page.click("#log-level")
        wait_for(lambda: "squall.worker" in page.locator("#log-levels").inner_text(), 30, "level")
        assert "DEBUG" in page.locator("#log-levels").inner_text()
        with cluster.client() as client:
            named = client.getLogConfig(tid).named_logger_level
        assert named["squall.worker"].reset_log_level_timeout_secs == 300
        page.click("#log-levels .clear-level")
        wait_for(
            lambda: "squall.worker" not in page.locator("#log-levels").inner_text(), 30, "clear"
        )
    finally:
        page.close()
