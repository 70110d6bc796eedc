"""Streaming a history into flat tables and pairing it, chunk by chunk: no Spark here."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from checkers.ingest import lines as ingest
from checkers.ingest.history import _SENDS, HistoryError, read_lines
from checkers.ingest.lines import BadLine, Chunk, chunks, flatten, parse
from checkers.ingest.pairing import Pairing
from tests.histories import HistoryBuilder, make_chain


def _history() -> HistoryBuilder:
    h = HistoryBuilder()
    h.assign(7, "c1", [("t0", 0)])
    h.send(0, "t0", 1, offset=0)
    h.nemesis("kill", {"node": "kafka1", "value": "not a number", "records": "free-form"})
    h.send(1, "t0", 2, type="fail")
    h.poll(7, "c1", [("t0", 0, 0, 1)])
    h.broadcast(2, "ch0", "osn1", "tx-1")
    h.deliver(9, "ch0", "osn1", make_chain([["tx-1"]]))
    h.final_read(9, "t0", 0, [(0, 1)])
    return h


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _stream(path: Path, chunk_bytes: int) -> tuple[dict[str, list[dict]], list[str]]:
    out: dict[str, list[dict]] = {}
    pairing = Pairing()
    warnings = []
    for chunk in chunks(path, chunk_bytes):
        flat = flatten(parse(chunk), last=chunk.last)
        warnings += [str(n) for n in flat.skipped]
        for name, table in (("ops", flat.ops), ("records", flat.records), ("blocks", flat.blocks),
                            ("sends", pairing.sends(flat.ops))):
            out.setdefault(name, []).extend(table.to_pylist())
    return out, warnings


def test_chunks_end_at_line_ends_and_count_lines(tmp_path):
    path = _write(tmp_path, _history().lines())
    pieces = list(chunks(path, 100))
    assert all(c.data.endswith(b"\n") for c in pieces) and [c.last for c in pieces][-2:] == [False, True]
    assert [c.first_line for c in pieces] == [1 + sum(p.data.count(b"\n") for p in pieces[:i])
                                               for i in range(len(pieces))]


def test_chunks_hold_the_whole_file_once_even_past_a_line_longer_than_a_chunk(tmp_path):
    path = _write(tmp_path, _history().lines())
    pieces = list(chunks(path, 10))  # every line is longer than a chunk
    assert b"".join(c.data for c in pieces) == path.read_bytes()
    assert [c.lines for c in pieces] == [1] * len(_history().lines())


def test_lines_longer_than_an_arrow_block_give_the_same_rows(tmp_path, monkeypatch):
    path = _write(tmp_path, _history().lines())
    whole = _stream(path, 1 << 20)
    monkeypatch.setattr("checkers.ingest.lines._BLOCK_BYTES", 64)  # Arrow refuses a line longer than its block
    assert _stream(path, 1 << 20) == whole


def test_small_and_large_chunks_give_the_same_rows(tmp_path):
    path = _write(tmp_path, _history().lines())
    assert _stream(path, 64) == _stream(path, 1 << 20)


def test_chunks_parsed_side_by_side_are_written_and_judged_in_line_order(tmp_path, monkeypatch):
    h = HistoryBuilder()
    for v in range(40):
        h.send(v % 3, "t0", v, offset=v)
    lines = h.lines()
    monkeypatch.setattr("checkers.ingest.history.chunks", lambda path: chunks(path, 100))  # a line a chunk
    written: list[int] = []
    read_lines(_write(tmp_path, lines), lambda tables: written.extend(tables[_SENDS]["index"].to_pylist()))
    assert written == list(range(1, len(lines), 2))  # each send's completion
    torn = lines[:10] + ['{"index": 99, "ti'] + lines[10:30] + ["not json"] + lines[30:]
    with pytest.raises(HistoryError, match=r"line 11: not a JSON op"):
        read_lines(_write(tmp_path, torn), lambda tables: None)


def test_a_nemesis_value_of_any_shape_is_read_with_its_clashing_fields_null(tmp_path):
    out, _ = _stream(_write(tmp_path, _history().lines()), 1 << 20)
    kill = [op for op in out["ops"] if op["f"] == "kill"]
    assert kill == [dict(kill[0], process="nemesis", type="info", value=None)]


def test_records_and_blocks_keep_their_op_index_and_position(tmp_path):
    out, _ = _stream(_write(tmp_path, _history().lines()), 1 << 20)
    polls = [r for r in out["records"] if r["f"] == "poll"]
    assert [(r["consumer"], r["pos"], r["offset"], r["value"]) for r in polls] == [("c1", 0, 0, 1)]
    assert [(b["channel"], b["osn"], b["number"], b["txs"]) for b in out["blocks"]] == [("ch0", "osn1", 0, ["tx-1"])]


def test_sends_pair_across_chunks_and_take_the_value_from_their_invoke(tmp_path):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.op(1, "invoke", "send", {"topic": "t0", "value": 2})
    h.op(1, "info", "send", None, error="timeout")
    out, _ = _stream(_write(tmp_path, h.lines()), 40)
    assert [(s["type"], s["value"], s["invoke_index"]) for s in out["sends"]] == [("ok", 1, 0), ("info", 2, 2)]


@pytest.mark.parametrize("odd", [[], ['{"index": 100, "time": 1, "process": 5, "type": "invoke", "f": "send", '
                                       '"value": {"topic": 3}}']], ids=["arrow", "json-module"])
def test_blank_lines_are_skipped_and_do_not_shift_line_numbers(tmp_path, odd):
    lines = _history().lines()
    out, _ = _stream(_write(tmp_path, lines[:2] + ["", "   ", "\r"] + lines[2:] + odd), 1 << 20)
    assert [op["line"] for op in out["ops"]][:3] == [1, 2, 6]


def test_a_torn_last_line_is_skipped_a_torn_middle_line_is_an_error(tmp_path):
    lines = _history().lines()
    _, warnings = _stream(_write(tmp_path, lines + ['{"index": 99, "ti']), 1 << 20)
    assert warnings == [str(len(lines) + 1)]
    with pytest.raises(BadLine, match=r"^line 3: not a JSON op"):
        _stream(_write(tmp_path, lines[:2] + ['{"index": 99, "ti'] + lines[2:]), 1 << 20)


def test_an_index_going_backwards_is_an_error_naming_its_line(tmp_path):
    lines = _history().lines()
    lines[3] = json.dumps(dict(json.loads(lines[3]), index=0))
    with pytest.raises(HistoryError, match=r"line 4: index 0 is not above the previous op's 2"):
        read_lines(_write(tmp_path, lines), lambda tables: None)


def test_a_second_invoke_before_the_completion_is_an_error_naming_its_line(tmp_path):
    h = HistoryBuilder()
    h.op(0, "invoke", "send", {"topic": "t0", "value": 1})
    h.op(0, "invoke", "send", {"topic": "t0", "value": 2})
    with pytest.raises(BadLine, match=r"^line 2: a second invoke of process 0 before the first completed"):
        _stream(_write(tmp_path, h.lines()), 1 << 20)


def test_a_field_of_another_json_type_is_null_on_the_fast_and_the_slow_path(tmp_path):
    h = HistoryBuilder()
    h.op(0, "invoke", "send", {"topic": "t0", "value": "seventeen"})
    fast = flatten(parse(Chunk(1, (h.lines()[0] + "\n").encode(), True)), last=True).ops.to_pylist()
    slow = flatten(parse(Chunk(1, (h.lines()[0] + "\n" + "{torn").encode(), True)), last=True).ops.to_pylist()
    assert fast == slow and fast[0]["value"] is None and fast[0]["topic"] == "t0"



def test_an_assigns_partition_pairs_and_seek_are_read_among_lines_arrow_reads(tmp_path):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.assign(7, "c1", [("t0", 0), ("t1", 2)], seek=None)
    h.assign(7, "c1", [("t0", 1)], seek="beginning")
    h.send(0, "t0", 2, offset=1)
    out, _ = _stream(_write(tmp_path, h.lines()), 1 << 20)
    assigns = [(op["type"], op["consumer"], op["partitions"], op["seek"]) for op in out["ops"] if op["f"] == "assign"]
    pairs = [{"topic": "t0", "partition": 0}, {"topic": "t1", "partition": 2}]
    assert assigns == [("invoke", "c1", pairs, None), ("ok", "c1", pairs, None),
                       ("invoke", "c1", [{"topic": "t0", "partition": 1}], "beginning"),
                       ("ok", "c1", [{"topic": "t0", "partition": 1}], "beginning")]
    assert [op["partitions"] for op in out["ops"] if op["f"] == "send"] == [None] * 4


@pytest.mark.parametrize("kind", ["nemesis", "assign", "txn", "config-update"])
def test_a_chunk_holding_a_line_arrow_cannot_read_as_it_is_is_never_tried_whole(tmp_path, monkeypatch, kind):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    if kind == "nemesis":
        h.nemesis("kill", {"node": "kafka1"})
    elif kind == "assign":
        h.assign(7, "c1", [("t0", 0)])
    elif kind == "config-update":
        h.config_update(3, "ch0", "osn1", "cfg-1", version=2, max_message_count=7)
    else:
        h.txn(3, [("send", {"topic": "t0", "key": "k", "value": 2})])
    monkeypatch.setattr(ingest, "_arrow_whole", lambda chunk: pytest.fail(f"a chunk with a {kind} line read whole"))
    [chunk] = chunks(_write(tmp_path, h.lines()), 1 << 20)
    assert parse(chunk).num_rows == len(h.lines())


def test_a_config_updates_setting_and_version_are_read_among_lines_arrow_reads(tmp_path):
    h = HistoryBuilder()
    h.broadcast(2, "ch0", "osn1", "tx-1")
    h.config_update(3, "ch0", "osn2", "cfg-1", version=2, max_message_count=7)
    h.config_update(3, "ch0", "osn2", "cfg-2", version=3, batch_timeout_ms=800, type="fail", error="bad-request")
    h.broadcast(2, "ch0", "osn1", "tx-2")
    out, _ = _stream(_write(tmp_path, h.lines()), 1 << 20)
    fields = ("type", "channel", "osn", "tx", "status", "max_message_count", "batch_timeout_ms", "version")
    assert [tuple(op[k] for k in fields) for op in out["ops"] if op["f"] == "config-update"] == [
        ("invoke", "ch0", "osn2", "cfg-1", None, 7, None, 2), ("ok", "ch0", "osn2", "cfg-1", "SUCCESS", 7, None, 2),
        ("invoke", "ch0", "osn2", "cfg-2", None, None, 800, 3), ("fail", "ch0", "osn2", "cfg-2", None, None, 800, 3)]
    assert {(op["max_message_count"], op["batch_timeout_ms"], op["version"])
            for op in out["ops"] if op["f"] == "broadcast"} == {(None, None, None)}


def test_a_config_update_whose_version_is_not_an_integer_refuses_the_history_naming_its_line(tmp_path):
    h = HistoryBuilder()
    h.broadcast(2, "ch0", "osn1", "tx-1")
    h.op(3, "invoke", "config-update", {"channel": "ch0", "osn": "osn2", "tx": "cfg-1", "max_message_count": 7,
                                        "version": "2"})
    with pytest.raises(HistoryError, match=r"line 3: " + re.escape('value.version is "2", not an integer')):
        read_lines(_write(tmp_path, h.lines()), lambda tables: None)


@pytest.mark.parametrize("partitions,shown", [([["t0"]], '["t0"]'), ([[0, "t0"]], '[0, "t0"]'),
                                              ([{"topic": "t0", "partition": 0}], '{"topic": "t0", "partition": 0}'),
                                              ("t0", None)])
def test_an_assign_whose_partitions_are_not_pairs_refuses_the_history_naming_its_line(tmp_path, partitions, shown):
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    h.op(7, "invoke", "assign", {"consumer": "c1", "partitions": partitions, "seek": None})
    where = f"value.partitions[0] is {shown}, not a [topic, partition] pair" if shown else \
        'value.partitions is "t0", not a list'
    with pytest.raises(HistoryError, match=r"line 3: " + re.escape(where)):
        read_lines(_write(tmp_path, h.lines()), lambda tables: None)
