"""junit.xml for CI systems: one test case per checker, failing with the anomalies it found.

An unknown verdict is a skipped case (CI should neither pass nor fail it silently); a
run without results.json gets one erroring case so CI notices nothing was checked.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ground.run_files import JUNIT_XML
from reports.run_files import RunFiles, load_run, verdict_of


def junit_tree(files: RunFiles) -> ET.ElementTree:
    suite_name = f"ordeal.{files.variant_name}.{files.scenario_name}"
    suite = ET.Element("testsuite", name=suite_name)
    stats = files.results.get("stats") if isinstance(files.results.get("stats"), dict) else {}
    props = ET.SubElement(suite, "properties")
    for key, value in (("variant", files.variant_name), ("scenario", files.scenario_name),
                       ("run_dir", str(files.path)), ("verdict", files.verdict)):
        ET.SubElement(props, "property", name=key, value=value)
    tally = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    checkers = files.checkers
    if not files.results:
        case = ET.SubElement(suite, "testcase", classname=suite_name, name="results")
        ET.SubElement(case, "error", message="results.json is missing or unreadable: the run was not checked")
        tally["tests"], tally["errors"] = 1, 1
    elif not checkers:
        checkers = {"verdict": {"valid": files.results.get("valid")}}
    counts = {a.name: a.count for a in files.anomalies}
    by_family: dict[str, list[str]] = {}
    for a in files.anomalies:
        by_family.setdefault(a.family, []).append(a.name)
    for name, body in checkers.items():
        verdict = verdict_of(body.get("valid"))
        case = ET.SubElement(suite, "testcase", classname=suite_name, name=name)
        seconds = stats.get("seconds") if isinstance(stats.get("seconds"), (int, float)) else None
        if seconds is not None:
            case.set("time", f"{seconds:.3f}")
        # The checker's own list when results.json has one, else the anomalies of its family.
        names = body.get("anomalies") if isinstance(body.get("anomalies"), list) else None
        if names is None:
            names = by_family.get(name, []) if name in ("kafka", "ordering", "nodes") else list(counts)
        found = [f"{n} x{counts[n]}" if n in counts else str(n) for n in names]
        reasons = [str(r) for r in body.get("unknown") or [] if isinstance(body.get("unknown"), list)]
        tally["tests"] += 1
        if verdict == "invalid":
            tally["failures"] += 1
            message = ", ".join(found) or "checker reported invalid"
            failure = ET.SubElement(case, "failure", message=message, type="anomalies")
            failure.text = f"see {files.path / 'report.html'}"
        elif verdict == "unknown":
            tally["skipped"] += 1
            why = found + reasons + [f"{a}: {w[0]}" for a, w in (body.get("not_judged") or {}).items()
                                     if isinstance(w, list) and w]
            ET.SubElement(case, "skipped", message=f"{name} could not decide" + (": " + "; ".join(why) if why else ""))
    for key, n in tally.items():
        suite.set(key, str(n))
    return ET.ElementTree(suite)


def write_junit(run_dir: Path) -> Path:
    """Write run_dir/junit.xml from results.json (and run.json for names); return its path."""
    files = load_run(Path(run_dir), need_history=False)
    out = files.path / JUNIT_XML
    tree = junit_tree(files)
    ET.indent(tree)
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return out


def write_suite_junit(suite_dir: Path, name: str, outcomes: list) -> Path:
    """suite_dir/junit.xml: one test case per run of a suite (harness.suite.Outcome), failing
    when its verdict is not one the variant expects or is undecided (unknown, or no fault
    took effect), erroring when the run did not happen, skipped when the budget had no room
    for it."""
    suite_name = f"ordeal.suite.{name}"
    suite = ET.Element("testsuite", name=suite_name)
    tally = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=f"{suite_name}.{o.cell.variant}", name=o.cell.label,
                             time=f"{o.seconds:.1f}")
        tally["tests"] += 1
        where = f"; run: {o.run_dir}" if o.run_dir else ""
        if o.skipped:
            tally["skipped"] += 1
            ET.SubElement(case, "skipped", message=o.skipped)
        elif o.error:
            tally["errors"] += 1
            ET.SubElement(case, "error", message=o.error + where)
        elif o.met is not True:
            tally["failures"] += 1
            if o.verdict == "unknown":  # the checkers could not decide: which, and on what
                ET.SubElement(case, "failure", type="undecided",
                              message=f"undecided: {o.undecided or 'verdict unknown'}{where}")
            elif o.met is None:  # a verdict the variant allows, reached with no fault taking effect
                ET.SubElement(case, "failure", type="undecided",
                              message=f"undecided: verdict {o.verdict}, but {o.fault_note}{where}")
            else:
                ET.SubElement(case, "failure", type="expectation",
                              message=f"verdict {o.verdict} where {o.expected} is expected ({o.anomalies}){where}")
    for key, n in tally.items():
        suite.set(key, str(n))
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    out = Path(suite_dir) / JUNIT_XML
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return out
