"""The pure half of tests/integration/two_hosts.py: how docs/operations.md's blocks are split
per host, how `sudo` is run as root, and how a unit's [Service] keys are read. A mistake here
would make the walkthrough test run something other than what the page writes."""

from tests.integration.two_hosts import Block, as_root, parse_unit, per_host, sections, step

PAGE = """# Title

## 1. Install (both hosts)

```sh
pip wheel .
```

## 2. Other

```ini
[Service]
User=squall
```
"""


def test_sections_keep_each_headings_blocks_in_order_with_their_language():
    found = sections(PAGE)
    assert step(found, 1) == [Block("sh", "pip wheel .\n")]
    assert step(found, 2) == [Block("ini", "[Service]\nUser=squall\n")]


def test_a_block_splits_at_on_host_comments_and_trailing_host_marks():
    script = "a\n# on host1: make it\nb\n# on host2, after copying\nc\nd   # host1\n"
    assert per_host(script, ["host1", "host2"]) == {
        "host1": "a\nb\nd   # host1\n",
        "host2": "a\nc\n",
    }


def test_sudo_runs_as_root_and_sudo_u_as_that_user():
    assert as_root("sudo -u squall /opt/x list") == "runuser -u squall -- /opt/x list"
    assert as_root("sudo tar -cf t.tar a") == "tar -cf t.tar a"


def test_a_units_service_keys_are_read_as_systemd_would():
    text = (
        "[Unit]\nDescription=x\n[Service]\nUser=squall\nGroup=squall\n"
        "ExecStart=/opt/squall/bin/squall --config '/etc/a b.yaml' nimbus\n"
        'Environment="A=1 2" B=3\nWorkingDirectory=/var/lib/squall\nStateDirectory=squall\n'
        "TimeoutStopSec=30\n[Install]\nUser=ignored\n"
    )
    unit = parse_unit("n", text)
    assert unit.user == "squall" and unit.group == "squall"
    assert unit.exec_start == ["/opt/squall/bin/squall", "--config", "/etc/a b.yaml", "nimbus"]
    assert unit.environment == {"A": "1 2", "B": "3"}
    assert (unit.working_directory, unit.state_directory) == ("/var/lib/squall", "squall")
    assert unit.timeout_stop == 30
