"""Workloads by name: what a scenario's `[[workloads]] name = "..."` refers to.

A module under workloads/ registers its factory with `register_workload` when imported;
`workload_factory` imports every module of the workloads package (and the harness's own
noop) on first use, so a scenario can name a workload no one imported explicitly.
"""
from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.client import Client
from harness.discovery import import_failures, import_package_modules
from harness.generator import Generator


@dataclass(frozen=True)
class Workload:
    """What the runner needs from a workload.

    `generator(rng)` is the endless op source of the main phase (the runner adds rate,
    time limit and nemesis); `final_generator()` the finite ops of the final-read phase,
    after every fault is healed; `client` is unopened (see harness.client)."""

    name: str
    client: Client
    generator: Callable[[random.Random], Generator]
    final_generator: Callable[[], Generator] | None = None
    needs_cluster: bool = True


# factory(options, variant) -> Workload; `variant` is the clusters.variant.Variant of the run
# or None. Bad options raise ValueError (or a pydantic ValidationError): one line for the user.
WorkloadFactory = Callable[[dict[str, Any], Any], Workload]

_WORKLOADS: dict[str, WorkloadFactory] = {}


def register_workload(name: str, factory: WorkloadFactory) -> None:
    _WORKLOADS[name] = factory


def _discover() -> None:
    importlib.import_module("harness.noop")
    import_package_modules("workloads")


def workload_names() -> list[str]:
    _discover()
    return sorted(_WORKLOADS)


def workload_factory(name: str) -> WorkloadFactory:
    """The factory registered as `name`; KeyError if there is none."""
    _discover()
    return _WORKLOADS[name]
