"""report.html for one run: the verdict first, then the evidence behind it.

Built from results.json, run.json and history.jsonl only; whatever is missing is said
on the page instead of failing the report.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.run_files import REPORT_HTML
from reports import history_digest
from reports.osn_evidence import sentence, stalled_causes, unavailable_causes
from reports.history_digest import HistoryDigest, TimelineOp, context_of, digest_history, focus_of, short
from reports.junit import write_junit
from reports.page import render
from reports.plots import height_chart, latency_chart, throughput_chart
from reports.run_files import Anomaly, RunFiles, load_run
from reports.topology import MAX_PANELS, cluster_nodes, topology_chart

EXAMPLES_SHOWN = 10
FORK_ROWS = 100

# Headline tiles: the questions a reader brings, and which anomalies answer each. Not
# int-poll-skip nor int-nonmonotonic-poll: they are the rows of poll-skip and
# nonmonotonic-poll that fall inside one txn (checkers.txn.int_poll_orders), already counted.
QUESTIONS = (
    ("lost", ("lost-write", "lost-tx")),
    ("reordered / diverged", ("realtime-order", "nonmonotonic-poll", "nonmonotonic-send", "poll-skip",
                              "inconsistent-offsets", "aborted-read", "int-nonmonotonic-send", "group-rewind",
                              "group-skip")),
    ("torn / precommitted txns", ("torn-txn", "precommitted-read")),
    ("forked chain", ("block-fork", "broken-chain")),
    ("duplicated", ("duplicate", "duplicate-tx")),
)


@dataclass
class Tile:
    """One headline question ("lost?") with its count; fails says whether that count fails the verdict."""

    name: str
    count: int | None
    fails: bool


@dataclass
class AnomalySection:
    """One anomaly type as its section shows it: bounded examples and evidence."""

    anomaly: Anomaly
    role: str  # "fails", "allowed", "informational", "unknown"
    columns: list[str]
    examples: list[dict[str, Any]]
    evidence: list[int]
    views: list[tuple[str, str]] = field(default_factory=list)  # (label, anchor) of views showing it


@dataclass
class EvidenceRow:
    """One op named as evidence, anchored as op-<index> whether or not the timeline shows it."""

    index: int
    op: dict[str, Any] | None
    pair: int | None
    value: str
    in_timeline: bool
    anomalies: list[str]


@dataclass
class TimelineRow:
    """A timeline op, its process column, and which op-<index> anchors it owns."""

    op: TimelineOp
    lane: int
    anchor_invoke: bool
    anchor_completion: bool


@dataclass
class OffsetTable:
    """What each reader saw at each offset of interest of one partition."""

    topic: str
    partition: int
    readers: list[str]
    rows: list[dict[str, Any]]
    focus_total: int

    @property
    def anchor(self) -> str:
        return offsets_anchor(self.topic, self.partition)


def offsets_anchor(topic: str, partition: int) -> str:
    return f"offsets-{topic}-{partition}"


@dataclass
class ReportContext:
    """Everything the report template shows; built once, rendered once."""

    files: RunFiles
    digest: HistoryDigest
    verdict: str
    headline: str
    key_settings: list[str]
    tiles: list[Tile]
    sections: list[AnomalySection]
    settings: list[tuple[str, list[tuple[str, str]]]]
    charts: dict[str, str | None]
    topology_faults: int
    evidence: list[EvidenceRow]
    timeline: list[TimelineRow]
    lanes: list[str]
    in_timeline: set[int]
    shown_evidence: set[int]
    offset_tables: list[OffsetTable]
    forks: list[tuple[str, int, dict[str, str]]]
    fork_osns: list[str]
    caps: dict[str, int] = field(default_factory=dict)


def _flatten(d: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v if isinstance(v, str) else json.dumps(v)))
    return out


def _settings(files: RunFiles) -> list[tuple[str, list[tuple[str, str]]]]:
    groups = []
    if files.scenario:
        groups.append(("scenario", _flatten(files.scenario)))
    variant = files.variant
    if variant:
        groups.append(("variant", _flatten({k: v for k, v in variant.items() if k != "expect"})))
        if isinstance(variant.get("expect"), dict) and variant["expect"]:
            groups.append(("variant expects", _flatten(variant["expect"])))
    run = [(k, json.dumps(files.run[k]) if not isinstance(files.run[k], str) else files.run[k])
           for k in ("seed", "started") if k in files.run]
    if run:
        groups.append(("run", run))
    return groups


# The settings that decide durability and ordering, as variant files spell them.
KEY_SETTINGS = ("acks", "enable_idempotence", "replication_factor", "min_insync_replicas",
                "unclean_leader_election_enable")


def _key_settings(files: RunFiles) -> list[str]:
    """Cluster shape and the durability settings, for the banner line."""
    out = []
    size = files.cluster_size
    if size:
        out.append(" ".join(f"{n} {k}" for k, n in size.items()))
    found = {}
    for group in ("producer", "kafka"):
        section = files.variant.get(group)
        if isinstance(section, dict):
            for k, v in section.items():
                found.setdefault(str(k).replace(".", "_"), (k, v))
    for key in KEY_SETTINGS:
        if key in found:
            k, v = found[key]
            out.append(f"{k}={v if isinstance(v, str) else json.dumps(v)}")
    orderer = _orderer(files)
    if orderer:
        out.append(f"orderer: {orderer}")
    client = files.run.get("client")  # the Kafka client the workloads drove (issue 40)
    if isinstance(client, dict) and client.get("implementation"):
        binding = [f"confluent-kafka {client['confluent_kafka']}"] if client.get("confluent_kafka") else []
        binding += ["its own process"] if client.get("process") == "own" else []
        out.append(f"client: {client['implementation']} {client.get('version', '')}".rstrip()
                   + (f" ({', '.join(binding)})" if binding else ""))
    return out


def _orderer(files: RunFiles) -> str | None:
    """Which ordering service ran: what run.json recorded from the cluster, else what the
    variant asked for (older runs); None without OSNs."""
    ran = files.run.get("orderer")
    if isinstance(ran, dict) and ran.get("implementation"):
        return str(ran["implementation"])
    cluster, orderer = files.variant.get("cluster"), files.variant.get("orderer")
    if isinstance(cluster, dict) and cluster.get("osns") and isinstance(orderer, dict):
        return str(orderer.get("implementation", "model"))
    return None


CRASHES_NAMED = 5


def _crashes(files: RunFiles) -> str:
    """A sentence naming the nodes that crashed by themselves (node-crash), or ""."""
    found = [a for a in files.anomalies if a.name == "node-crash"]
    if not found:
        return ""
    crash = found[0]
    named = []
    for ex in crash.examples[:CRASHES_NAMED]:
        details = [f"exit code {ex['exit_code']}"] if isinstance(ex.get("exit_code"), int) else []
        if ex.get("oom_killed") is True:
            details.append("OOM-killed")
        named.append(f"{ex.get('node', '?')}" + (f" ({', '.join(details)})" if details else ""))
    more = crash.count - len(named)
    who = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    if crash.count == 1:
        return f"A node crashed while no fault had stopped it: {who}."
    return f"{crash.count} node crashes while no fault had stopped them: {who}."


def _stalled(files: RunFiles) -> str:
    """A sentence on the first OSN that stopped for good and why (stalled-osn), or ""."""
    found = [a for a in files.anomalies if a.name == "stalled-osn" and a.examples]
    if not found:
        return ""
    first = stalled_causes(files.path, found[0].examples[:1])[0]
    more = found[0].count - 1
    return sentence(first) + (f" ({more} more OSN and channel pairs stopped too.)" if more > 0 else "")


def _headline(verdict: str, tiles: list[Tile], files: RunFiles) -> str:
    if not files.results:
        return "Not checked: results.json is missing, so no verdict was reached."
    stalled = _stalled(files)
    if stalled and verdict != "valid":
        return stalled + " " + _verdict_line(verdict, tiles, files)
    return _verdict_line(verdict, tiles, files)


def _verdict_line(verdict: str, tiles: list[Tile], files: RunFiles) -> str:
    bad = [f"{t.name} ({t.count})" for t in tiles if t.count and t.fails]
    allowed = [f"{t.name} ({t.count})" for t in tiles if t.count and not t.fails]
    tail = f"; allowed by this configuration: {', '.join(allowed)}" if allowed else ""
    crashes = _crashes(files)
    if verdict == "valid" and files.faults_missed:
        return f"No lost, reordered or forked data, but {files.faults_missed}: this run proves nothing about its faults."
    if verdict == "valid":
        return ("No lost, reordered or forked data under these faults" + tail + ".") if not bad else (
            "Valid, though the checkers reported: " + ", ".join(bad) + tail + ".")
    if verdict == "invalid":
        if crashes:
            return crashes + (" Data went wrong too: " + ", ".join(bad) + tail + "." if bad else
                              (" Allowed by this configuration: " + ", ".join(allowed) + "." if allowed else ""))
        return ("Data went wrong under these faults: " + ", ".join(bad) + tail + ".") if bad else (
            "The checkers judged this run invalid" + tail + ".")
    return "Undecided: " + files.checked.unknown_reason() + tail + "."


# Example fields shown as blocks of text under the examples table, not as a column.
TEXT_FIELDS = ("log_tail", "problems", "history")


def _sections(files: RunFiles) -> list[AnomalySection]:
    out = []
    for a in files.anomalies:
        examples = a.examples[:EXAMPLES_SHOWN]
        if a.name == "stalled-osn":  # with what explains it: its start offset, the partition's, its errors
            examples = stalled_causes(files.path, examples)
        elif a.name == "unavailable-partition":  # with its leader and ISR history from the brokers' logs
            examples = unavailable_causes(files.path, examples)
        columns: list[str] = []
        for ex in examples:
            columns += [k for k in ex if k not in columns and k not in TEXT_FIELDS]
        out.append(AnomalySection(a, files.effect(a), columns, examples, a.evidence[: history_digest.EVIDENCE_SHOWN]))
    return out


def _link_views(sections: list[AnomalySection], tables: list[OffsetTable], forks: bool, heights: bool) -> None:
    """Point each anomaly section at the views that show its evidence."""
    shown = {(t.topic, t.partition) for t in tables}
    for s in sections:
        for topic, partition in sorted(focus_of(s.anomaly.examples)):
            if (topic, partition) in shown:
                s.views.append((f"offsets of {topic}/{partition}", offsets_anchor(topic, partition)))
        if s.anomaly.name in ("block-fork", "broken-chain") and forks:
            s.views.append(("fork view", "forks"))
        if s.anomaly.name in ("lagging-osn", "lost-tx", "block-fork") and heights:
            s.views.append(("OSN block heights", "osn"))


def _timeline(d: HistoryDigest, owned: set[int]) -> tuple[list[TimelineRow], list[str]]:
    """Rows in history order; one column per process (nemesis first), extra processes share the last."""
    order: list[str] = []
    for op in d.timeline:
        if op.process not in order:
            order.append(op.process)
    order.sort(key=lambda p: p != "nemesis")
    lanes = order[: history_digest.TIMELINE_LANES]
    if len(order) > history_digest.TIMELINE_LANES:
        lanes[-1] = "others"
    lane_of = {p: min(i, len(lanes) - 1) for i, p in enumerate(order)}
    rows = [
        TimelineRow(op, lane_of[op.process], op.invoke not in owned,
                    op.completion is not None and op.completion not in owned)
        for op in d.timeline
    ]
    return rows, lanes


def _offset_tables(d: HistoryDigest) -> list[OffsetTable]:
    tables = []
    for (topic, partition), view in d.offset_views.items():
        readers = sorted(view.readers, key=lambda r: (r != "acked send", r == "final read", r))
        rows = []
        for o in view.offsets():
            seen = view.rows.get(o, {})
            distinct = {v for cell in seen.values() for v in cell}
            acked = set(seen.get("acked send", {}))
            final = set(seen.get("final read", {}))
            missing = bool(acked) and "final read" in view.readers and not acked <= final
            rows.append({
                "offset": o,
                "focus": o in view.focus,
                "conflict": len(distinct) > 1,
                "missing": missing,
                "cells": {r: [(v, i) for v, i in seen.get(r, {}).items()] for r in readers},
            })
        tables.append(OffsetTable(topic, partition, readers, rows, len(view.focus)))
    return tables


def _forks(d: HistoryDigest, anomalies: list[Anomaly]) -> list[tuple[str, int, dict[str, str]]]:
    """Forks seen in the delivered blocks, plus those block-fork examples name that the digest
    did not see (it stops tracking blocks past its cap)."""
    found = {(ch, n): hashes for ch, n, hashes in d.forks}
    for a in anomalies:
        if a.name != "block-fork":
            continue
        for ex in a.examples:
            held = ex.get("held")
            number = ex.get("number")
            if not isinstance(held, list) or not isinstance(number, int):
                continue
            hashes = {str(h.get("osn")): str(h.get("hash"))[:16] for h in held if isinstance(h, dict)}
            found.setdefault((str(ex.get("channel", "?")), number), hashes)
    return [(ch, n, hashes) for (ch, n), hashes in sorted(found.items())]


def build_context(run_dir: Path) -> ReportContext:
    files = load_run(run_dir)
    anomalies = files.anomalies
    sections = _sections(files)
    shown_evidence = {i for s in sections for i in s.evidence}
    d = digest_history(files.history, shown_evidence, focus_of([e for a in anomalies for e in a.examples]),
                       context_of([s.evidence for s in sections]))
    counts = {a.name: a.count for a in anomalies}
    failing = {s.anomaly.name for s in sections if s.role == "fails"}
    # Without results.json nothing was checked: the tiles say "–", not a reassuring 0.
    tiles = [
        Tile(name, sum(counts.get(n, 0) for n in names) if files.results else None, bool(failing & set(names)))
        for name, names in QUESTIONS
    ]
    verdict = files.verdict
    in_timeline = {op.invoke for op in d.timeline} | {op.completion for op in d.timeline if op.completion is not None}
    evidence = [
        EvidenceRow(i, d.evidence_ops.get(i), d.evidence_pairs.get(i),
                    short(d.evidence_ops[i].get("value"), 240) if i in d.evidence_ops else "", i in in_timeline,
                    [s.anomaly.name for s in sections if i in s.evidence])
        for i in sorted(shown_evidence)
    ]
    timeline, lanes = _timeline(d, shown_evidence)
    nodes = cluster_nodes(d.nodes_seen, files.cluster_size)
    topo, topo_faults = topology_chart(nodes, d.faults.intervals)
    forks = _forks(d, anomalies)
    offset_tables = _offset_tables(d)
    charts = {
        "latency": latency_chart(d),
        "throughput": throughput_chart(d),
        "heights": height_chart(d),
        "topology": topo,
    }
    _link_views(sections, offset_tables, bool(forks), charts["heights"] is not None)
    return ReportContext(
        files=files,
        digest=d,
        verdict=verdict,
        headline=_headline(verdict, tiles, files),
        key_settings=_key_settings(files),
        tiles=tiles,
        sections=sections,
        settings=_settings(files),
        charts=charts,
        topology_faults=topo_faults,
        evidence=evidence,
        timeline=timeline,
        lanes=lanes,
        in_timeline=in_timeline,
        shown_evidence=shown_evidence,
        offset_tables=offset_tables,
        forks=forks[:FORK_ROWS],
        fork_osns=sorted({o for _, _, hashes in forks[:FORK_ROWS] for o in hashes}),
        caps={
            "latency_points": history_digest.LATENCY_POINTS_CAP,
            "timeline": history_digest.TIMELINE_CAP,
            "context": history_digest.CONTEXT_CAP,
            "context_window": history_digest.CONTEXT_WINDOW,
            "lanes": history_digest.TIMELINE_LANES,
            "evidence": history_digest.EVIDENCE_SHOWN,
            "examples": EXAMPLES_SHOWN,
            "offset_rows": history_digest.OFFSET_ROWS,
            "offset_partitions": history_digest.OFFSET_PARTITIONS,
            "forks": FORK_ROWS,
            "fork_total": len(forks),
            "topology_panels": MAX_PANELS,
            "heights": history_digest.HEIGHT_POINTS_CAP,
        },
    )


def write_context(ctx: ReportContext) -> Path:
    """Write the report.html and junit.xml of an already built context; return the HTML path."""
    out = ctx.files.path / REPORT_HTML
    out.write_text(render("report.html.j2", ctx=ctx), encoding="utf-8")
    write_junit(ctx.files.path)
    return out


def write_report(run_dir: Path) -> Path:
    """Write run_dir/report.html and run_dir/junit.xml; return the HTML path."""
    return write_context(build_context(Path(run_dir)))
