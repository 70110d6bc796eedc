"""The runner end to end on the noop workload: no Docker, a tmp store."""
from __future__ import annotations

import json
import sys
import threading
import types
from collections import defaultdict

import pytest

from ground.op import OK
from ground.workload import Workload
from ground.history_file import read_history
from harness.plan import prepare
from harness.runner import Runner
from harness.scenario import parse_scenario
from tests.harness import failing_fault
from tests.support import FakeCluster as SupportCluster
from tests.support import FakeNode
from workloads.noop import NoopClient, noop_workload

BASE = {"concurrency": 3, "rate": 0, "duration": 0.5, "recovery_wait": 0.1, "final_read_time_limit": 5,
        "op_timeout": 2, "seed": 9, "workloads": [{"name": "noop"}], "nemesis": {"faults": ["noop"], "interval": 0.1}}


def run(tmp_path, check=False, cluster=None, **changes):
    data = {**BASE, **changes}
    plan = prepare(parse_scenario(data, "t"), "t")
    runner = Runner(plan, tmp_path / "store", check=check, cluster=cluster, handle_signals=False)
    return runner, runner.run()


def pairs(history):
    """invoke -> completion by process, asserting each invoke completes exactly once."""
    open_ops, done = {}, []
    for op in history:
        if op["process"] == "nemesis":
            continue
        if op["type"] == "invoke":
            assert op["process"] not in open_ops, f"second invoke before completion: {op}"
            open_ops[op["process"]] = op
        else:
            done.append((open_ops.pop(op["process"]), op))
    assert not open_ops, f"invokes never completed: {open_ops}"
    return done


@pytest.fixture(autouse=True)
def stand_ins(registered):
    """The workloads and faults this module's tests name (defined below), registered for each
    test only: registered at import, they would stay for every later test of the session."""
    registered(workloads={"test-exploding": _workload("test-exploding", Exploding()),
                          "test-unopenable": _workload("test-unopenable", Unopenable()),
                          "test-cluster-echo": _workload("test-cluster-echo", ClusterEcho(), needs_cluster=True),
                          "test-setup": _setup_then_echo, "test-setup-fails": _setup_fails},
               faults={failing_fault.NAME: failing_fault.AlwaysFails, "test-leftover": LeftoverNemesis})


@pytest.fixture(scope="module")
def noop_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    _, result = run(tmp)
    return tmp, result, list(read_history(result.history))


def test_a_noop_run_boots_nothing_and_records_its_variant_as_none(noop_run):
    _, result, _ = noop_run
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["variant"] == {"name": None}
    assert run_json["seed"] == 9 and run_json["scenario"]["name"] == "t" and run_json["started"].endswith("Z")
    assert not (result.run_dir / "logs").exists()


def test_the_run_directory_is_store_scenario_timestamp_and_latest_points_at_it(noop_run):
    tmp, result, _ = noop_run
    assert result.run_dir.parent == tmp / "store" / "t"
    assert (tmp / "store" / "latest").resolve() == result.run_dir.resolve()
    assert json.loads((result.run_dir / "scenario.json").read_text())["seed"] == 9


def test_every_invoke_gets_exactly_one_completion_from_its_process(noop_run):
    _, result, history = noop_run
    done = pairs(history)
    assert done and all(c["type"] == OK and c["f"] == i["f"] for i, c in done)
    assert result.counts["ok"] == len(done) and result.exit_code == 4  # not checked: never 0


def test_faults_are_recorded_as_nemesis_info_ops(noop_run):
    nemesis = [op for op in noop_run[2] if op["process"] == "nemesis"]
    assert nemesis and all(op["type"] == "info" for op in nemesis)
    assert {op["f"] for op in nemesis} >= {"noop", "heal"}


def test_final_reads_come_after_the_final_heal(noop_run):
    history = noop_run[2]
    heal = max(op["index"] for op in history if op["f"] == "heal" and op["value"].get("all"))
    finals = [op for op in history if op["f"] == "final-read"]
    assert len(finals) == 4 and all(op["index"] > heal for op in finals)
    assert all(op["index"] < heal for op in history if op["f"] == "send")


def test_an_op_that_times_out_completes_as_info_and_retires_its_process(tmp_path):
    _, result = run(tmp_path, concurrency=2, rate=40, duration=1, op_timeout=0.2,
                    workloads=[{"name": "noop", "options": {"hang_every": 5, "hang_seconds": 1}}])
    done = pairs(read_history(result.history))
    timed_out = [c for _, c in done if c["type"] == "info"]
    assert timed_out and all(c["error"] == "timeout" for c in timed_out)
    used = defaultdict(list)
    for i, _ in done:
        used[i["process"] % 2].append(i["process"])
    went_on = 0
    for c in timed_out:
        assert not [i for i, _ in done if i["process"] == c["process"] and i["index"] > c["index"]]
        later = [p for p in used[c["process"] % 2] if p > c["process"]]
        if later:  # an op that timed out just before the end has no successor
            assert later[0] == c["process"] + 2  # the thread goes on as a fresh process
            went_on += 1
    assert went_on


class Exploding(NoopClient):
    def open(self, cluster, process):
        return Exploding(self.options)

    def invoke(self, op):
        raise ConnectionError("broker went away")


class Unopenable(NoopClient):
    def open(self, cluster, process):
        raise ConnectionRefusedError("no broker")


class ClusterEcho(NoopClient):
    def open(self, cluster, process):
        client = ClusterEcho(self.options)
        client.cluster = cluster
        return client

    def invoke(self, op):
        return {"type": OK, "value": self.cluster.run}


def _workload(name, client, needs_cluster=False):
    """A workload `name`'s factory: noop's generator, its ops done by `client`."""
    base = noop_workload({})
    return lambda options, variant: Workload(name, client, base.generator, None, needs_cluster)


def test_a_client_that_raises_completes_as_info_crash(tmp_path):
    _, result = run(tmp_path, workloads=[{"name": "test-exploding"}], duration=0.3)
    done = pairs(read_history(result.history))
    assert done and all(c["type"] == "info" and c["error"] == "crash" for _, c in done)
    assert "ConnectionError: broker went away" in done[0][1]["exception"]
    assert len({i["process"] for i, _ in done}) == len(done)  # every crash retired its process


def test_a_client_that_cannot_open_fails_its_op_without_retiring(tmp_path):
    _, result = run(tmp_path, workloads=[{"name": "test-unopenable"}], duration=0.3, concurrency=1)
    done = pairs(read_history(result.history))
    assert done and all(c["type"] == "fail" and c["error"] == "client-open" for _, c in done)
    assert {i["process"] for i, _ in done} == {0}


def test_the_runner_uses_a_cluster_it_is_given(tmp_path):
    _, result = run(tmp_path, workloads=[{"name": "test-cluster-echo"}], variant="fabric-recommended",
                    duration=0.3, cluster=SupportCluster([], run="given"), nemesis={})
    done = pairs(read_history(result.history))
    assert done and all(c["value"] == "given" for _, c in done)
    assert json.loads((result.run_dir / "run.json").read_text())["variant"]["name"] == "fabric-recommended"


SETUPS: list = []


class SetupCount(NoopClient):
    """Says how many setups had happened when each op ran."""

    def open(self, cluster, process):
        return SetupCount(self.options)

    def invoke(self, op):
        return {"type": OK, "value": len(SETUPS)}


def _setup_then_echo(options, variant):
    return Workload("test-setup", SetupCount(), noop_workload({}).generator, None, True, SETUPS.append)


def _setup_fails(options, variant):
    def fail(cluster):
        raise TimeoutError("topics have no leader")
    return Workload("test-setup-fails", ClusterEcho(), noop_workload({}).generator, None, True, fail)


def test_a_workloads_setup_readies_the_cluster_once_before_its_first_op(tmp_path):
    SETUPS.clear()
    _, result = run(tmp_path, workloads=[{"name": "test-setup"}], variant="fabric-recommended",
                    duration=0.3, cluster=SupportCluster([], run="given"), nemesis={})
    done = pairs(read_history(result.history))
    assert [c.run for c in SETUPS] == ["given"]
    assert done and all(c["value"] == 1 for _, c in done)


def test_a_failed_workload_setup_is_a_note_and_the_run_goes_on(tmp_path):
    _, result = run(tmp_path, workloads=[{"name": "test-setup-fails"}], variant="fabric-recommended",
                    duration=0.3, cluster=SupportCluster([], run="given"), nemesis={})
    assert pairs(read_history(result.history))
    assert any("test-setup-fails: setup failed (TimeoutError: topics have no leader)" in n for n in result.notes)


def test_stop_heals_flushes_and_reports_the_signal(tmp_path):
    plan = prepare(parse_scenario({**BASE, "duration": 60, "rate": 100}, "t"), "t")
    runner = Runner(plan, tmp_path / "store", check=False, handle_signals=False)
    threading.Timer(0.5, runner.stop, args=(15,)).start()
    result = runner.run()
    history = list(read_history(result.history))
    pairs(history)
    assert result.signal == 15 and result.exit_code == 143
    assert history[-1]["process"] == "nemesis" and history[-1]["f"] == "heal"


@pytest.fixture
def fake_plugins(monkeypatch):
    calls = {}
    check = types.ModuleType("checkers.check")
    report = types.ModuleType("reports.report")

    def check_run(path, out_dir=None, idempotent=None, remote=None, server_idle=0.0, note=None):
        """As the real one: the checker writes results.json, once (the runner never does)."""
        calls["check"] = (path, out_dir, idempotent)
        results = calls.get("verdict", {"valid": True, "anomalies": {}})
        (out_dir / "results.json").write_text(json.dumps(results))
        return results

    def write_report(run_dir):
        calls["report"] = run_dir
        (run_dir / "report.html").write_text("<html></html>")
        return run_dir / "report.html"

    check.check_run, report.write_report = check_run, write_report
    monkeypatch.setitem(sys.modules, "checkers.check", check)
    monkeypatch.setitem(sys.modules, "reports.report", report)
    return calls


def test_checkers_and_report_run_after_the_history_is_complete(tmp_path, fake_plugins):
    fake_plugins["verdict"] = {"valid": False, "anomalies": {"lost-write": {"count": 2}}}
    _, result = run(tmp_path, check=True)
    assert fake_plugins["check"][0] == result.history and fake_plugins["check"][1] == result.run_dir
    assert result.valid is False and result.exit_code == 1 and result.anomaly_summary() == "lost-write: 2"
    assert json.loads((result.run_dir / "results.json").read_text())["valid"] is False
    assert result.report == result.run_dir / "report.html"


def test_a_check_that_crashes_makes_the_run_unknown_exit_3_and_keeps_the_history(tmp_path, fake_plugins,
                                                                                   monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("spark fell over")

    monkeypatch.setattr(sys.modules["checkers.check"], "check_run", broken)
    _, result = run(tmp_path, check=True)
    assert result.check_error == "RuntimeError: spark fell over"
    assert result.valid is None and result.verdict == "unknown" and result.exit_code == 3
    assert json.loads((result.run_dir / "run.json").read_text())["check"] == {"error": "RuntimeError: spark fell over"}
    assert not (result.run_dir / "results.json").exists()
    pairs(read_history(result.history))


def test_a_run_told_not_to_check_exits_4_never_0(tmp_path):
    _, result = run(tmp_path, check=False)
    assert not result.checked and result.valid is None and result.exit_code == 4


def _outcomes(history):
    return [op.get("outcome") for op in history if op["process"] == "nemesis" and "outcome" in op]


def test_each_fault_request_records_its_outcome(noop_run):
    _, _, history = noop_run
    outcomes = _outcomes(history)
    assert outcomes and set(outcomes) <= {"took-effect", "undone"} and "took-effect" in outcomes


def test_a_fault_that_fails_or_finds_no_target_is_recorded_as_such(tmp_path):
    _, result = run(tmp_path, nemesis={"faults": ["always-fails"], "interval": 0.1})
    assert set(_outcomes(read_history(result.history))) == {"failed", "undone"}
    _, result = run(tmp_path, nemesis={"faults": ["always-fails"], "interval": 0.1,
                                       "options": {"always-fails": {"no_target": True}}})
    failed = [op for op in read_history(result.history) if op.get("outcome") == "no-target"]
    assert failed and failed[0]["error"] == "NoTarget: nothing to hit" and failed[0]["fault"] == "always-fails"


def test_two_runs_in_the_same_second_get_their_own_directories(tmp_path):
    _, first = run(tmp_path, duration=0.1)
    _, second = run(tmp_path, duration=0.1)
    assert first.run_dir != second.run_dir
    assert (tmp_path / "store" / "latest").resolve() == second.run_dir.resolve()


class LeftoverNemesis:
    """A fault an earlier, crashed run left active: heal_all has something to undo once."""

    needs_cluster = False

    def __init__(self, options):
        self.leftover = True

    def setup(self, cluster):
        pass

    def invoke(self, op):
        return {"f": "noop", "value": {}}

    def heal_all(self):
        if not self.leftover:
            return []
        self.leftover = False
        return [{"f": "start", "value": {"nodes": ["kafka2"]}}]


def test_faults_left_by_an_earlier_run_are_healed_before_the_first_op(tmp_path):
    _, result = run(tmp_path, duration=0.2, nemesis={"faults": ["test-leftover"], "interval": 10})
    first = next(read_history(result.history))
    assert first["process"] == "nemesis" and first["f"] == "start" and first["fault"] == "test-leftover"


class FakeCluster(SupportCluster):
    def __init__(self, variant, run="fake-1"):
        super().__init__([FakeNode("kafka1")], variant=variant, run=run)


@pytest.fixture
def docker_free(monkeypatch):
    """clusters.cluster.Cluster with attach/up replaced: what the runner asked for."""
    from clusters.cluster import Cluster

    seen = {"booted": []}

    def up(variant, *, run_label=None, keep=False, **kwargs):
        cluster = FakeCluster(variant, run="booted-1")
        seen["booted"].append((cluster, keep))
        return cluster

    monkeypatch.setattr(Cluster, "attach", classmethod(lambda cls, variant=None, **kw: seen.get("running")))
    monkeypatch.setattr(Cluster, "up", classmethod(lambda cls, variant, **kw: up(variant, **kw)))
    return seen


ECHO = {"workloads": [{"name": "test-cluster-echo"}], "variant": "fabric-recommended", "duration": 0.2, "nemesis": {}}


def test_a_booted_cluster_is_torn_down_with_its_logs_in_the_run_directory(tmp_path, docker_free):
    runner, result = run(tmp_path, **ECHO)
    (cluster, keep), = docker_free["booted"]
    assert cluster.downs == [result.run_dir / "logs"] and keep is False
    assert json.loads((result.run_dir / "run.json").read_text())["cluster"] == "booted-1"


def test_keep_cluster_leaves_the_booted_cluster_running(tmp_path, docker_free):
    plan = prepare(parse_scenario(ECHO, "t"), "t")
    result = Runner(plan, tmp_path / "store", check=False, keep_cluster=True, handle_signals=False).run()
    (cluster, keep), = docker_free["booted"]
    assert keep is True and cluster.downs == []
    assert (result.run_dir / "logs" / "kafka1.log").is_file()


def test_a_running_cluster_of_the_same_variant_is_reused_and_left_running(tmp_path, docker_free):
    from ground.variant import load_variant

    docker_free["running"] = running = FakeCluster(load_variant("fabric-recommended"), run="kept-1")
    _, result = run(tmp_path, **ECHO)
    assert docker_free["booted"] == [] and running.downs == []
    assert (result.run_dir / "logs" / "kafka1.log").is_file()


def test_a_noop_history_follows_format_1(noop_run):
    """So that `ordeal check` can check a run made without any cluster."""
    history = noop_run[2]
    for invoked, done in pairs(history):
        assert invoked["f"] in ("send", "final-read")
        if done["f"] == "send":
            assert set(done["value"]) == {"topic", "key", "value", "partition", "offset"}
        else:
            assert done["value"]["high_watermark"] == len(done["value"]["records"])
    sends = [c["value"] for i, c in pairs(history) if c["f"] == "send"]
    read = {(r["partition"], r["offset"]): r["value"] for i, c in pairs(history) if c["f"] == "final-read"
            for r in c["value"]["records"]}
    assert all(read[(s["partition"], s["offset"])] == s["value"] for s in sends)


def test_a_run_stopped_while_booting_has_no_history_and_latest_does_not_point_at_it(tmp_path, monkeypatch):
    from harness.runner import Interrupted

    earlier = run(tmp_path)[1]  # a complete run: latest points at it

    def interrupted(self):
        raise Interrupted(2)

    monkeypatch.setattr(Runner, "_acquire_cluster", interrupted)
    _, stopped = run(tmp_path)
    assert (stopped.signal, stopped.history.exists(), (tmp_path / "store" / "latest").resolve()) == (
        2, False, earlier.run_dir.resolve())


def test_a_running_cluster_of_the_same_name_but_another_definition_is_given_back_and_one_booted(tmp_path, docker_free):
    from ground.variant import load_variant

    other = load_variant("fabric-recommended").model_copy(update={"description": "edited since it was kept"})
    docker_free["running"] = running = FakeCluster(other, run="kept-1")
    released = []
    running.release = lambda: released.append(running.run)
    _, result = run(tmp_path, **ECHO)
    (booted, _), = docker_free["booted"]
    assert released == ["kept-1"] and running.downs == [] and booted.downs == [result.run_dir / "logs"]


def test_a_run_without_a_docker_engine_says_so_in_one_line(tmp_path, monkeypatch):
    from harness.runner import RunError

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/ordeal-test.sock")
    with pytest.raises(RunError) as caught:
        run(tmp_path, **ECHO)
    assert str(caught.value) == "cannot reach the Docker engine (DockerException); run `make bootstrap` first"


def test_a_slow_boot_keeps_reporting_its_status_until_the_cluster_is_up(tmp_path, monkeypatch):
    boots = []
    three = threading.Event()

    def on_status(status):
        if status.phase == "boot":
            boots.append(status)
            if len(boots) >= 3:
                three.set()

    def slow_boot(self):
        three.wait(10)  # a first boot building images: the heartbeat must speak meanwhile

    monkeypatch.setattr(Runner, "_acquire_cluster", slow_boot)
    plan = prepare(parse_scenario(BASE, "t"), "t")
    Runner(plan, tmp_path / "store", check=False, on_status=on_status, handle_signals=False).run()
    assert len(boots) >= 3


def test_client_crashes_end_info_and_their_process_is_never_used_again(tmp_path):
    _, result = run(tmp_path, duration=1.0, client_crash_interval=0.3)
    history = list(read_history(result.history))
    crashes = [op for op in history if op["f"] == "client-crash"]
    assert crashes and all(i["type"] == "invoke" and c["type"] == "info" and c["error"] == "crashed"
                           and c["process"] == i["process"] for i, c in zip(crashes[::2], crashes[1::2]))
    for done in crashes[1::2]:
        later = [op for op in history if op["index"] > done["index"] and op["process"] == done["process"]]
        assert later == [], later[:1]
    pairs(history)  # and every other invoke still completes exactly once


def test_a_scenario_without_client_crash_interval_crashes_no_client(tmp_path):
    _, result = run(tmp_path, duration=0.5)
    assert [op for op in read_history(result.history) if op["f"] == "client-crash"] == []


class HealingCluster(SupportCluster):
    """Whole again after `gaps_for` probes; what the runner asked is counted."""

    def __init__(self, gaps_for: int):
        super().__init__([])
        self.gaps_for, self.probes = gaps_for, 0

    def recovery_gaps(self):
        self.probes += 1
        return ["t0-1: ISR [4] of replicas [1, 2, 4]"] if self.probes <= self.gaps_for else []


def _recovered(result):
    ops = [op for op in read_history(result.history) if op["f"] == "recovered"]
    assert len(ops) == 1 and ops[0]["process"] == "nemesis"
    return ops[0]


def test_await_recovery_waits_for_a_whole_cluster_after_the_heal_and_records_it(tmp_path):
    cluster = HealingCluster(gaps_for=2)
    _, result = run(tmp_path, cluster=cluster, await_recovery=30)
    history = list(read_history(result.history))
    op = _recovered(result)
    heal = max(o["index"] for o in history if o["f"] == "heal" and o["value"].get("all"))
    first_final = min(o["index"] for o in history if o["f"] == "final-read")
    assert heal < op["index"] < first_final
    assert cluster.probes == 3 and op["value"]["gaps"] == [] and "error" not in op
    assert 1.5 < op["value"]["seconds"] < 10


def test_a_cluster_still_broken_at_the_limit_is_recorded_not_recovered_with_what_is_missing(tmp_path):
    _, result = run(tmp_path, cluster=HealingCluster(gaps_for=10**6), await_recovery=1.5)
    op = _recovered(result)
    assert op["error"] == "not-recovered" and op["value"]["gaps"] == ["t0-1: ISR [4] of replicas [1, 2, 4]"]
    assert 1.5 <= op["value"]["seconds"] < 5


def test_without_await_recovery_the_cluster_is_not_probed(tmp_path):
    cluster = HealingCluster(gaps_for=0)
    _, result = run(tmp_path, cluster=cluster)
    assert cluster.probes == 0 and not [op for op in read_history(result.history) if op["f"] == "recovered"]


class HaltedOsnCluster(SupportCluster):
    """Kafka whole from the first probe, osn2 never serving again (and, with `kafka_gap`,
    a partition never whole either)."""

    def __init__(self, kafka_gap: bool = False):
        super().__init__([])
        self.kafka_gap = kafka_gap

    def recovery_gaps(self):
        from ground.recovery import OSN_NOT_SERVING

        return (["t0-1: ISR [4] of replicas [1, 2, 4]"] if self.kafka_gap else []) + [f"osn2 {OSN_NOT_SERVING}"]


def test_an_osn_still_not_serving_while_kafka_is_whole_is_given_up_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.runner.OSN_GRACE", 1.0)
    _, result = run(tmp_path, cluster=HaltedOsnCluster(), await_recovery=30)
    op = _recovered(result)
    assert op["error"] == "not-recovered" and op["value"]["osns_given_up_after"] == 1.0
    assert 1.0 <= op["value"]["seconds"] < 5  # not the 30 s of the limit


def test_an_osn_not_serving_while_kafka_is_not_whole_is_waited_for_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.runner.OSN_GRACE", 0.5)
    _, result = run(tmp_path, cluster=HaltedOsnCluster(kafka_gap=True), await_recovery=2.0)
    op = _recovered(result)
    assert op["error"] == "not-recovered" and "osns_given_up_after" not in op["value"]
    assert op["value"]["seconds"] >= 2.0


def test_the_progress_line_names_the_wait_for_recovery(tmp_path):
    """While the runner waits for a whole cluster its status says so ("recovery"), not the
    heal phase whose faults are long undone."""
    seen: list[str] = []

    class Watched(HealingCluster):
        runner = None

        def recovery_gaps(self):
            seen.append(self.runner.status().phase)
            return super().recovery_gaps()

    cluster = Watched(gaps_for=1)
    data = {**BASE, "await_recovery": 30}
    runner = Runner(prepare(parse_scenario(data, "t"), "t"), tmp_path / "store", check=False, cluster=cluster,
                    handle_signals=False)
    cluster.runner = runner
    runner.run()
    assert seen and set(seen) == {"recovery"}
    assert runner.status().phase != "recovery"
