"""Two "hosts" on one machine for tests/integration/test_two_hosts.py, and the reading of
docs/operations.md's steps.

A host is a network namespace (its own interfaces: a veth pair joins the two, nothing else)
plus a mount namespace whose /etc, /var/lib and /opt are overlays of the machine's (writes
land in the test's folder, never in the real ones) and whose /tmp is a tmpfs (unless the
checkout lives under /tmp). So the doc's
commands run word for word, with its own paths and addresses: `useradd`, /etc/squall,
/var/lib/squall and 10.0.0.1 exist only inside. The namespaces are kept by bind files
(`ip netns` for the network, `unshare --mount=FILE` for the mounts) and entered with
`nsenter`; every process in them is ours, and is ended by PID when the host is torn down.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

OVERLAID = ("/etc", "/var/lib", "/opt")
NETNS_PREFIX = "squall-test-"  # a host's network namespace: this and its name
UNIT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # systemd's


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    """A root command in the machine's namespaces; failing loudly with its output."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {result.returncode}:\n{result.stderr}")
    return result


def namespaces_refused(probe_dir: Path) -> str | None:
    """Why this kernel (or container) refuses what a host needs, or None when it allows it."""
    name = f"squall-probe-{os.getpid()}"
    try:
        run(["ip", "netns", "add", name])
    except (RuntimeError, FileNotFoundError) as e:
        return f"cannot create a network namespace: {e}"
    try:
        run(["ip", "netns", "exec", name, "unshare", "--mount", "true"])
    except RuntimeError as e:
        return f"cannot create a mount namespace: {e}"
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return None


@dataclass
class Host:
    """One host: `name` is also its network namespace's name."""

    name: str
    address: str
    directory: Path  # the overlays' upper folders, its daemons' logs ("the journal")
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def netns(self) -> str:
        return NETNS_PREFIX + self.name

    @property
    def mount_file(self) -> Path:
        return self.directory.parent / "mounts" / self.name

    def enter(self) -> list[str]:
        return ["nsenter", f"--net=/run/netns/{self.netns}", f"--mount={self.mount_file}"]

    def sh(self, script: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
        """`script` by `sh -e` as root on this host, in `cwd` (a folder both the machine
        and the host see, such as the checkout)."""
        argv = [*self.enter(), "env", "-C", str(cwd), "sh", "-ec", script]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if check and result.returncode != 0:
            raise RuntimeError(
                f"on {self.name}, `{script}` exited {result.returncode}:\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result

    def path(self, inside: str) -> Path:
        """Where a file the host wrote under one of the overlaid folders lies on the machine
        (its overlay's upper folder); only for reading."""
        for root in OVERLAID:
            if inside.startswith(root + "/"):
                return self.upper(root) / inside[len(root) + 1 :]
        raise ValueError(f"{inside} is under none of {OVERLAID}")

    def upper(self, root: str) -> Path:
        return self.directory / root.strip("/").replace("/", "-") / "upper"

    def journal(self, unit: str) -> Path:
        return self.directory / f"{unit}.log"


def closed_ancestors(path: Path) -> list[str]:
    """The folders above `path` that other users may not pass through (this machine's
    Python may live under /root): a host opens them (0711) for its `squall` user to run it."""
    return [str(p) for p in path.resolve().parents if not p.stat().st_mode & 0o001]


def _under_tmp() -> bool:
    """Whether this checkout or its Python lives under /tmp (a CI clone may): the hosts then
    share the machine's /tmp instead of a tmpfs of their own."""
    tmp = Path("/tmp").resolve()
    used = (Path(__file__).resolve().parents[2], Path(sys.prefix).resolve())
    return any(tmp == p or tmp in p.parents for p in used)


def make_hosts(directory: Path, addresses: dict[str, str], opened: list[str]) -> list[Host]:
    """The hosts, their namespaces and the veth pair between them; `opened`: folders that
    are overlaid as 0711 in them (closed_ancestors). The caller tears them down with
    `destroy_hosts` whatever happens (also when this fails half way)."""
    mounts = directory / "mounts"
    mounts.mkdir()
    run(["mount", "--bind", str(mounts), str(mounts)])
    run(["mount", "--make-private", str(mounts)])
    hosts = []
    for name, address in addresses.items():
        host = Host(name, address, directory / name)
        hosts.append(host)
        host.directory.mkdir()
        host.mount_file.touch()
        if host.netns in netns_names():  # left by a run that was killed: end it first
            destroy_hosts(directory, [name])
        run(["ip", "netns", "add", host.netns])
        run(["ip", "-n", host.netns, "link", "set", "lo", "up"])
        run(["unshare", f"--mount={host.mount_file}", "--propagation", "private", "true"])
        for root in (*OVERLAID, *opened):
            upper, work = host.upper(root), host.upper(root).parent / "work"
            upper.mkdir(parents=True)
            work.mkdir()
            upper.chmod(0o711 if root in opened else Path(root).stat().st_mode & 0o7777)
            options = f"lowerdir={root},upperdir={upper},workdir={work}"
            run([*host.enter(), "mount", "-t", "overlay", "overlay", "-o", options, root])
        if not _under_tmp():  # a tmpfs there would hide the checkout and its venv
            run([*host.enter(), "mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/tmp"])
    first, second = hosts
    run(["ip", "link", "add", "sq-veth1", "netns", first.netns, "type", "veth"]
        + ["peer", "name", "sq-veth2", "netns", second.netns])  # fmt: skip
    for host, link in ((first, "sq-veth1"), (second, "sq-veth2")):
        run(["ip", "-n", host.netns, "addr", "add", f"{host.address}/24", "dev", link])
        run(["ip", "-n", host.netns, "link", "set", link, "up"])
    return hosts


def destroy_hosts(directory: Path, names: list[str]) -> None:
    """End every process left in the hosts' network namespaces (all started by the test)
    by PID, then remove the namespaces and the mount bind files. Safe on a half-made set."""
    for name in names:
        netns = NETNS_PREFIX + name
        for pid in netns_pids(netns):
            _signal(pid, signal.SIGKILL)
        wait_for(lambda n=netns: not netns_pids(n), 30, f"the processes in {netns} to end")
        mount_file = directory / "mounts" / name
        if mount_file.exists():
            subprocess.run(["umount", str(mount_file)], capture_output=True)
        subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
    mounts = directory / "mounts"
    if mounts.exists():
        subprocess.run(["umount", str(mounts)], capture_output=True)


def netns_names() -> set[str]:
    result = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in result.stdout.splitlines() if line.strip()}


def netns_pids(name: str) -> list[int]:
    result = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    return [int(p) for p in result.stdout.split()]


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> object:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.2)


# --- docs/operations.md ------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    language: str
    text: str


def sections(markdown: str) -> dict[str, list[Block]]:
    """Each `## ` heading's fenced blocks, in order, keyed by the heading's text."""
    found: dict[str, list[Block]] = {}
    current = None
    for match in re.finditer(r"^## ([^\n]+)$|^```(\w*)\n(.*?)^```$", markdown, re.M | re.S):
        if match.group(1) is not None:
            current = found.setdefault(match.group(1).strip(), [])
        elif current is not None:
            current.append(Block(match.group(2), match.group(3)))
    return found


def step(found: dict[str, list[Block]], number: int) -> list[Block]:
    [blocks] = [b for heading, b in found.items() if heading.startswith(f"{number}. ")]
    return blocks


def per_host(script: str, hosts: list[str]) -> dict[str, str]:
    """A block split at its `# on hostN` comment lines (a trailing `# hostN` comment marks a
    single line); lines before any marker are for every host."""
    parts: dict[str, list[str]] = {h: [] for h in hosts}
    current = list(hosts)
    for line in script.splitlines():
        marker = re.match(r"\s*# on (host\d)\b", line)
        if marker:
            current = [marker.group(1)]
            continue
        trailing = re.search(r"#\s*(host\d)\s*$", line)
        for host in [trailing.group(1)] if trailing else current:
            parts[host].append(line)
    return {h: "\n".join(lines) + "\n" for h, lines in parts.items() if "".join(lines).strip()}


def as_root(line: str) -> str:
    """A doc line with `sudo` as the test runs it: already root, and with no sudo installed
    here, `sudo -u U cmd` is `runuser -u U -- cmd`, `sudo cmd` is `cmd`."""
    line = re.sub(r"\bsudo -u (\S+) ", r"runuser -u \1 -- ", line)
    return re.sub(r"\bsudo ", "", line)


def shell_lines(script: str) -> Iterator[str]:
    """The block's commands (comments and blank lines dropped), `sudo` made root's."""
    for line in script.splitlines():
        command = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
        if command:
            yield as_root(command)


# --- systemd units, without systemd ------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    name: str
    user: str
    group: str | None
    exec_start: list[str]
    working_directory: str | None
    environment: dict[str, str]
    state_directory: str | None
    timeout_stop: float


def parse_unit(name: str, text: str) -> Unit:
    """The [Service] keys a unit here needs started as systemd would start it."""
    service: dict[str, list[str]] = {}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "Service":
            key, _, value = line.partition("=")
            service.setdefault(key.strip(), []).append(value.strip())
    environment: dict[str, str] = {}
    for value in service.get("Environment", []):
        for item in shlex.split(value):
            key, _, val = item.partition("=")
            environment[key] = val
    [exec_start] = service["ExecStart"]
    return Unit(
        name=name,
        user=service.get("User", ["root"])[-1],
        group=service.get("Group", [None])[-1],
        exec_start=shlex.split(exec_start),
        working_directory=service.get("WorkingDirectory", [None])[-1],
        environment=environment,
        state_directory=service.get("StateDirectory", [None])[-1],
        timeout_stop=float(service.get("TimeoutStopSec", ["90"])[-1]),
    )


def start_unit(host: Host, unit: Unit) -> subprocess.Popen:
    """Start `unit` on `host` as systemd would: StateDirectory made and given to its user,
    a clean environment (PATH, HOME, USER, LOGNAME and its Environment=), its User= and
    Group= by setpriv, in its WorkingDirectory; its output to the host's journal file.
    nsenter, setpriv and env each exec the next, so the PID is the daemon's."""
    if unit.state_directory:
        state = f"/var/lib/{unit.state_directory}"
        owner = f"{unit.user}:{unit.group or unit.user}"
        host.sh(f"install -d -m 0755 {state} && chown {owner} {state}", Path("/"))
    home = host.sh(f"getent passwd {unit.user} | cut -d: -f6", Path("/")).stdout.strip()
    env = {"PATH": UNIT_PATH, "HOME": home, "USER": unit.user, "LOGNAME": unit.user}
    env.update(unit.environment)
    group = ["--regid", unit.group] if unit.group else []
    argv = [*host.enter(), "setpriv", "--reuid", unit.user, *group, "--init-groups"]
    argv += ["env", "-i", "-C", unit.working_directory or "/"]
    argv += [*(f"{k}={v}" for k, v in env.items()), *unit.exec_start]
    journal = host.journal(unit.name).open("ab")
    process = subprocess.Popen(argv, stdout=journal, stderr=subprocess.STDOUT)
    journal.close()
    host.processes[unit.name] = process
    return process


def stop_unit(host: Host, name: str, timeout: float) -> int | None:
    """SIGTERM, as `systemctl stop`; its exit status, or None when it outlived `timeout`
    and was killed (the caller's teardown ends what is left in the namespace)."""
    process = host.processes.pop(name)
    _signal(process.pid, signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None
