"""ordeal: reports — what people decide from, built from a run's files only, never from the cluster.

run_files       what a run directory holds (run.json, results.json, history.jsonl)
history_digest  one streaming, bounded pass over a history
fault_intervals nemesis ops as fault intervals
downsample      the bounded samples and histograms behind the caps
plots, topology the charts, as inline PNGs
page            the jinja2 environment; templates/ holds the pages and the stylesheet
report          report.html per run (write_report)
junit           junit.xml per run (write_junit)
compare         compare.html across runs (write_compare)
screenshot      report.html to a PNG in headless Chromium
cli             `ordeal report` and `ordeal compare`
"""
