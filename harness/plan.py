"""A scenario resolved into objects: its variant, workloads and faults, and the one
generator of the whole run. Every name is looked up here, before anything boots, so a
typo is a ScenarioError naming the field.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ground.generator import (NS, AnyOf, Concat, Context, Generator, Mix, Pending, Phases, Seq, Sleep, Source, Stagger,
                              Tag, TimeLimit, clients, derive_rng, nemesis)
from ground.nemesis_protocol import Nemesis
from ground.op import CLIENT_CRASH, NEMESIS
from ground.validation_message import one_line
from ground.variant import Judgement
from ground.workload import Workload
from harness.schedules.one_at_a_time import FaultSchedule
from harness.schedules.random_faults import RandomSchedule, Request, plan_schedule
from harness.scenario import Scenario, ScenarioError
from nemesis.registry import fault_factory, fault_names
from workloads.registry import workload_factory, workload_names

HEAL_ALL = "heal-all"  # the op of the heal phase: the runner heals every fault
AWAIT_RECOVERY = "await-recovery"  # then, if the scenario asks, it waits for the cluster to be whole


@dataclass
class Plan:
    scenario: Scenario  # with its seed filled in
    source: str
    variant: Any  # ground.variant.Variant, or None when nothing needs a cluster
    workloads: dict[str, Workload]
    nemeses: dict[str, Nemesis]
    client: Any = None  # ground.variant.ClientSettings the workloads use (the scenario's or the variant's)

    @property
    def seed(self) -> int:
        assert self.scenario.seed is not None
        return self.scenario.seed

    @property
    def needs_cluster(self) -> bool:
        return any(w.needs_cluster for w in self.workloads.values()) or \
            any(getattr(n, "needs_cluster", True) for n in self.nemeses.values())

    def judgement(self) -> Judgement:
        """How the variant judges this run: by the fault kinds of its scenario (ground.variant)."""
        return self.variant.judgement(self.scenario.nemesis.fault_kinds)

    @property
    def changes_cluster(self) -> bool:
        """A fault of this run leaves the cluster changed for good (`changes_cluster` on the
        fault: the migration to Raft): no later run may reuse it."""
        return any(getattr(n, "changes_cluster", False) for n in self.nemeses.values())

    @property
    def total_seconds(self) -> float:
        s = self.scenario
        return s.duration + s.await_recovery + s.recovery_wait + s.final_read_time_limit

    def fault_plan(self) -> list[Request]:
        """Every fault request of the main phase, a function of the scenario and its seed: a
        random schedule's plan, a timeline's steps, or what one-at-a-time (and in-order) would
        request were each fault instant (its requests then come `interval` apart)."""
        n, s = self.scenario.nemesis, self.scenario
        if n.schedule == "random":
            return plan_schedule(n.faults, derive_rng(self.seed, "faults"), duration=s.duration,
                                 interval=n.interval, period=n.period, quiet=n.quiet, families=n.families,
                                 max_active=n.max_active)
        if n.schedule == "timeline":
            return [Request(int(step.at * NS), {"f": step.f, "fault": step.fault, "seed": step.seed}) for step in n.steps]
        schedule = FaultSchedule(n.faults, n.interval, derive_rng(self.seed, "faults"), in_order=n.schedule == "in-order")
        plan, now, end = [], 0, int(s.duration * NS)
        while (answer := schedule.op(Context(now, NEMESIS, 0))) is not None:
            if isinstance(answer, Pending):
                if answer.until is None or answer.until >= end:
                    break
                now = answer.until
                continue
            plan.append(Request(now, answer))
        return plan

    def generator(self) -> Phases:
        """main (workload ops at the target rate + the fault schedule, for `duration`) ->
        heal (and, with `await_recovery`, the wait for a whole cluster) -> recovery wait ->
        final reads (for at most `final_read_time_limit`)."""
        s, seed = self.scenario, self.seed
        sources = [Tag(name, w.generator(derive_rng(seed, f"workload/{name}")))
                   for name, w in self.workloads.items()]
        weights = [spec.weight for spec in s.workloads]
        ops: Generator = Mix(sources, derive_rng(seed, "mix"), weights)
        if s.rate > 0:
            ops = Stagger(s.rate, ops, derive_rng(seed, "stagger"))
        if s.client_crash_interval > 0:  # Jepsen's crash ops, before the workloads' when due
            crashes = Source(lambda _rng: {"f": CLIENT_CRASH}, derive_rng(seed, "client-crash"))
            ops = AnyOf(Stagger(s.concurrency / s.client_crash_interval, crashes, derive_rng(seed, "client-crash-gaps")),
                        ops)
        faults: Generator
        if s.nemesis.schedule in ("random", "timeline"):
            faults = RandomSchedule(self.fault_plan())
        else:
            faults = FaultSchedule(s.nemesis.faults, s.nemesis.interval, derive_rng(seed, "faults"),
                                   in_order=s.nemesis.schedule == "in-order")
        finals = [Tag(name, w.final_generator()) for name, w in self.workloads.items() if w.final_generator]
        return Phases(
            ("main", TimeLimit(s.duration, AnyOf(clients(ops), nemesis(faults)))),
            ("heal", nemesis(Seq([{"f": HEAL_ALL}] + ([{"f": AWAIT_RECOVERY, "limit": s.await_recovery}]
                                                      if s.await_recovery > 0 else [])))),
            ("recovery", Sleep(s.recovery_wait)),
            ("final-reads", TimeLimit(s.final_read_time_limit, clients(Concat(*finals)))),
        )


def _load_variant(name: str, source: str) -> Any:
    from ground.variant import VariantError, load_variant

    try:
        return load_variant(name)
    except VariantError as exc:
        raise ScenarioError(f"scenario {source}: variant: {exc}") from None


def _with_client(variant: Any, client: dict[str, Any] | None, source: str) -> Any:
    """`variant` with the scenario's [client] in place of its own (checked the same way)."""
    if client is None or variant is None:
        if client is not None:
            raise ScenarioError(f"scenario {source}: client: a client needs a variant to run against")
        return variant
    from ground.variant import ClientSettings

    try:
        settings = ClientSettings.model_validate(client)
    except ValidationError as exc:
        raise ScenarioError(f"scenario {source}: client.{one_line(exc)}") from None
    return variant.model_copy(update={"client": settings})


def _on_kafka(variant: Any, version: str | None, source: str) -> Any:
    """`variant` on Kafka `version` (a suite's kafka_versions axis), refused in one line where
    the variant cannot run it."""
    if version is None or variant is None:
        return variant
    from ground.variant import VariantError

    try:
        return variant.with_kafka_version(version)
    except VariantError as exc:
        raise ScenarioError(f"scenario {source}: variant: {exc}") from None


def prepare(scenario: Scenario, source: str, kafka_version: str | None = None) -> Plan:
    """Resolve names and options; pick and record a seed when the scenario has none.
    `kafka_version`: the variant's brokers on that Kafka release instead (a suite's axis)."""
    if scenario.seed is None:
        scenario = scenario.model_copy(update={"seed": secrets.randbits(31)})
    names = [spec.name for spec in scenario.workloads]
    if len(set(names)) != len(names):
        raise ScenarioError(f"scenario {source}: workloads: a workload is named twice")
    variant = _on_kafka(_load_variant(scenario.variant, source) if scenario.variant else None, kafka_version, source)
    # The workloads get the variant with the scenario's client; the cluster is the variant's own.
    client_variant = _with_client(variant, scenario.client, source)

    workloads: dict[str, Workload] = {}
    for i, spec in enumerate(scenario.workloads):
        try:
            factory = workload_factory(spec.name)
        except KeyError:
            raise ScenarioError(f"scenario {source}: workloads.{i}.name: unknown workload {spec.name} "
                                f"(known: {', '.join(workload_names())})") from None
        try:
            workloads[spec.name] = factory(spec.options, client_variant)
        except ValidationError as exc:
            raise ScenarioError(f"scenario {source}: workloads.{i}.options.{one_line(exc)}") from None
        except ValueError as exc:
            raise ScenarioError(f"scenario {source}: workloads.{i}.options: {exc}") from None

    nemeses: dict[str, Nemesis] = {}
    unknown_options = sorted(set(scenario.nemesis.options) - set(scenario.nemesis.faults))
    if unknown_options:
        raise ScenarioError(f"scenario {source}: nemesis.options.{unknown_options[0]}: not a fault of nemesis.faults")
    for i, name in enumerate(scenario.nemesis.faults):
        try:
            factory = fault_factory(name)
        except KeyError:
            raise ScenarioError(f"scenario {source}: nemesis.faults.{i}: unknown fault {name} "
                                f"(known: {', '.join(fault_names())})") from None
        try:
            nemeses[name] = factory(scenario.nemesis.options.get(name, {}))
        except ValidationError as exc:
            raise ScenarioError(f"scenario {source}: nemesis.options.{name}.{one_line(exc)}") from None
        except ValueError as exc:
            raise ScenarioError(f"scenario {source}: nemesis.options.{name}: {exc}") from None

    if scenario.nemesis.schedule == "random":
        mixes = [name for name in nemeses if isinstance(getattr(nemeses[name], "parts", None), dict)]
        if mixes:
            raise ScenarioError(f"scenario {source}: nemesis.faults: {mixes[0]} is a mix of its own; "
                                "a random schedule draws the faults themselves")
    if variant is not None:
        for i, (name, fault) in enumerate(nemeses.items()):
            missing = sorted(r for r in getattr(fault, "roles", lambda: set())() if not variant.has_role(r))
            if missing:
                raise ScenarioError(f"scenario {source}: nemesis.faults.{i}: {name} acts on {missing[0]} nodes; "
                                    f"variant {variant.name} has none (kafka.mode {variant.kafka.mode})")

    plan = Plan(scenario, source, variant, workloads, nemeses, client_variant.client if variant else None)
    if plan.needs_cluster and variant is None:
        needy = [n for n, w in workloads.items() if w.needs_cluster] + \
                [n for n, f in nemeses.items() if getattr(f, "needs_cluster", True)]
        raise ScenarioError(f"scenario {source}: variant: required by {needy[0]}")
    return plan
