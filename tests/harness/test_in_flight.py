"""Many ops open per client thread (issue 39): a client that starts ops asynchronously
(Client.invoke_async) gets up to `in_flight` of them open at once, each on a logical
process of its own, without breaking the history's invoke-before-completion rule.
The noop workload's asynchronous option answers from a timer thread, as a producer's
delivery report does; no cluster."""
from __future__ import annotations

import threading
import time

from ground.history_file import read_history
from harness.plan import prepare
from harness.runner import Runner
from harness.scenario import parse_scenario
from tests.harness.test_runner import BASE, pairs, run

ASYNC = [{"name": "noop", "options": {"asynchronous": True, "latency": 0.05}}]


def most_open(history, key=lambda op: 0):
    """The most client ops open at once (per key of the process)."""
    open_now: dict = {}
    peak: dict = {}
    for op in history:
        if op["process"] == "nemesis":
            continue
        k = key(op)
        open_now[k] = open_now.get(k, 0) + (1 if op["type"] == "invoke" else -1)
        peak[k] = max(peak.get(k, 0), open_now[k])
    return peak


def test_a_thread_keeps_up_to_in_flight_sends_open_each_under_its_own_process(tmp_path):
    _, result = run(tmp_path, concurrency=2, in_flight=8, workloads=ASYNC, duration=0.6)
    history = list(read_history(result.history))
    done = pairs(history)  # one open op per process, each invoke completed once
    assert done and all(c["type"] == "ok" for _, c in done)
    per_thread = most_open(history, key=lambda op: op["process"] % 2)
    assert per_thread == {0: 8, 1: 8}  # the bound is reached and never passed
    processes = {i["process"] for i, c in done if i["f"] == "send"}
    assert len(processes) >= 16  # lanes: 8 processes per thread, reused while their ops end ok


def test_one_in_flight_keeps_one_op_at_a_time_per_thread(tmp_path):
    _, result = run(tmp_path, concurrency=2, in_flight=1, workloads=ASYNC, duration=0.4)
    history = list(read_history(result.history))
    assert most_open(history) == {0: 2}
    assert {i["process"] for i, _ in pairs(history)} == {0, 1}


def test_a_send_never_answered_ends_info_at_its_timeout_and_retires_only_its_process(tmp_path):
    workloads = [{"name": "noop", "options": {"asynchronous": True, "latency": 0.02, "hang_every": 4}}]
    _, result = run(tmp_path, concurrency=1, in_flight=4, op_timeout=0.3, workloads=workloads, duration=0.8)
    done = pairs(read_history(result.history))
    lost = [c for _, c in done if c["type"] == "info"]
    assert lost and all(c["error"] == "timeout" for c in lost)
    assert {c["value"]["value"] % 4 for c in lost} == {3}  # the hanging ones, and only them
    for c in lost:  # its process is never used again; the thread's other lanes go on
        assert not [i for i, _ in done if i["process"] == c["process"] and i["index"] > c["index"]]
    assert sum(c["type"] == "ok" for _, c in done) > 3 * len(lost)


def test_sends_open_when_the_run_is_stopped_end_info_interrupted(tmp_path):
    workloads = [{"name": "noop", "options": {"asynchronous": True, "latency": 0.01, "hang_every": 3}}]
    plan = prepare(parse_scenario({**BASE, "concurrency": 1, "in_flight": 4, "op_timeout": 60, "duration": 30,
                                   "workloads": workloads}, "t"), "t")
    runner = Runner(plan, tmp_path / "store", check=False, handle_signals=False)

    def stop_after_a_hang() -> None:
        """Stop once ten ops are recorded, among them a hung send's invoke (every third hangs)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (runner.recorder is None or runner.recorder.count < 10):
            time.sleep(0.05)
        runner.stop(15)

    threading.Thread(target=stop_after_a_hang, daemon=True).start()
    result = runner.run()
    done = pairs(read_history(result.history))
    cut = [c for _, c in done if c["type"] == "info"]
    assert cut and all(c["error"] == "interrupted" and c["value"]["value"] % 3 == 2 for c in cut)


def test_final_reads_begin_after_every_asynchronous_send_completed(tmp_path):
    _, result = run(tmp_path, concurrency=2, in_flight=8, workloads=ASYNC, duration=0.4)
    history = list(read_history(result.history))
    last_send = max(op["index"] for op in history if op["f"] == "send")
    finals = [op["index"] for op in history if op["f"] == "final-read"]
    assert finals and min(finals) > last_send
    assert result.counts["ok"] == len(pairs(history))  # every asynchronous completion was counted
