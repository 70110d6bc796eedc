"""`ordeal run`: one scenario end to end, with live progress."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground.errors import UsageError

EPILOG = """\
exit status: 0 valid, 1 anomalies found (valid false), 3 verdict unknown (also when the check
failed or could not run: "check failed: ..."), 4 not checked (--no-check), 2 bad scenario or
usage, 128+N stopped by signal N (the faults are healed and the history flushed first).

The run directory is STORE/<scenario>/<UTC time>/ (STORE/latest points at it): run.json,
scenario.json, history.jsonl, logs/, results.json, report.html."""


def _run(args: argparse.Namespace) -> int:
    from harness.plan import prepare
    from harness.progress import Progress
    from harness.runner import ClusterLost, RunError, Runner
    from harness.scenario import ScenarioError, load_scenario, scenario_path

    try:
        scenario = load_scenario(args.scenario, {"duration": args.duration, "seed": args.seed,
                                                  "variant": args.variant})
        plan = prepare(scenario, str(scenario_path(args.scenario)))
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    progress = Progress() if not args.quiet else None
    try:
        if progress is not None:
            with progress:
                result = Runner(plan, args.store, keep_cluster=args.keep_cluster, check=not args.no_check,
                                on_status=progress).run()
        else:
            result = Runner(plan, args.store, keep_cluster=args.keep_cluster, check=not args.no_check).run()
    except ClusterLost as exc:
        print(f"ordeal: {exc}", file=sys.stderr)
        return 3
    except RunError as exc:
        print(f"ordeal: {exc}", file=sys.stderr)
        return 1
    for note in result.notes:
        print(f"ordeal: {note}", file=sys.stderr)
    if result.signal and not Path(result.history).is_file():
        print(f"ordeal: stopped by signal {result.signal} before the run began; no history "
              f"(run directory {result.run_dir})", file=sys.stderr)
        return result.exit_code
    if result.signal:
        print(f"ordeal: stopped by signal {result.signal}; faults healed, history in {result.history}",
              file=sys.stderr)
        return result.exit_code
    c = result.counts
    print(f"{plan.scenario.name}: ok {c.get('ok', 0)}, fail {c.get('fail', 0)}, info {c.get('info', 0)}; "
          f"seed {plan.seed}; {result.run_dir}")
    if not result.checked:
        print(f"not checked (--no-check): `ordeal check {result.run_dir}` checks it")
    elif result.check_error is not None:
        print(f"check failed: {result.check_error}; verdict unknown (history in {result.history})")
    else:
        print(f"valid: {str(result.valid).lower()} ({result.anomaly_summary()})"
              + (f"; report {result.report}" if result.report else ""))
        if result.verdict == "unknown":
            print(f"undecided: {result.unknown_reason}")
        if result.faults_missed:
            print(f"faults: {result.faults_missed}")
    uncovered = plan.judgement().uncovered if plan.variant is not None else []
    if uncovered:
        print(f"judged: {', '.join(uncovered)} not in variant {plan.variant.name}'s [expect] or [available] "
              "(judged as valid, with no availability promise)")
    return result.exit_code


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run a scenario: boot (or reuse) the cluster, workload + faults, heal, final reads, check",
        description="Run one scenario end to end: boot the variant (or reuse a running cluster of it), run the "
                    "workloads with the fault schedule for the duration, heal every fault, wait for recovery, "
                    "do the final reads, tear down, then check the history and write the report.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO", help="a scenario TOML file, or the name of one under scenarios/")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="override the main phase's duration")
    p.add_argument("--seed", type=int, help="override the scenario's seed (recorded in run.json)")
    p.add_argument("--variant", metavar="NAME", help="run on this variant (name or TOML path) instead of the scenario's")
    p.add_argument("--store", type=Path, default=Path("store"), metavar="DIR", help="where runs go (default ./store)")
    p.add_argument("--keep-cluster", action="store_true", help="leave the cluster running for the next run")
    p.add_argument("--no-check", action="store_true", help="record the history only; skip checkers and report")
    p.add_argument("--quiet", action="store_true", help="no live progress")
    p.set_defaults(func=_run)


def main(argv: list[str] | None = None) -> int:
    """`python -m cli.run SCENARIO ...`: the run subcommand alone."""
    parser = argparse.ArgumentParser(prog="ordeal")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["run", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"ordeal: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
