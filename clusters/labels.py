"""Docker labels that tie every container, network and volume to the run that made it.

A run's objects carry its label and its owner's pid and boot id, so a later start can tell
a crashed run's leftovers (owner gone) from a live parallel run, and a kept cluster
(`ordeal cluster up`) is left alone until `ordeal cluster down` or `ordeal clean`.
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT = "ordeal.project"
RUN = "ordeal.run"
VARIANT = "ordeal.variant"
OWNER_PID = "ordeal.owner-pid"
OWNER_BOOT = "ordeal.owner-boot"
KEEP = "ordeal.keep"
ROLE = "ordeal.role"
NODE = "ordeal.node"
IP = "ordeal.ip"
VARIANT_JSON = "ordeal.variant-json"
SUBNET = "ordeal.subnet"


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def run_labels(run: str, variant: str, keep: bool) -> dict[str, str]:
    return {
        PROJECT: "ordeal",
        RUN: run,
        VARIANT: variant,
        OWNER_PID: str(os.getpid()),
        OWNER_BOOT: boot_id(),
        KEEP: "true" if keep else "false",
    }


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that made these objects still runs (or they were kept on purpose)."""
    if labels.get(KEEP) == "true":
        return True
    if labels.get(OWNER_BOOT) != boot_id():
        return False
    try:
        pid = int(labels.get(OWNER_PID, "0"))
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return pid > 0
