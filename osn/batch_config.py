"""The Orderer group's batch values in a channel config, read as the model's chain reads them
to cut blocks after a config update (and as ordeal's client reads them to update them)."""
from __future__ import annotations

from osn.envelopes import MalformedEnvelope
from osn.wire.common import configtx_pb2
from osn.wire.orderer import configuration_pb2

BATCH_VALUES = {"max_message_count": "BatchSize", "batch_timeout_ms": "BatchTimeout"}


def batch_value(config: configtx_pb2.Config, name: str) -> tuple[int, int]:
    """(setting, version) of `name` ("max_message_count" or "batch_timeout_ms") in `config`."""
    value = config.channel_group.groups["Orderer"].values[BATCH_VALUES[name]]
    if name == "max_message_count":
        return configuration_pb2.BatchSize.FromString(value.value).max_message_count, value.version
    timeout = configuration_pb2.BatchTimeout.FromString(value.value).timeout
    return _milliseconds(timeout), value.version


def _milliseconds(duration: str) -> int:
    """Go's duration text as Fabric writes BatchTimeout ("500ms", "2s", "1m0s") in ms."""
    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
    total, number = 0.0, ""
    i = 0
    while i < len(duration):
        ch = duration[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if duration.startswith("ms", i) else ch
        if unit not in units or not number:
            raise MalformedEnvelope(f"BatchTimeout {duration!r} is not a duration ordeal reads")
        total += float(number) * units[unit]
        number, i = "", i + len(unit)
    if number:
        raise MalformedEnvelope(f"BatchTimeout {duration!r} has no unit")
    return int(total)
