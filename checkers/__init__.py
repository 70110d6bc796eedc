"""ordeal: checkers — a history (format version 1) in, anomalies and a verdict out, in PySpark.

Entry points: checkers.check.check_history (writes and returns results.json) and the
`ordeal check` command (checkers.cli). Each anomaly is a DataFrame transform in
checkers.kafka or checkers.ordering; checkers.verdict holds the rules.
"""
