"""A partition's files as each broker holds them, copied out as evidence, and the record
batches in them listed one per line.

Why: a checker sees what clients were told; when a run is invalid, what the brokers wrote is
the other half of the proof. Which producer (id, epoch, sequence) wrote each offset, whether
a batch was transactional and which control marker (COMMIT or ABORT) closed it is in the
segment files and nowhere else, and a finding reported on a kept cluster is gone at its next
boot. Kafka's own log-dump tool is not in every broker image ordeal builds (the 4.4.0 one
has none), so the batches are read with kafka-python's parser of the record format (v2),
which needs no broker.

Files are copied with the Docker engine's archive call, which reads a stopped or paused
container's filesystem as well as a running one's.
"""
from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import docker

from clusters.node import Node

DATA_DIR = "/var/lib/kafka/data"  # log.dirs of every broker (clusters/node_config.py)
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT"}
LISTING = "batches.txt"
# Per record listed: enough of a value to match it to the history's (the workloads' values are short).
VALUE_CHARS = 40


class PartitionFilesError(RuntimeError):
    """The partition's files could not be copied or read; the message says which and why."""


def copy_partition(node: Node, topic: str, partition: int, dest: Path) -> Path | None:
    """Copy `node`'s directory of `topic`-`partition` to dest/<node>/<topic>-<partition>/; the
    copied directory, or None when the broker holds no replica of it."""
    name = f"{topic}-{partition}"
    try:
        chunks, _ = node.container.get_archive(f"{DATA_DIR}/{name}")
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as exc:
        raise PartitionFilesError(f"{node.name}: {name} not copied: {exc.explanation or exc}") from None
    target = dest / node.name
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        archive.extractall(target, filter="data")
    return target / name


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        text = raw.hex()
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + "..."


def read_batches(log: bytes) -> list[dict[str, Any]]:
    """The record batches of a segment file's bytes, in file order: offsets, the producer
    (id, epoch, first sequence), transactional or not, and either the control marker it
    holds or its records' (offset, key, value)."""
    from kafka.record import MemoryRecords

    found = []
    records = MemoryRecords(log)
    while (batch := records.next_batch()) is not None:
        entry: dict[str, Any] = {
            "base_offset": batch.base_offset, "last_offset": batch.last_offset,
            "leader_epoch": batch.leader_epoch, "producer_id": batch.producer_id,
            "producer_epoch": batch.producer_epoch, "base_sequence": batch.base_sequence,
            "transactional": bool(batch.is_transactional)}
        if batch.is_control_batch:
            entry["control"] = [CONTROL_TYPES.get(r.type, str(r.type)) for r in batch]
        else:
            entry["records"] = [{"offset": r.offset, "key": _text(r.key), "value": _text(r.value)} for r in batch]
        found.append(entry)
    return found


def batch_line(b: dict[str, Any]) -> str:
    """One batch as a line a reader can hold beside the history."""
    offsets = str(b["base_offset"]) if b["base_offset"] == b["last_offset"] else f"{b['base_offset']}-{b['last_offset']}"
    producer = (f"producer {b['producer_id']} epoch {b['producer_epoch']} seq {b['base_sequence']}"
                if b["producer_id"] >= 0 else "no producer id")
    kind = "txn" if b["transactional"] else "plain"
    if "control" in b:
        what = "marker " + ",".join(b["control"])
    else:
        what = "values " + " ".join(str(r["value"]) for r in b["records"])
    return f"offsets {offsets:>11}  leader epoch {b['leader_epoch']:<3} {producer:<36} {kind:<5} {what}"


def write_listing(partition_dir: Path) -> Path:
    """List every segment (*.log) of a copied partition directory into its batches.txt."""
    lines = []
    for segment in sorted(partition_dir.glob("*.log")):
        lines.append(f"# {segment.name}")
        try:
            lines.extend(batch_line(b) for b in read_batches(segment.read_bytes()))
        except Exception as exc:  # noqa: BLE001 - a file the parser cannot read is said, not fatal
            lines.append(f"# not readable: {exc.__class__.__name__}: {exc}")
    path = partition_dir / LISTING
    path.write_text("\n".join(lines) + "\n")
    return path


def capture(brokers: Iterable[Node], partitions: Iterable[tuple[str, int]], dest: Path) -> list[str]:
    """Copy every given partition from every broker into dest and list its batches; one line
    per partition and broker saying what was kept (or why not)."""
    said, brokers = [], list(brokers)
    for topic, partition in sorted(set(partitions)):
        for node in brokers:
            try:
                copied = copy_partition(node, topic, partition, dest)
            except PartitionFilesError as exc:
                said.append(str(exc))
                continue
            if copied is None:
                said.append(f"{node.name}: no replica of {topic}-{partition}")
                continue
            listing = write_listing(copied)
            said.append(f"{node.name}: {topic}-{partition} kept, batches in {listing.relative_to(dest)}")
    return said
