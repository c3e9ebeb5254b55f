"""Another user's topology as the attacker of issue 36: its bolt, in initialize, tries with the
conf it was given, and then with its worker's own ZooKeeper login (read from the worker's
conf file, as code in the worker's process can), to read and write another topology's nodes
and to register a supervisor. Each outcome goes into the JSON file named by `attack.report`:
"refused" (NoAuth), "done", or the error's name.

The victim's id and one of its heartbeat nodes come in the conf (`attack.victim`,
`attack.victim.beat`): the attacker could not list them itself."""

import json
import sys
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from squall import Bolt, Grouping, Spout, Topology

OFFSET = "consumers/alices-group/offsets/files/p0"  # below the root; the test makes it


def outcome(attempt):
    try:
        attempt()
    except NoAuthError:
        return "refused"
    except Exception as exc:  # noqa: BLE001 - the report names it
        return type(exc).__name__
    return "done"


def worker_conf_file() -> Path:
    """The --conf of this worker's command line."""
    argv = Path("/proc/self/cmdline").read_bytes().decode().split("\0")
    return Path(argv[argv.index("--conf") + 1])


def probes(zk, root, victim, beat, own):
    return {
        "read victim credentials": outcome(lambda: zk.get(f"{root}/credentials/{victim}")),
        "read victim usercredentials": outcome(lambda: zk.get(f"{root}/usercredentials/{victim}")),
        "list credentials": outcome(lambda: zk.get_children(f"{root}/credentials")),
        "create supervisor": outcome(
            lambda: zk.create(f"{root}/supervisors/fake", b"{}", ephemeral=True)
        ),
        "write victim beat": outcome(lambda: zk.set(f"{root}/taskbeats/{victim}/{beat}", b"{}")),
        "create victim beat": outcome(
            lambda: zk.create(f"{root}/taskbeats/{victim}/fake-1", b"{}")
        ),
        "create victim error": outcome(lambda: zk.create(f"{root}/errors/{victim}/forged", b"[]")),
        "write victim assignment": outcome(lambda: zk.set(f"{root}/assignments/{victim}", b"{}")),
        # alice's consumer group (its offsets): her topologies', not another user's
        "read victim consumer offsets": outcome(lambda: zk.get(f"{root}/{OFFSET}")),
        "write victim consumer offsets": outcome(lambda: zk.set(f"{root}/{OFFSET}", b"0")),
        # the control: its own topology's keys (so a refusal above is the ACL's, not a typo)
        "read own credentials": outcome(lambda: zk.get(f"{root}/credentials/{own}")),
    }


class Attacker(Bolt):
    def initialize(self, conf, context):
        root = conf["storm.zookeeper.root"]
        hosts = ",".join(
            f"{s}:{conf['storm.zookeeper.port']}" for s in conf["storm.zookeeper.servers"]
        )
        victim, beat, own = conf["attack.victim"], conf["attack.victim.beat"], context.topology_id
        given = [k for k, v in conf.items() if "zookeeper" in k and "payload" in k and v]
        report = {"zookeeper logins in the conf": given}
        # 1. whatever ZooKeeper login the conf it was given holds (before: the supervisor's)
        logins = [("digest", str(conf[k])) for k in given]
        report["with the conf"] = self.attack(hosts, logins, root, victim, beat, own)
        # 2. its worker's own logins, from the worker's conf file
        runtime = json.loads(worker_conf_file().read_text())
        logins = [("digest", str(v)) for k, v in runtime.items() if k.endswith(".payload") and v]
        report["worker logins"] = sorted(v.partition(":")[0] for _, v in logins)
        report["with the worker's logins"] = self.attack(hosts, logins, root, victim, beat, own)
        Path(conf["attack.report"]).write_text(json.dumps(report))
        print("attack report written", file=sys.stderr)

    def attack(self, hosts, logins, root, victim, beat, own):
        zk = KazooClient(hosts=hosts, auth_data=logins or None)
        zk.start(timeout=30)
        try:
            return probes(zk, root, victim, beat, own)
        finally:
            zk.stop()
            zk.close()

    def process(self, tup):
        pass


class Quiet(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class ZkAttacker(Topology):
    config = {"topology.workers": 1}
    quiet = Quiet.spec(par=1)
    attacker = Attacker.spec(inputs={quiet: Grouping.shuffle}, par=1)
