"""docs/operations.md's two-host walkthrough, run as the page writes it: its shell blocks,
conf files and units are read from the page (and from conf/systemd/, which it installs) and
run step by step on two hosts, each a network namespace and a mount namespace of its own
(tests/integration/two_hosts.py): host1 (10.0.0.1) runs ZooKeeper under the page's own
unit, nimbus, a supervisor and the UI; host2 (10.0.0.2) a supervisor. Credentials go to
each host as the page's table says, the first topology is submitted from host1's CLI, runs
one worker on each host, and its counts equal a plain count of its input.

What is not the page's word for word:
- Step 1 (install) is not run: /opt/squall is a link to this checkout's virtual environment
  on both hosts, to keep the run short; tests/integration/test_wheel.py builds and installs
  the wheel. Likewise the `apt-get install zookeeperd` line of step 3: the page's other way,
  its own unit, is the one followed.
- Everything runs as root, so `sudo -u U cmd` is run as `runuser -u U -- cmd` and `sudo cmd`
  as `cmd` (there is no sudo here).
- There is no systemd: `systemctl enable --now U` starts U's ExecStart as its User= and
  Group= (setpriv), in its WorkingDirectory, with a clean environment and its StateDirectory
  made (two_hosts.start_unit); `systemctl daemon-reload` does nothing; stop is SIGTERM.
  PrivateTmp, ProtectSystem and the other sandboxing keys are not applied.
- "after copying the tar file over" is a copy from host1's /tmp to host2's by the test.
- Each unit's environment also has JAVA_TOOL_OPTIONS=QUICK_JVM (C1 only, the serial GC), for
  its JVMs (ZooKeeper, each supervisor's Spark Connect server): on a shared 2-core host C2's
  compiler threads took most of their start-up.
"""

import dataclasses
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from . import two_hosts
from .test_first_topology import example_module

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "operations.md"
ADDRESSES = {"host1": "10.0.0.1", "host2": "10.0.0.2"}  # the page's, inside the namespaces
CREDENTIALS = "/var/lib/squall/credentials"
INSTALL_LINES = ("apt-get install", "python3 -m venv /opt/squall", "/opt/squall/bin/pip install")
INSTALLED = "/opt/squall/bin/squall version"  # step 1's check of the install: run as written
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture
def hosts(tmp_path):
    if refused := two_hosts.namespaces_refused(tmp_path):
        pytest.skip(f"the kernel refuses namespaces here: {refused}")
    made: list[two_hosts.Host] = []
    try:
        opened = two_hosts.closed_ancestors(Path(sys.executable))
        made = two_hosts.make_hosts(tmp_path, ADDRESSES, opened)
        yield {h.name: h for h in made}
    finally:
        for host in reversed(made):
            for name in reversed(list(host.processes)):
                two_hosts.stop_unit(host, name, 30)
            for journal in sorted(host.directory.glob("*.log")):
                print(f"--- {host.name} {journal.name} (last 40 lines)")
                print("\n".join(journal.read_text(errors="replace").splitlines()[-40:]))
        two_hosts.destroy_hosts(tmp_path, list(ADDRESSES))


class Walkthrough:
    """Runs the page's commands on the hosts, `systemctl` by two_hosts' unit runner."""

    def __init__(self, hosts: dict[str, two_hosts.Host]):
        self.hosts = hosts

    def run(self, host: str, script: str) -> str:
        """The script's lines on `host`, in the checkout (where the page's relative paths,
        conf/systemd/ and examples/, lie); its output."""
        output, pending = [], []
        for line in two_hosts.shell_lines(script):
            for command in (c.strip() for c in line.split("&&")):
                if command.startswith("systemctl "):
                    output.append(self._flush(host, pending))
                    self.systemctl(host, shlex.split(command)[1:])
                else:
                    pending.append(command)
        output.append(self._flush(host, pending))
        return "".join(output)

    def _flush(self, host: str, pending: list[str]) -> str:
        if not pending:
            return ""
        script = "\n".join(pending)
        pending.clear()
        return self.hosts[host].sh(script, ROOT).stdout

    def systemctl(self, host: str, args: list[str]) -> None:
        if args == ["daemon-reload"]:
            return
        assert args[:2] == ["enable", "--now"], args
        for name in args[2:]:
            text = self.hosts[host].sh(f"cat /etc/systemd/system/{name}.service", ROOT).stdout
            unit = two_hosts.parse_unit(name, text)
            quick = {**unit.environment, "JAVA_TOOL_OPTIONS": QUICK_JVM}  # see the docstring
            two_hosts.start_unit(self.hosts[host], dataclasses.replace(unit, environment=quick))

    def write(self, host: str, path: str, text: str, mode: str, owner: str) -> None:
        quoted = shlex.quote(text)
        self.hosts[host].sh(
            f"printf %s {quoted} > {path} && chmod {mode} {path} && chown {owner} {path}", ROOT
        )

    def alive(self) -> None:
        for host in self.hosts.values():
            for name, process in host.processes.items():
                code = process.poll()
                assert code is None, f"{name} on {host.name} exited {code}"


def credential_table(markdown: str) -> dict[str, dict[str, str]]:
    """Step 5's table: each file's cell per column (host1, host2, operator)."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0] != "`file`":
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows[name] = {"host1": cells[1], "host2": cells[2], "operator": cells[3]}
    return rows


def supervisor_rows(listing: str) -> dict[str, tuple[int, int]]:
    """`squall list`'s supervisor rows: host -> (slots, used slots)."""
    rows = {}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) in (5, 6) and fields[1] in ADDRESSES.values() and fields[2].isdecimal():
            rows[fields[1]] = (int(fields[2]), int(fields[3]))
    return rows


def test_the_two_host_walkthrough_runs_as_written(hosts):
    markdown = DOC.read_text(encoding="utf-8")
    found = two_hosts.sections(markdown)
    do = Walkthrough(hosts)

    # 1. Install: not run (see the docstring); /opt/squall is this checkout's environment
    [wheel, install] = two_hosts.step(found, 1)
    assert "pip wheel" in wheel.text
    checks = [line for line in two_hosts.shell_lines(install.text) if line.startswith(INSTALLED)]
    for line in two_hosts.shell_lines(install.text):
        assert line in checks or any(known in line for known in INSTALL_LINES), line
    for name in hosts:
        do.run(name, f"ln -s {ROOT / '.venv'} /opt/squall")
        for line in checks:
            assert "per-tuple path" in do.run(name, line)

    # 2. The squall user and its folders, on both hosts
    [folders] = two_hosts.step(found, 2)
    for name in hosts:
        do.run(name, folders.text)

    # 3. ZooKeeper on host1, the page's own single server under its own unit
    zookeeperd, zoo_cfg, unit, start = two_hosts.step(found, 3)
    assert "zookeeperd" in zookeeperd.text and unit.language == "ini"
    [unit_path] = re.findall(r"`(/etc/systemd/system/[\w-]+\.service)`", markdown)
    [cfg_path] = re.findall(r"Write `(/etc/[\w/-]+\.cfg)`", markdown)
    do.write("host1", cfg_path, zoo_cfg.text, "0644", "root:root")
    do.write("host1", unit_path, unit.text, "0644", "root:root")
    do.run("host1", start.text)
    # "`echo srvr | nc 10.0.0.1 2181` answers with ... `Mode: standalone` when it runs"
    [(word, address, port, answer)] = re.findall(
        r"`echo (\w+) \| nc\s+(\S+) (\d+)` answers with [^`]*`([^`]+)`", markdown
    )
    nc = f"import socket; s = socket.create_connection(('{address}', {port}), 5); "
    nc += f"s.sendall(b'{word}'); print(s.makefile().read())"  # nc, in Python
    two_hosts.wait_for(
        lambda: (
            do.alive()
            or answer in hosts["host1"].sh(f"python3 -c {shlex.quote(nc)}", ROOT, False).stdout
        ),
        60,
        f"ZooKeeper to answer {word} with {answer}",
    )

    # 4. The cluster conf: host1's as written, host2's "the same file without nimbus.host,
    # and with storm.local.hostname: 10.0.0.2"; mode 0640, owner root:squall
    [conf] = two_hosts.step(found, 4)
    host2_conf = "".join(
        line.replace("10.0.0.1", "10.0.0.2") if line.startswith("storm.local.hostname") else line
        for line in conf.text.splitlines(keepends=True)
        if not line.startswith("nimbus.host:")
    )
    for name, text in (("host1", conf.text), ("host2", host2_conf)):
        do.write(name, "/etc/squall/squall.yaml", text, "0640", "root:squall")

    # 5. Credentials: made on host1, then the tar file of host2's five files copied over
    init, copy = two_hosts.step(found, 5)
    printed = do.run("host1", init.text)
    assert CREDENTIALS in printed, printed
    parts = two_hosts.per_host(copy.text, list(hosts))
    do.run("host1", parts["host1"])
    [tar] = re.findall(r"/tmp/[\w-]+\.tar", parts["host1"])
    data = subprocess.run([*hosts["host1"].enter(), "cat", tar], capture_output=True, check=True)
    subprocess.run([*hosts["host2"].enter(), "sh", "-c", f"cat > {tar}"], input=data.stdout)
    do.run("host2", parts["host2"])
    table = credential_table(markdown)
    listed = {name: set(hosts[name].sh(f"ls {CREDENTIALS}", ROOT).stdout.split()) for name in hosts}
    assert listed["host1"] >= {f for f, cells in table.items() if "made here" in cells["host1"]}
    assert listed["host2"] == {f for f, cells in table.items() if cells["host2"] == "copy"}
    modes = hosts["host2"].sh(f"stat -c '%a %U %n' {CREDENTIALS} {CREDENTIALS}/*", ROOT).stdout
    for line in modes.splitlines():
        mode, owner, path = line.split()
        expected = (
            "700" if path == CREDENTIALS else "600" if path.endswith(("key", "secret")) else mode
        )
        assert (mode, owner) == (expected, "squall"), line

    # 6. The systemd units: host1 nimbus, supervisor, UI; host2 a supervisor
    units, listing = two_hosts.step(found, 6)[:2]
    for name, script in two_hosts.per_host(units.text, list(hosts)).items():
        do.run(name, script)

    def two_supervisors_free():
        do.alive()
        out = hosts["host1"].sh(two_hosts.as_root(listing.text.strip()), ROOT, False).stdout
        return supervisor_rows(out) == {a: (4, 0) for a in ADDRESSES.values()}

    # "The list should show two supervisors with four free slots each."
    two_hosts.wait_for(two_supervisors_free, 120, "two supervisors with 4 free slots each")

    # "... and its log (...) says `Spark Connect server ready`": wait for it on both hosts
    [ready] = re.findall(r"its log \([^)]*\)\s+says\s+`([^`]+)`", markdown)
    for host in hosts.values():
        journal = host.journal("squall-supervisor")
        two_hosts.wait_for(
            lambda j=journal: do.alive() or ready in j.read_text(errors="replace"),
            300,
            f"{host.name}'s supervisor to log {ready!r}",
        )

    # 7. The first topology, submitted from host1's checkout
    [first] = two_hosts.step(found, 7)
    submitted = do.run("host1", first.text)
    assert "first_topology" in submitted, submitted
    example = example_module()
    expected = example.plain_count((ROOT / "examples" / "first_topology.txt").read_text())
    output = "/var/lib/squall/output/first_topology"  # the page's "Where logs and output live"

    def counted():
        do.alive()
        outputs = [h.path(output) for h in hosts.values() if h.path(output).is_dir()]
        if not outputs:
            return False
        [out] = outputs  # one sink task: one host has its output
        totals = example.totals(out) if any(out.iterdir()) else {}
        assert all(totals[w] <= expected[w] for w in totals), totals  # never counted twice
        return totals == expected

    two_hosts.wait_for(counted, 300, "the sink's counts to equal a plain count")
    # "Its two workers run one on each supervisor": a worker log on each host, where the
    # page says a worker's log lies
    logs = "/var/lib/squall/supervisor/logs"
    for host in hosts.values():  # (a worker restarted elsewhere under load may add a log)
        workers = list(host.path(logs).glob("worker-first_topology-*-67[0-9][0-9].log"))
        assert workers, f"no worker log in {logs} on {host.name}"

    # the UI on host1's loopback, with its token, as "The web UI" says scripts reach it
    summary = "import json, urllib.request as u; r = u.Request('http://127.0.0.1:8080/api/v1"
    summary += "/cluster/summary', headers={'Authorization': 'Bearer ' + open("
    summary += f"'{CREDENTIALS}/ui.token').read().strip()}}); "
    summary += "print(json.load(u.urlopen(r, timeout=10))['supervisors'])"
    ui = hosts["host1"].sh(f"python3 -c {shlex.quote(summary)}", ROOT).stdout
    assert ui.strip() == "2", ui

    # "Remove the topology with `squall kill first_topology`", as step 7's commands run
    cli = two_hosts.as_root(first.text.strip().splitlines()[0]).rsplit(" submit ", 1)[0]
    do.run("host1", f"{cli} kill first_topology")
    # "A stop (SIGTERM) exits 0" (nimbus); the supervisors stop their workers and exit
    for name, unit_name in (("host2", "squall-supervisor"), ("host1", "squall-ui")):
        assert two_hosts.stop_unit(hosts[name], unit_name, 30) is not None
    assert two_hosts.stop_unit(hosts["host1"], "squall-supervisor", 30) is not None
    assert two_hosts.stop_unit(hosts["host1"], "squall-nimbus", 30) == 0
