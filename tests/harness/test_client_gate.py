"""A fault holds the run's clients (ground/client_gate.py): no client op starts while held,
the open ones are waited for first, and the run goes on once released."""
from __future__ import annotations

import threading
import time

from ground.client_gate import ClientGate
from ground.history_file import read_history
from tests.harness.test_runner import run


def test_hold_waits_for_the_open_ops_to_end_and_answers_none_left() -> None:
    cond = threading.Condition()
    open_ops = [2]

    def end_them() -> None:
        for _ in range(2):
            time.sleep(0.05)
            with cond:
                open_ops[0] -= 1
                cond.notify_all()

    ender = threading.Thread(target=end_them)
    ender.start()
    gate = ClientGate(cond, lambda: open_ops[0])
    assert gate.hold(drain_timeout=5) == 0 and gate.held
    ender.join()
    gate.release()
    assert not gate.held


def test_hold_gives_up_at_its_timeout_and_says_how_many_are_still_open() -> None:
    gate = ClientGate(threading.Condition(), lambda: 3)
    assert gate.hold(drain_timeout=0.2) == 3


class HoldingNemesis:
    """Holds the clients for a moment at each start, and records when it held and released."""

    needs_cluster = False

    def __init__(self, options):
        self.gate = None
        self.record = None

    def bind_recorder(self, record):
        self.record = record

    def bind_client_gate(self, gate):
        self.gate = gate

    def setup(self, cluster):
        pass

    def invoke(self, op):
        if op["f"] != "start":
            return {"f": "heal", "value": {}}
        left = self.gate.hold(drain_timeout=2)
        self.record({"f": "held", "value": {"still_open": left}})
        time.sleep(0.3)
        self.record({"f": "released", "value": {}})
        self.gate.release()
        return {"f": "hold", "value": {}}

    def heal_all(self):
        return []


def test_no_client_op_is_invoked_while_a_fault_holds_the_clients_and_none_is_open(tmp_path, registered) -> None:
    registered(faults={"test-holding": HoldingNemesis})
    _, result = run(tmp_path, duration=1.5, rate=200, nemesis={"faults": ["test-holding"], "interval": 0.4})
    history = list(read_history(result.history))
    held = [i for i, op in enumerate(history) if op.get("f") == "held"]
    released = [i for i, op in enumerate(history) if op.get("f") == "released"]
    assert held and len(held) == len(released)
    for start, end in zip(held, released):
        assert history[start]["value"]["still_open"] == 0
        inside = [op for op in history[start:end] if op["process"] != "nemesis"]
        assert inside == [], inside[:3]
    # and the clients went on after each release
    after = [op for op in history[released[0]:] if op["process"] != "nemesis" and op["type"] == "invoke"]
    assert after
