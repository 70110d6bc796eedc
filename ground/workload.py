"""The Workload contract: what the runner needs from a workload (Jepsen's client plus its
generator). workloads/registry.py names every workload; a scenario's `[[workloads]] name`
is looked up there."""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ground.client import Client
from ground.generator import Generator


@dataclass(frozen=True)
class Workload:
    """`generator(rng)` is the endless op source of the main phase (the runner adds rate,
    time limit and nemesis); `final_generator()` the finite ops of the final-read phase,
    after every fault is healed; `client` is unopened (see ground.client). `setup(cluster)`,
    where given, readies the cluster once before the main phase's clock starts (Jepsen's
    client setup!): a short run's seconds then go to ops, not to making topics. It must be
    idempotent, since a client's open still makes sure of the same things."""

    name: str
    client: Client
    generator: Callable[[random.Random], Generator]
    final_generator: Callable[[], Generator] | None = None
    needs_cluster: bool = True
    setup: Callable[[Any], None] | None = None


# factory(options, variant) -> Workload; `variant` is the ground.variant.Variant of the run
# or None. Bad options raise ValueError (or a pydantic ValidationError): one line for the user.
WorkloadFactory = Callable[[dict[str, Any], Any], Workload]
