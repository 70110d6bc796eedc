"""The names of what a run directory holds, and of a suite's and the store's own files: one
home for each, so that the runner that writes a file and the checker or report that reads
it cannot disagree (docs/reports.md describes each file)."""
from __future__ import annotations

HISTORY = "history.jsonl"  # the ops, one JSON line each (docs/history-format.md)
RUN_JSON = "run.json"  # what ran: scenario, variant, seed, cluster, exit
SCENARIO_JSON = "scenario.json"  # the resolved scenario
RESULTS_JSON = "results.json"  # the checkers' verdict and anomalies
REPORT_HTML = "report.html"
JUNIT_XML = "junit.xml"
LOGS = "logs"  # the nodes' logs, collected as a run ends
EVIDENCE = "evidence"  # what the cluster held, kept beside the history (harness/evidence.py)
CHANNEL_OFFSETS = "channels.json"  # in EVIDENCE: each channel partition's log start and end as the run ended
LATEST = "latest"  # the store's link to its newest run
SUITE_JSON = "suite.json"  # a suite's cells and their outcomes
COMPARE_HTML = "compare.html"
