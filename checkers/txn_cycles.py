"""Elle-style dependency cycles between transactions (history format 2): G0, G1c and their
realtime variants, with the cycle itself as evidence.

Edges between txns that committed (ok) or may have (info, as writers):

- ww: T1 -> T2 when T2's value follows T1's in a partition's final read (the committed log
  order), with no other txn's value between them;
- wr: T1 -> T2 when a poll of T2 (ok) returned a value T1 sent; per reader and partition only
  its last record read counts (earlier ones reach T2 through the ww chain of that partition);
- rt (realtime variants only): T1 -> T2 when T1 completed ok before T2 was invoked.

G0 is a cycle of ww edges; G1c one of ww and wr edges with a wr; G0-realtime and G1c-realtime
are cycles that need an rt edge (G1c-realtime holding a wr). Kafka's transactions promise
atomicity and read_committed, not serializable order across partitions, so these are
reported as facts and do not fail a verdict (checkers.verdict).

Narrowing: a cycle cannot consist of "forward" edges only (T1 completed ok before T2 was
invoked: time grows along them), so Spark first counts the edges that are not forward; when
there is none (as in histories of txns that never overlap) the graph is never built. Else
the edges of the txns that have any (a few per txn) go to networkx, which finds the strongly
connected components and one cycle in each; the rt edges enter as a chain of completion
times (T1 -> its completion -> later completions -> each txn invoked after them), not as the
quadratic set of pairs.
"""
from __future__ import annotations

import json
from bisect import bisect_left
from typing import Any

import networkx as nx
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.checker import TP, TV
from checkers.ingest.history import HISTORY

# A txn's side of an edge, in a history of the batch (checkers.ingest.history.HISTORY).
SRC, DST = [HISTORY, "src"], [HISTORY, "dst"]
CYCLES = ("G0", "G1c", "G0-realtime", "G1c-realtime")
# Cycles kept per anomaly: one per strongly connected component, at most this many.
MAX_CYCLES = 1000


def writes(sends: DataFrame) -> DataFrame:
    """Values sent by txns that committed or may have: (topic, value) -> writer."""
    return sends.filter(F.col("type").isin("ok", "info")).select(*TV, F.col("index").alias("writer"))


def ww_edges(written: DataFrame, finals: DataFrame) -> DataFrame:
    """Consecutive txn values of a partition's final read written by different txns."""
    placed = finals.join(written, TV).select(*TP, "offset", "writer")
    in_log = Window.partitionBy(*TP).orderBy("offset")
    return (placed.select(*TP, F.lag("writer").over(in_log).alias("src"), F.col("writer").alias("dst"))
            .filter(F.col("src").isNotNull() & (F.col("src") != F.col("dst")))
            .select("src", "dst", F.lit("ww").alias("kind"), *TP))


def wr_edges(written: DataFrame, polls: DataFrame, txns: DataFrame) -> DataFrame:
    """Writer -> reader, for the last record each committed txn polled of each partition."""
    readers = txns.filter(F.col("type") == "ok").select(HISTORY, "index")
    last = (polls.join(readers, [HISTORY, "index"], "left_semi").filter(F.col("offset").isNotNull())
            .groupBy("index", *TP).agg(F.max_by("value", "offset").alias("value")))
    return (last.join(written, TV)
            .filter(F.col("writer") != F.col("index"))
            .select(F.col("writer").alias("src"), F.col("index").alias("dst"), F.lit("wr").alias("kind"), *TP))


def backward_edges(edges: DataFrame, txns: DataFrame) -> DataFrame:
    """Edges T1 -> T2 but where T1 completed ok before T2 was invoked: every cycle holds one."""
    ends = txns.select(HISTORY, F.col("index").alias("src"),
                       F.when(F.col("type") == "ok", F.col("time")).alias("src_end"))
    starts = txns.select(HISTORY, F.col("index").alias("dst"), F.col("invoke_time").alias("dst_start"))
    return (edges.join(ends, SRC, "left").join(starts, DST, "left")
            .filter(~F.coalesce(F.col("src_end") < F.col("dst_start"), F.lit(False))))


def cycle_anomalies(sends: DataFrame, polls: DataFrame, finals: DataFrame, txns: DataFrame) -> DataFrame:
    """One anomaly row per cycle found (evidence: the txns of the cycle), each history's graph
    apart."""
    written = writes(sends)
    edges = ww_edges(written, finals).unionByName(wr_edges(written, polls, txns))
    rows: list[tuple[int, str, list[int], str]] = []
    if not backward_edges(edges, txns).isEmpty():
        collected: dict[int, list[Edge]] = {}
        for r in edges.distinct().collect():
            collected.setdefault(r[HISTORY], []).append((r["src"], r["dst"], r["kind"],
                                                          f"{r['topic']}/{r['partition']}"))
        nodes = sorted({(h, n) for h, some in collected.items() for e in some for n in e[:2]})
        times: dict[int, dict[int, tuple[int | None, int | None]]] = {}
        named = sends.sparkSession.createDataFrame(nodes, f"{HISTORY} int, index long")
        for r in txns.join(named, [HISTORY, "index"], "left_semi").collect():
            times.setdefault(r[HISTORY], {})[r["index"]] = (r["invoke_time"], r["time"] if r["type"] == "ok" else None)
        rows = [(h, c["anomaly"], sorted(set(c["cycle"])), example_of(c))
                for h, some in sorted(collected.items()) for c in find_cycles(some, times.get(h, {}))]
    found = sends.sparkSession.createDataFrame(
        rows, f"{HISTORY} int, anomaly string, evidence array<bigint>, example string")
    return found.withColumn("order", F.col("evidence")[0])


# -- the graph work, on the driver ------------------------------------------------------

Edge = tuple[int, int, str, str]  # src txn, dst txn, kind (ww | wr), where (topic/partition)


def find_cycles(edges: list[Edge], times: dict[int, tuple[int | None, int | None]]) -> list[dict[str, Any]]:
    """Cycles among txns, one per strongly connected component per anomaly: dicts of anomaly,
    cycle (txn indices in order, the first repeated at the end) and edges ("ww t0/1", "rt")."""
    graph = nx.DiGraph()
    for src, dst, kind, where in edges:
        if graph.has_edge(src, dst):
            graph[src][dst].setdefault(kind, where)
        else:
            graph.add_edge(src, dst, **{kind: where})
    found: list[dict[str, Any]] = []
    ww = nx.DiGraph([(s, d) for s, d, k in graph.edges(data=True) if "ww" in k])
    found += _per_component(ww, "G0", lambda s, d: "ww" in graph[s][d], graph, prefer="ww")
    found += _per_component(graph, "G1c", lambda s, d: "wr" in graph[s][d], graph, prefer="wr")
    timed = _with_realtime(graph, times)
    for cycle in _per_component(timed, None, lambda s, d: isinstance(d, tuple) and not isinstance(s, tuple),
                                graph, prefer="wr"):
        cycle["anomaly"] = "G1c-realtime" if any(e.startswith("wr") for e in cycle["edges"]) else "G0-realtime"
        found.append(cycle)
    return found


def _with_realtime(graph: nx.DiGraph, times: dict[int, tuple[int | None, int | None]]) -> nx.DiGraph:
    """The graph plus rt edges as a chain of ok completion times ("rt", k)."""
    timed = graph.copy()
    done = sorted((end, n) for n, (_, end) in times.items() if end is not None and n in graph)
    ends = [end for end, _ in done]
    for k, (_, n) in enumerate(done):
        timed.add_edge(n, ("rt", k))
        if k + 1 < len(done):
            timed.add_edge(("rt", k), ("rt", k + 1))
    for n, (start, _) in times.items():
        if n in graph and start is not None:
            k = bisect_left(ends, start) - 1  # the last completion strictly before n's invoke
            if k >= 0:
                timed.add_edge(("rt", k), n)
    return timed


def _per_component(g: nx.DiGraph, name: str | None, through, labels: nx.DiGraph, prefer: str) -> list[dict[str, Any]]:
    """In each strongly connected component of `g` holding an edge `through(src, dst)` accepts,
    the cycle made of that edge and the shortest path back."""
    out: list[dict[str, Any]] = []
    for component in nx.strongly_connected_components(g):
        if len(component) < 2:
            continue
        sub = g.subgraph(component)
        edge = next(((s, d) for s, d in sub.edges() if through(s, d)), None)
        if edge is None:
            continue
        path = [edge[0], *nx.shortest_path(sub, edge[1], edge[0])]
        out.append(_described(path, name, labels, prefer))
        if len(out) >= MAX_CYCLES:
            break
    return out


def _described(path: list[Any], name: str | None, labels: nx.DiGraph, prefer: str) -> dict[str, Any]:
    """A cycle path (virtual rt nodes included) as txn indices and edge labels."""
    txns = [n for n in path if not isinstance(n, tuple)]
    edges: list[str] = []
    i = 0
    while i < len(path) - 1:
        src, j = path[i], i + 1
        while isinstance(path[j], tuple):  # a run of completion times: one rt edge
            j += 1
        dst = path[j]
        if j > i + 1:
            edges.append("rt")
        else:
            kinds = labels[src][dst]
            kind = prefer if prefer in kinds else next(iter(kinds))
            edges.append(f"{kind} {kinds[kind]}")
        i = j
    start = txns.index(min(txns[:-1]))  # from its lowest txn, so that a cycle reads the same however found
    txns = txns[start:-1] + txns[:start + 1]
    edges = edges[start:] + edges[:start]
    return {"anomaly": name, "cycle": txns, "edges": edges}


def example_of(cycle: dict[str, Any]) -> str:
    return json.dumps({"cycle": cycle["cycle"], "edges": cycle["edges"]})
