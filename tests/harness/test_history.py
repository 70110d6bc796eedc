"""The recorder under many threads, its flushing, and the streaming reader."""
from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from ground.history_file import HistoryError, read_history
from ground.op import completion, invoke
from harness.history import Recorder


def record_from_threads(path, threads=16, ops_per_thread=2000, **recorder_options):
    """The history file, and every op as `record` returned it."""
    returned: list[dict] = []
    with Recorder(path, **recorder_options) as rec:
        gate = threading.Barrier(threads)

        def worker(t):
            mine = []
            gate.wait()
            for n in range(ops_per_thread):
                op = rec.record(invoke(t, "send", {"n": n}))
                mine += [op, rec.record(completion(op, {"type": "ok", "value": {"n": n}}))]
            returned.extend(mine)

        pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    return list(read_history(path)), returned


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return record_from_threads(tmp_path_factory.mktemp("h") / "history.jsonl")


@pytest.fixture(scope="module")
def many(recorded):
    return recorded[0]


def test_many_threads_lose_nothing(many):
    assert len(many) == 16 * 2000 * 2


def test_indices_are_strictly_increasing_from_zero(many):
    assert [op["index"] for op in many] == list(range(len(many)))


def test_times_never_go_backwards(many):
    times = [op["time"] for op in many]
    assert all(isinstance(t, int) for t in times) and times == sorted(times)


def test_every_invoke_is_completed_exactly_once_by_its_process(many):
    open_ops: dict[int, dict] = {}
    completed = Counter()
    for op in many:
        if op["type"] == "invoke":
            assert op["process"] not in open_ops
            open_ops[op["process"]] = op
        else:
            invoked = open_ops.pop(op["process"])
            assert op["f"] == invoked["f"] and op["value"] == invoked["value"]
            completed[(op["process"], op["value"]["n"])] += 1
    assert not open_ops and set(completed.values()) == {1} and len(completed) == 16 * 2000


def test_each_op_record_returned_is_the_line_with_its_index(recorded):
    ops, returned = recorded
    assert sorted(returned, key=lambda op: op["index"]) == ops


def test_a_busy_writer_keeps_indices_and_times_in_order(tmp_path):
    # The flusher writes every millisecond while 8 threads record: it often meets an index
    # whose thread has not stored its line yet, and must wait for it rather than skip it.
    ops, _ = record_from_threads(tmp_path / "h.jsonl", threads=8, ops_per_thread=3000, flush_interval=0.001)
    assert [op["index"] for op in ops] == list(range(8 * 3000 * 2))
    assert all(a["time"] <= b["time"] for a, b in zip(ops, ops[1:]))


def test_record_returns_the_op_with_its_index_and_time(tmp_path):
    with Recorder(tmp_path / "h.jsonl") as rec:
        op = rec.record(invoke(0, "poll", {"consumer": "c1"}))
    assert op["index"] == 0 and op["time"] >= 0
    assert list(read_history(tmp_path / "h.jsonl")) == [op]


def test_a_nemesis_op_reaches_the_file_at_once(tmp_path):
    rec = Recorder(tmp_path / "h.jsonl", flush_interval=3600)
    try:
        rec.record(invoke(0, "send", 1))
        rec.record({"process": "nemesis", "type": "info", "f": "kill", "value": {"nodes": ["kafka1"]}})
        assert [op["index"] for op in read_history(tmp_path / "h.jsonl")] == [0, 1]
    finally:
        rec.close()


def test_a_nemesis_op_reaches_the_file_at_once_while_workers_record(tmp_path):
    path = tmp_path / "h.jsonl"
    rec = Recorder(path, flush_interval=3600)
    stop = threading.Event()

    def worker(t):
        n = 0
        while not stop.is_set():
            op = rec.record(invoke(t, "send", n))
            rec.record(completion(op, {"type": "ok", "value": n}))
            n += 1

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    snapshots = []
    try:
        for th in pool:
            th.start()
        for _ in range(3):
            time.sleep(0.02)
            fault = rec.record({"process": "nemesis", "type": "info", "f": "kill", "value": {"nodes": ["kafka1"]}})
            snapshots.append((fault, path.read_bytes()))
    finally:
        stop.set()
        for th in pool:
            th.join()
        rec.close()
    for fault, raw in snapshots:
        assert raw.endswith(b"\n") and json.dumps(fault, separators=(",", ":")).encode() in raw


class FlusherClock(threading.Event):
    """The Recorder's `_closed` event, whose timed waits (the flusher's, between flushes)
    return only when the test ticks; `intervals` are the timeouts the flusher waited with."""

    made: list["FlusherClock"] = []

    def __init__(self) -> None:
        super().__init__()
        self.intervals: list[float | None] = []
        self._ticks = threading.Semaphore(0)
        FlusherClock.made.append(self)

    def wait(self, timeout: float | None = None) -> bool:
        self.intervals.append(timeout)
        while not self._ticks.acquire(timeout=0.01):
            if self.is_set():
                return True
        return self.is_set()

    def tick(self) -> None:
        """One flush interval passes; returns once the flusher has written and waits again."""
        waits = len(self.intervals)
        self._ticks.release()
        deadline = time.monotonic() + 10
        while len(self.intervals) == waits:
            assert time.monotonic() < deadline, "the flusher did not come back to wait within 10 s"
            time.sleep(0.001)


def test_client_ops_reach_the_file_at_the_flushers_next_tick_and_ticks_are_at_most_200_ms_apart(
        tmp_path, monkeypatch):
    """The contract of harness/history.py: lines reach the OS at least every 200 ms. Here the
    flusher's clock is in the test's hands: a client op stays in memory until the flusher's
    wait ends (nothing else writes it), every op recorded before then is in the file after it,
    and the flusher never waits longer than 200 ms for the next flush."""
    import harness.history as history

    class Threading:  # harness.history's threading module, with the flusher's clock swapped
        Event = FlusherClock

        def __getattr__(self, name):
            return getattr(threading, name)

    FlusherClock.made.clear()
    monkeypatch.setattr(history, "threading", Threading())
    path = tmp_path / "h.jsonl"
    rec = Recorder(path)  # the default interval
    try:
        clock, = FlusherClock.made
        flushed = b""
        for batch in ([0, 1], [2], [3, 4, 5]):
            for n in batch:
                rec.record(invoke(n, "send", n))
            assert path.read_bytes() == flushed, "a client op reached the file before the flusher's tick"
            clock.tick()
            flushed = path.read_bytes()
            assert [op["index"] for op in read_history(path)] == list(range(batch[-1] + 1))
        assert clock.intervals and all(i is not None and 0 < i <= 0.2 for i in clock.intervals), clock.intervals
    finally:
        rec.close()


def test_client_ops_reach_the_file_by_the_background_flusher(tmp_path):
    rec = Recorder(tmp_path / "h.jsonl")
    try:
        rec.record(invoke(0, "send", 1))
        deadline = time.monotonic() + 10  # generous: the flusher may be starved on a busy machine
        while not (tmp_path / "h.jsonl").read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(list(read_history(tmp_path / "h.jsonl"))) == 1
    finally:
        rec.close()


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({"index": 0}) + "\n" + json.dumps({"index": 1}) + "\n" + '{"index": 2, "ti')
    with caplog.at_level(logging.WARNING, logger="ordeal.history"):
        ops = list(read_history(path))
    assert [op["index"] for op in ops] == [0, 1]
    assert "torn last line" in caplog.text


def test_a_corrupt_line_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"index": 0}\n{"ind\n{"index": 2}\n')
    with pytest.raises(HistoryError, match=":2:"):
        list(read_history(path))


def test_the_reader_streams_ops_written_after_it_started(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"index": 0}\n')
    ops = read_history(path)
    assert next(ops) == {"index": 0}
    with open(path, "a") as fh:
        fh.write('{"index": 1}\n')
    assert next(ops) == {"index": 1}


def test_a_value_json_cannot_hold_is_recorded_as_its_repr(tmp_path):
    class Odd:
        def __repr__(self):
            return "<odd>"

    with Recorder(tmp_path / "h.jsonl") as rec:
        rec.record(invoke(0, "send", {"value": Odd()}))
    assert next(read_history(tmp_path / "h.jsonl"))["value"] == {"value": "<odd>"}


def test_a_value_that_contains_itself_is_recorded_as_its_repr(tmp_path):
    loop: dict = {}
    loop["self"] = loop
    with Recorder(tmp_path / "h.jsonl") as rec:
        rec.record(invoke(0, "send", loop))
        rec.record(invoke(1, "send", 2))
    first, second = read_history(tmp_path / "h.jsonl")
    assert first["value"] == "{'self': {...}}" and second["value"] == 2


def test_an_op_that_cannot_be_written_does_not_hold_back_the_ones_after_it(tmp_path):
    class Unprintable:
        def __repr__(self):
            raise RuntimeError("no repr")

    rec = Recorder(tmp_path / "h.jsonl", flush_interval=3600)
    try:
        rec.record(invoke(0, "send", 1))
        with pytest.raises(RuntimeError, match="no repr"):
            rec.record(invoke(1, "send", {"v": Unprintable()}))
        rec.record({"process": "nemesis", "type": "info", "f": "kill", "value": {}})
        assert [op["index"] for op in read_history(tmp_path / "h.jsonl")] == [0, 2]
    finally:
        rec.close()


TORN_CASES = {  # name: (lines, whether the torn-line rule refuses the file)
    "clean": (['{"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "value": {"topic": "t", "value": 1}}'],
              False),
    "torn last line": (['{"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "value": {"topic": "t", "value": 1}}',
                        '{"index": 1, "ti'], False),
    "corrupt middle line": (['{"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "value": {"topic": "t", "value": 1}}',
                             '{"ind',
                             '{"index": 2, "time": 2, "process": 0, "type": "invoke", "f": "send", "value": {"topic": "t", "value": 2}}'],
                            True),
}


@pytest.mark.parametrize("case", sorted(TORN_CASES))
def test_the_checkers_fast_reader_follows_the_one_torn_line_rule(tmp_path, case):
    """checkers/ingest reads histories its own way, for speed; it must refuse and accept the
    same files as ground/history_file.py."""
    from checkers.ingest.history import read_lines

    lines, refused = TORN_CASES[case]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")

    def outcome(read) -> bool:
        try:
            read()
        except HistoryError:
            return True
        return False

    assert outcome(lambda: list(read_history(path))) is refused
    assert outcome(lambda: read_lines(path, lambda tables: None)) is refused


KILLED_AFTER_A_FAULT_OP = """
import os, signal, sys, threading, time
from harness.history import Recorder

rec = Recorder(sys.argv[1], flush_interval=3600)  # no background flush: only the nemesis op's own
index, _ = next(rec._stamps)  # a client op numbered, then its thread loses the GIL for 1.5 s

def store_late():
    time.sleep(1.5)
    rec._lines[index] = b'{"process": 0, "type": "invoke", "f": "send", "value": 1, "index": 0, "time": 0}\\n'

threading.Thread(target=store_late).start()
rec.record({"process": "nemesis", "type": "info", "f": "start", "value": {"fault": "kill-broker"}})
os.kill(os.getpid(), signal.SIGKILL)  # the harness dies the moment the fault op is recorded
"""


def test_a_fault_op_is_on_disk_when_the_harness_is_killed_right_after_recording_it(tmp_path):
    """The flush of a nemesis op used to give up after 1 s waiting for an earlier op's line,
    leaving the fault op in memory; a SIGKILL then lost it."""
    path = tmp_path / "h.jsonl"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", KILLED_AFTER_A_FAULT_OP, str(path)], cwd=root, timeout=60)
    assert done.returncode == -signal.SIGKILL
    ops = list(read_history(path))
    assert [(op["process"], op["f"]) for op in ops] == [(0, "send"), ("nemesis", "start")]
