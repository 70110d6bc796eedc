"""Scenario files (scenarios/*.toml): what one run does, validated before anything boots.

A mistake in a scenario is one line naming the field (ScenarioError), which the CLI
turns into exit 2.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ground.fault_kinds import canonical
from ground.settings_file import SAFE_NAME, read_settings, settings_path
from ground.validation_message import one_line

SCENARIOS_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario that cannot run; str() is the one-line message for the user."""


class _Strict(BaseModel):
    # Numbers are finite: inf or nan in a duration would overflow the generator's clock.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


DAY = 86_400.0  # seconds; the upper bound of every time setting


class WorkloadSpec(_Strict):
    name: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0, le=1e6, description="share of the main phase's ops")
    options: dict[str, Any] = Field(default_factory=dict, description="checked by the workload")


class TimelineStep(_Strict):
    """One request of an explicit fault timeline: at `at` seconds into the main phase, start or
    stop `fault`; `seed` feeds the fault's own choices (which of the nodes its role names)."""

    at: float = Field(ge=0, le=DAY)
    f: Literal["start", "stop"]
    fault: str = Field(min_length=1)
    seed: int = Field(0, ge=0, lt=2**63)


class NemesisSpec(_Strict):
    faults: list[str] = Field(default_factory=list, description="fault names, picked at random (as the schedule says)")
    schedule: Literal["one-at-a-time", "in-order", "random", "timeline"] = Field(
        "one-at-a-time", description="one-at-a-time: start a fault, stop it, start the next; in-order: the same, the "
                                     "faults in the order listed (then from the first again); random: faults that "
                                     "overlap, drawn anew each period, with quiet between (harness.schedules.random_faults); "
                                     "timeline: exactly `steps` (what `ordeal shrink` writes)")
    steps: list[TimelineStep] = Field(default_factory=list, description="timeline: the requests, in time order")
    interval: float = Field(10.0, gt=0, le=DAY, description="seconds between starting a fault and stopping it, and "
                                                            "between faults (random: between requests, on average)")
    period: float = Field(30.0, gt=0, le=DAY, description="random: seconds each draw of faults lasts")
    quiet: float = Field(10.0, ge=0, le=DAY, description="random: seconds with no fault after each period")
    families: int = Field(2, ge=1, le=100, description="random: faults drawn for each period")
    max_active: int = Field(2, ge=1, le=100, description="random: faults active at once, at most")
    options: dict[str, dict[str, Any]] = Field(default_factory=dict, description="per fault name, checked by the fault")
    may_find_no_target: bool = Field(False, description="a run whose faults all found nothing to hit still counts "
                                                        "(suites otherwise call it undecided)")
    kind: str | None = Field(None, description="the fault kind the variant's [expect] and [available] judge this "
                                               "scenario by; by default, the kinds of its faults")

    @model_validator(mode="after")
    def _timeline(self) -> "NemesisSpec":
        if (self.schedule == "timeline") != bool(self.steps):
            raise ValueError("steps: a timeline schedule has steps, and only a timeline schedule does")
        unknown = sorted({s.fault for s in self.steps} - set(self.faults))
        if unknown:
            raise ValueError(f"steps: fault {unknown[0]} is not in nemesis.faults")
        if any(b.at < a.at for a, b in zip(self.steps, self.steps[1:])):
            raise ValueError("steps: not in time order")
        return self

    @property
    def fault_kinds(self) -> tuple[str, ...]:
        """The fault kinds the variant's tables judge this scenario by: its `kind` when it names
        one, else its faults' (old names read as their new ones), each once."""
        if self.kind is not None:
            return (canonical(self.kind),)
        return tuple(dict.fromkeys(canonical(f) for f in self.faults))


class Scenario(_Strict):
    name: str = Field(min_length=1, max_length=100, pattern=SAFE_NAME,
                      description="a safe word: it names the run's directory in the store")
    description: str = ""
    variant: str | None = Field(None, description="cluster variant; required when a workload or fault needs a cluster")
    workloads: list[WorkloadSpec] = Field(min_length=1)
    client: dict[str, Any] | None = Field(None, description="the Kafka client of this scenario's workloads "
                                                            "(implementation, version), over the variant's [client]")
    nemesis: NemesisSpec = NemesisSpec()
    concurrency: int = Field(6, ge=1, le=1024, description="client threads, one logical process each")
    rate: float = Field(50.0, ge=0, le=1e6, description="target ops/s over all clients; 0 = as fast as they go")
    duration: float = Field(60.0, gt=0, le=7 * DAY, description="seconds of the main phase")
    recovery_wait: float = Field(10.0, ge=0, le=DAY, description="seconds between the final heal and the final reads")
    await_recovery: float = Field(
        0.0, ge=0, le=DAY, description="after the final heal, wait at most this long for the cluster to be whole "
                                       "again (every broker registered, every partition's replicas in its ISR, "
                                       "every OSN serving) before the recovery wait; recorded as a `recovered` "
                                       "op; 0 = do not wait")
    final_read_time_limit: float = Field(60.0, gt=0, le=DAY, description="seconds allowed for the final reads")
    op_timeout: float = Field(10.0, gt=0, le=DAY, description="an op not answered by then completes as info")
    in_flight: int = Field(1, ge=1, le=100_000,
                           description="ops one client thread keeps open at once where its workload's client starts "
                                       "them asynchronously (kafka-log's sends), each as a logical process of its "
                                       "own; 1 = one op at a time")
    client_crash_interval: float = Field(
        0.0, ge=0, le=DAY, description="seconds between crashes of each client thread's process, on average (Jepsen's "
                                       "crash op: its clients torn down without a clean close, the thread going on as "
                                       "a new process with new ones); 0 = never")
    seed: int | None = Field(None, ge=0, lt=2**63, description="random seed; chosen and recorded when absent")


def scenario_path(name_or_path: str) -> Path:
    """A file path as given, or a shipped scenario by name (scenarios/<name>.toml)."""
    return settings_path(name_or_path, SCENARIOS_DIR)


def parse_scenario(data: dict[str, Any], source: str, overrides: dict[str, Any] | None = None) -> Scenario:
    """Validate `data` (a TOML table) with `overrides` applied on top (CLI or pytest options)."""
    merged = dict(data)
    merged.setdefault("name", Path(source).stem)
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return Scenario.model_validate(merged)
    except ValidationError as exc:
        raise ScenarioError(f"scenario {source}: {one_line(exc)}") from None


def load_scenario(name_or_path: str, overrides: dict[str, Any] | None = None) -> Scenario:
    path, data = read_settings(canonical(name_or_path), SCENARIOS_DIR, "scenario", ScenarioError)
    return parse_scenario(data, str(path), overrides)
