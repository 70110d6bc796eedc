"""The crash watcher on fake nodes: an exit nothing meant is one crash op per down-time; a
stop the nemesis meant, a node already down at a reused cluster's start, and anything
after stop() are not."""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.crash_watch import CrashWatch
from tests.support import FakeCluster, until


@dataclass
class FakeNode:
    name: str
    role: str = "osn"
    expected_down: bool = False
    states: list[dict] = field(default_factory=list)  # what Docker answers, one per look; the last repeats
    looks: int = 0


def running() -> dict:
    return {"Status": "running", "ExitCode": 0, "OOMKilled": False, "FinishedAt": "0001-01-01T00:00:00Z"}


def exited(code: int = 2, at: str = "2024-01-01T00:00:01Z", oom: bool = False) -> dict:
    return {"Status": "exited", "ExitCode": code, "OOMKilled": oom, "FinishedAt": at}


def inspect(node: FakeNode) -> dict | None:
    node.looks += 1
    return node.states[min(node.looks, len(node.states)) - 1]


def tail(node: FakeNode, lines: int) -> list[str]:
    return [f"{node.name} line {i}" for i in range(40)][-lines:]


def watch(nodes: list[FakeNode], recorded: list, **kw) -> CrashWatch:
    return CrashWatch(lambda: nodes, recorded.append, inspect=inspect, tail=tail, **kw)


def test_an_unexpected_exit_is_one_crash_op_with_code_and_log_tail():
    node = FakeNode("osn1", states=[running(), exited(2)])
    recorded: list = []
    w = watch([node], recorded)
    assert w.poll() == [] and len(w.poll()) == 1
    assert w.poll() == [] and w.poll() == []  # still the same down-time
    (op,) = recorded
    assert (op["process"], op["type"], op["f"]) == ("nemesis", "info", "crash")
    assert op["value"] == {"node": "osn1", "role": "osn", "exit_code": 2, "oom_killed": False,
                           "log_tail": [f"osn1 line {i}" for i in range(10, 40)]}


def test_an_exit_the_nemesis_meant_is_not_reported():
    node = FakeNode("kafka2", role="kafka", expected_down=True, states=[running(), exited(137)])
    recorded: list = []
    w = watch([node], recorded)
    for _ in range(3):
        w.poll()
    assert recorded == []


def test_a_kill_landing_between_the_flag_and_the_state_is_not_reported():
    node = FakeNode("kafka2", role="kafka", states=[exited(137)])

    def killed_meanwhile(n: FakeNode) -> dict:
        n.expected_down = True  # the nemesis sets the flag before its SIGKILL...
        return inspect(n)  # ...and the watcher then sees the exit

    recorded: list = []
    CrashWatch(lambda: [node], recorded.append, inspect=killed_meanwhile, tail=tail).poll()
    assert recorded == []


def test_a_restarted_node_that_crashes_again_is_reported_again():
    node = FakeNode("zk1", role="zookeeper",
                    states=[exited(1, "T1"), exited(1, "T1"), running(), exited(3, "T2"), exited(3, "T2")])
    recorded: list = []
    w = watch([node], recorded)
    for _ in range(5):
        w.poll()
    assert [op["value"]["exit_code"] for op in recorded] == [1, 3]


def test_a_second_crash_between_two_looks_is_told_apart_by_its_finish_time():
    node = FakeNode("zk1", role="zookeeper", states=[exited(1, "T1"), exited(1, "T2")])
    recorded: list = []
    w = watch([node], recorded)
    w.poll(), w.poll()
    assert len(recorded) == 2


def test_an_oom_kill_is_reported_as_such():
    node = FakeNode("kafka1", role="kafka", states=[exited(137, oom=True)])
    recorded: list = []
    watch([node], recorded).poll()
    assert recorded[0]["value"]["oom_killed"] is True


def test_nodes_already_down_at_a_reused_clusters_start_are_not_reported():
    down, fine = FakeNode("zk3", states=[exited(143, "T0")]), FakeNode("osn1", states=[running(), exited(2)])
    recorded: list = []
    w = watch([down, fine], recorded, baseline=True, interval=3600)
    w.start()
    try:
        w.poll()
    finally:
        w.stop()
    assert [op["value"]["node"] for op in recorded] == ["osn1"]


def test_gone_and_uninspectable_nodes_are_skipped():
    class Broken(FakeNode):
        pass

    def flaky(n: FakeNode) -> dict | None:
        if n.name == "gone":
            return None  # docker.errors.NotFound: removed, not ours to report
        if n.name == "broken":
            raise TimeoutError("docker did not answer")
        return inspect(n)

    nodes = [FakeNode("gone"), Broken("broken"), FakeNode("osn2", states=[exited(2)])]
    recorded: list = []
    CrashWatch(lambda: nodes, recorded.append, inspect=flaky, tail=tail).poll()
    assert [op["value"]["node"] for op in recorded] == ["osn2"]


def test_a_removed_node_is_told_once_as_gone_and_is_no_crash():
    """A container removed under the run (None from Docker) ends the run's cluster: the
    runner hears it once, to stop the run; a node without a container ({}) is not gone."""
    nodes = [FakeNode("kafka1", states=[running()]), FakeNode("kafka2", states=[running(), {}, None])]
    recorded: list = []
    heard: list = []
    w = CrashWatch(lambda: nodes, recorded.append, inspect=inspect, tail=tail, on_gone=heard.append)
    for _ in range(4):
        w.poll()
    assert (heard, w.gone, recorded) == (["kafka2"], "kafka2", [])


def test_the_thread_reports_while_running_and_nothing_after_stop():
    node = FakeNode("osn1", states=[running()])
    recorded: list = []
    w = watch([node], recorded, interval=0.01).start()
    try:
        node.states.append(exited(2, "T1"))
        until(lambda: recorded, 5, step=0.01, what="the thread to record the crash")
    finally:
        w.stop()
    assert len(recorded) == 1
    node.states.append(exited(0, "T-teardown"))  # the teardown stops every node
    # stop() joins the thread (for up to STOP_WAIT): once it has ended, nothing can look again.
    until(lambda: not w._thread.is_alive(), 5, what="the watcher's thread to end")
    assert w.poll() == [] and len(recorded) == 1


# -- hooked into the runner ---------------------------------------------------------

@dataclass
class ClusterNode(FakeNode):
    def save_logs(self, directory):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{self.name}.log").write_text("log\n")


def test_the_runner_records_a_crash_between_its_first_op_and_teardown(tmp_path, monkeypatch):
    import harness.crash_watch as crash_watch
    import harness.runner
    from ground.history_file import read_history
    from tests.harness.test_runner import run

    watches: list[CrashWatch] = []

    class Kept(CrashWatch):
        def start(self) -> CrashWatch:
            watches.append(self)
            return super().start()

    monkeypatch.setattr(harness.runner, "CrashWatch", Kept)
    monkeypatch.setattr(crash_watch, "exit_state", inspect)
    monkeypatch.setattr(crash_watch, "log_tail", tail)
    monkeypatch.setattr(crash_watch, "INTERVAL", 0.02)
    crashing = ClusterNode("osn1", states=[running()] * 3 + [exited(2)])
    killed = ClusterNode("kafka2", role="kafka", expected_down=True, states=[running(), exited(137)])
    leftover = ClusterNode("zk3", role="zookeeper", states=[exited(143, "T0")])  # down before the run
    _, result = run(tmp_path, cluster=FakeCluster([crashing, killed, leftover]), duration=0.5)
    history = list(read_history(result.history))
    crashes = [op for op in history if op["f"] == "crash"]
    assert [(op["process"], op["type"], op["value"]["node"], "fault" in op) for op in crashes] == [
        ("nemesis", "info", "osn1", False)]
    assert crashes[0]["index"] < history[-1]["index"]
    assert result.notes == ["node osn1 (osn) crashed: exit code 2"]
    (watch,) = watches  # stopped with the run: its thread ends, and with it the looks
    until(lambda: not watch._thread.is_alive(), 5, what="the run's crash watch thread to end")


class LiveNode:
    """A node whose Docker state the test sets; `start` is the node verb (clears the flag)."""

    def __init__(self, name, role="osn"):
        self.name, self.role, self.expected_down = name, role, False
        self.status, self.finished, self.exits = "running", "0001-01-01T00:00:00Z", 0

    def crash(self):
        self.exits += 1
        self.status, self.finished = "exited", f"T{self.exits}"

    def start(self):
        self.status = "running"
        self.expected_down = False

    def save_logs(self, directory):
        pass


def live_state(node: LiveNode) -> dict:
    return {"Status": node.status, "ExitCode": 2, "OOMKilled": False, "FinishedAt": node.finished}


class CrashThenHeal:
    """A fault under which osn1 crashes once by itself; like kill-osn, heal_all starts every
    node that is down, the crashed one included."""

    needs_cluster = False
    node: LiveNode

    def __init__(self, options):
        pass

    def setup(self, cluster):
        self.cluster = cluster

    def invoke(self, op):
        node = self.cluster.nodes[0]
        if op["f"] == "start" and node.exits == 0:
            node.crash()
        return {"f": "noop", "value": {}}

    def heal_all(self):
        down = [n for n in self.cluster.nodes if n.status == "exited"]
        for n in down:
            n.start()
        return [{"f": "start", "value": {"nodes": [n.name for n in down]}}] if down else []


def test_a_crash_is_recorded_before_the_heal_that_restarts_the_node(tmp_path, monkeypatch, registered):
    """With no look of the thread in between (a long interval), the runner's own looks before
    each fault and heal still record the crash before the start that hides it."""
    import harness.crash_watch as crash_watch
    from ground.history_file import read_history
    from tests.harness.test_runner import run

    monkeypatch.setattr(crash_watch, "exit_state", live_state)
    monkeypatch.setattr(crash_watch, "log_tail", tail)
    monkeypatch.setattr(crash_watch, "INTERVAL", 3600)
    registered(faults={"test-crash-then-heal": CrashThenHeal})
    node = LiveNode("osn1")
    _, result = run(tmp_path, cluster=FakeCluster([node]), duration=0.5,
                    nemesis={"faults": ["test-crash-then-heal"], "interval": 0.1})
    history = list(read_history(result.history))
    crashes = [op["index"] for op in history if op["f"] == "crash"]
    starts = [op["index"] for op in history if op["f"] == "start" and op["value"].get("nodes") == ["osn1"]]
    assert node.exits == 1 and len(crashes) == 1 and starts and crashes[0] < starts[0]
