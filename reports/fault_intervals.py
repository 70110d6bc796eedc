"""Fault intervals from nemesis ops, for shading plots and drawing cuts.

A fault opens at kill / pause / partition / link-fault / config / disk-loss and closes at the
matching start / resume / heal (or at the next heal); shapes not recognised still
open and close, they just carry no nodes or cuts. A node's crash (harness.crash_watch:
no fault stopped it) opens like a kill and closes at that node's start; it is shown
with the faults but not counted as one injected.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Callable

from ground.fault_outcome import FAILED, NO_TARGET, OUTCOME, UNDO_FAILED

# Outcomes of requests that did nothing known (checkers.faults): they open and close nothing.
NOTHING_DONE = (FAILED, NO_TARGET, UNDO_FAILED)
OPENERS = {"kill": "start", "pause": "resume", "partition": "heal", "link-fault": "heal", "config": "heal",
           "crash": "start", "disk-loss": "heal"}
CRASH = "crash"
# A heal ends every network and configuration fault still open (docs/history-format.md, "Nemesis ops").
HEALED_BY_ANY_HEAL = {"partition", "link-fault", "config"}


@dataclass
class FaultInterval:
    """One fault, from the op that caused it to the op that undid it (end None: never undone)."""

    kind: str
    start: int
    end: int | None
    nodes: list[str]
    cut: list[tuple[str, str]]
    components: list[list[str]]
    index: int
    detail: dict[str, Any] = field(default_factory=dict)
    fault: str | None = None

    @property
    def label(self) -> str:
        """A short description for plot bands and tables: kind, then what it hit."""
        who = ",".join(self.nodes[:4]) + ("…" if len(self.nodes) > 4 else "")
        d = self.detail
        if self.kind == "partition":
            topology = f"{d['topology']}: " if isinstance(d.get("topology"), str) else ""
            if self.components:
                who = topology + " | ".join(",".join(c) for c in self.components[:3])
            elif self.cut:
                who = f"{topology}{len(self.cut)} links cut"
        elif self.kind == "config" and "key" in d:
            setting = d.get("set", d.get("value"))
            who = f"{d['key']}={json.dumps(setting) if not isinstance(setting, str) else setting}"
        elif self.kind == "link-fault" and isinstance(d.get("toxic"), str):
            who = f"{d['toxic']} {who}"
        elif self.kind == "disk-loss" and isinstance(d.get("wiped"), dict):
            kib = sum(w.get("kib", 0) for w in d["wiped"].values() if isinstance(w, dict) and isinstance(w.get("kib"), int))
            who = f"{who} ({kib} KiB wiped)"
        elif self.kind == CRASH and isinstance(d.get("exit_code"), int) and not isinstance(d["exit_code"], bool):
            who = f"{who} (exit {d['exit_code']})"
        return f"{self.kind} {who}".strip()

    def cut_edges(self) -> set[frozenset[str]]:
        """Links this fault removes: explicit cuts, plus every pair split across components."""
        edges = {frozenset(e) for e in self.cut if len(set(e)) == 2}
        if self.components:
            # As Jepsen's complete grudge: only nodes named in some component are cut off,
            # each from every node of the other components.
            side = {n: i for i, comp in enumerate(self.components) for n in comp}
            for a, b in combinations(sorted(side), 2):
                if side[a] != side[b]:
                    edges.add(frozenset((a, b)))
        return edges


def _names(x: Any) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, (list, tuple)):
        return [str(n) for n in x if isinstance(n, (str, int))]
    if isinstance(x, dict):
        return [str(k) for k in x]
    return []


def describe(op: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]], list[list[str]]]:
    """Nodes, cut links and components named by one nemesis op, tolerating unknown shapes."""
    value = op.get("value")
    nodes: list[str] = []
    cut: list[tuple[str, str]] = []
    components: list[list[str]] = []
    if isinstance(value, dict):
        nodes = _names(value.get("nodes")) or _names(value.get("node")) or _names(value.get("targets"))
        for link in value.get("cut") or []:
            if isinstance(link, (list, tuple)) and len(link) == 2:
                cut.append((str(link[0]), str(link[1])))
        for comp in value.get("components") or []:
            names = _names(comp)
            if names:
                components.append(names)
    elif isinstance(value, (list, str)):
        nodes = _names(value)
    if not nodes and isinstance(op.get("node"), str):
        nodes = [op["node"]]
    if not nodes:
        nodes = sorted({n for link in cut for n in link} | {n for c in components for n in c})
    return nodes, cut, components


class FaultTracker:
    """Fed nemesis ops in history order; collects fault intervals, closed or still open.

    nemesis/ names the fault instance in value["fault"]: a heal or start/resume of that
    fault closes its own intervals; a heal with {"all": true} (the end of a run) closes
    every one; ops without a name fall back to the kind and node rules above.
    """

    def __init__(self) -> None:
        self.intervals: list[FaultInterval] = []
        self._open: list[FaultInterval] = []
        self.nodes_seen: set[str] = set()

    @property
    def injected(self) -> list[FaultInterval]:
        """The intervals the nemesis caused: all but the nodes' own crashes."""
        return [iv for iv in self.intervals if iv.kind != CRASH]

    def feed(self, op: dict[str, Any]) -> None:
        if op.get("type") == "invoke":
            return  # the info completion carries what was done
        if op.get(OUTCOME) in NOTHING_DONE:
            return  # a request that failed or found no target: it opened and closed nothing known
        f = str(op.get("f"))
        raw = op.get("time")
        t = int(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw == raw else 0
        value = op.get("value") if isinstance(op.get("value"), dict) else {}
        fault = value.get("fault") or op.get("fault")
        fault = str(fault) if isinstance(fault, (str, int)) else None
        nodes, cut, components = describe(op)
        self.nodes_seen.update(nodes)
        if f in OPENERS:
            if f == "config":
                self._close(lambda o: o.kind == "config" and o.fault == fault, t)
            iv = FaultInterval(kind=f, start=t, end=None, nodes=nodes, cut=cut, components=components,
                               index=int(op.get("index", -1)) if isinstance(op.get("index"), int) else -1,
                               detail=value, fault=fault)
            self._open.append(iv)
            self.intervals.append(iv)
        elif f in ("start", "resume"):
            openers = ("kill", CRASH) if f == "start" else ("pause",)

            def undone(o: FaultInterval) -> bool:
                if o.kind not in openers:
                    return False
                if nodes and o.nodes:
                    return bool(set(o.nodes) & set(nodes))
                return fault is None or o.fault == fault

            self._close(undone, t)
        elif f == "heal":
            if value.get("all") is True:
                self._close(lambda o: True, t)
            elif fault is not None and any(o.fault == fault for o in self._open):
                self._close(lambda o: o.fault == fault, t)
            else:
                self._close(lambda o: o.kind in HEALED_BY_ANY_HEAL or bool(set(o.nodes) & set(nodes)), t)

    def _close(self, match: Callable[[FaultInterval], bool], t: int) -> None:
        still = []
        for iv in self._open:
            if match(iv):
                iv.end = t
            else:
                still.append(iv)
        self._open = still
