"""What the brokers wrote where an invalid run's anomalies are, kept beside its history before
the cluster is booted again (suites and hunts reboot a variant after an invalid run).

The partitions are those the anomalies' examples name (a Kafka anomaly's topic and partition;
an ordering anomaly's channel, which is a one-partition topic of its name). Everything goes
under <run>/evidence/: each broker's copy of each partition and its batches.txt
(clusters/partition_files.py), and partitions.txt saying what was kept from where.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ground.cluster_view import ClusterView
from ground.run_files import CHANNEL_OFFSETS, EVIDENCE

SAID = "partitions.txt"


def anomaly_partitions(results: dict[str, Any]) -> set[tuple[str, int]]:
    """(topic, partition) of every anomaly example that names one."""
    found = set()
    for anomaly in (results.get("anomalies") or {}).values():
        for example in (anomaly.get("examples") or []) if isinstance(anomaly, dict) else []:
            if not isinstance(example, dict):
                continue
            if isinstance(example.get("topic"), str) and isinstance(example.get("partition"), int):
                found.add((example["topic"], example["partition"]))
            elif isinstance(example.get("channel"), str):
                found.add((example["channel"], 0))
    return found


def keep_partition_files(cluster: ClusterView | None, results: dict[str, Any] | None, run_dir: Path) -> str | None:
    """Copy the anomalies' partitions from every broker of `cluster` into run_dir/evidence/;
    one line for the suite's or hunt's log, or None when there was nothing to keep (or no
    cluster). Never raises: the verdict stands without it."""
    partitions = anomaly_partitions(results or {})
    brokers = list(cluster.brokers) if cluster is not None else []
    if not partitions or not brokers:
        return None
    dest = run_dir / EVIDENCE
    try:
        from clusters.partition_files import capture

        said = capture(brokers, partitions, dest)
    except Exception as exc:  # noqa: BLE001 - evidence is a bonus, the run is judged already
        return f"evidence: not kept ({exc.__class__.__name__}: {exc})"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / SAID).write_text("\n".join(said) + "\n")
    kept = sum(" kept, " in line for line in said)
    return (f"evidence: {kept} broker copies of {len(partitions)} partitions "
            f"({', '.join(f'{t}-{p}' for t, p in sorted(partitions)[:6])}"
            f"{' ...' if len(partitions) > 6 else ''}) in {dest}")


def keep_channel_offsets(cluster: ClusterView, run_dir: Path) -> None:
    """Each channel partition's log start and end offsets as the run ends, into
    run_dir/evidence/channels.json: what explains an OSN that asked for records Kafka had
    already deleted (reports/osn_evidence.py). Never raises: it is evidence, not the verdict."""
    try:
        channels = list(cluster.variant.orderer.channels) if cluster.osns else []
        if not channels:
            return
        from clusters.kafka_topics import log_offsets

        found = log_offsets(cluster.bootstrap_servers(), [(c, 0) for c in channels])
    except Exception:  # noqa: BLE001
        return
    said = {topic: {"log_start": o[0], "log_end": o[1]} for (topic, _), o in found.items() if o is not None}
    dest = run_dir / EVIDENCE
    dest.mkdir(parents=True, exist_ok=True)
    (dest / CHANNEL_OFFSETS).write_text(json.dumps(said, indent=2) + "\n")
