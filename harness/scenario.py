"""Scenario files (scenarios/*.toml): what one run does, validated before anything boots.

A mistake in a scenario is one line naming the field (ScenarioError), which the CLI
turns into exit 2.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.validation_message import one_line

SCENARIOS_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario that cannot run; str() is the one-line message for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkloadSpec(_Strict):
    name: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0, description="share of the main phase's ops")
    options: dict[str, Any] = Field(default_factory=dict, description="checked by the workload")


class NemesisSpec(_Strict):
    faults: list[str] = Field(default_factory=list, description="fault names; one at a time, picked at random")
    interval: float = Field(10.0, gt=0, description="seconds between starting a fault and stopping it, and between faults")
    options: dict[str, dict[str, Any]] = Field(default_factory=dict, description="per fault name, checked by the fault")


class Scenario(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    variant: str | None = Field(None, description="cluster variant; required when a workload or fault needs a cluster")
    workloads: list[WorkloadSpec] = Field(min_length=1)
    nemesis: NemesisSpec = NemesisSpec()
    concurrency: int = Field(6, ge=1, le=1024, description="client threads, one logical process each")
    rate: float = Field(50.0, ge=0, description="target ops/s over all clients; 0 = as fast as they go")
    duration: float = Field(60.0, gt=0, description="seconds of the main phase")
    recovery_wait: float = Field(10.0, ge=0, description="seconds between the final heal and the final reads")
    final_read_time_limit: float = Field(60.0, gt=0, description="seconds allowed for the final reads")
    op_timeout: float = Field(10.0, gt=0, description="an op not answered by then completes as info")
    seed: int | None = Field(None, description="random seed; chosen and recorded when absent")


def scenario_path(name_or_path: str) -> Path:
    """A file path as given, or a shipped scenario by name (scenarios/<name>.toml)."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path
    shipped = SCENARIOS_DIR / f"{name_or_path}.toml"
    try:  # shown as scenarios/<name>.toml when run from the repository
        return shipped.relative_to(Path.cwd())
    except ValueError:
        return shipped


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
    path = scenario_path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SCENARIOS_DIR.glob("*.toml")))
        raise ScenarioError(f"scenario {name_or_path}: no such file or shipped scenario (known: {known})")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"scenario {path}: not valid TOML: {exc}") from None
    return parse_scenario(data, str(path), overrides)
