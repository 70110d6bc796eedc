"""A history file in, the tables the checks read out: JSON lines parsed by Arrow (lines,
txn_lines), the columns of each table (schema, txn_schema), invocations paired with their
completions (pairing), and the Parquet copy and Tables a check is given (history)."""
