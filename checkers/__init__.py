"""ordeal: checkers — a history (format version 1) in, anomalies and a verdict out, in PySpark.

Entry points: checkers.check.check_history (writes and returns results.json) and the
`ordeal check` command (cli.check: small histories checked together, as one batch). Each
anomaly is a DataFrame transform in checkers.kafka, checkers.ordering or checkers.nodes,
each of which declares its Checker (checkers.checker); checkers.verdict holds the rules.
"""
