"""ordeal: ground — what every other package shares and nothing of ordeal's sits under.

Everything here is vocabulary and contracts, not machinery: the op and its types (op),
the names of a run directory's files (run_files), a user's mistake (errors) and the
one-line message of a bad setting (validation_message), the settings-file loader
(settings_file), ordeal's cache (cache), what a variant may state for a fault kind and
whether a verdict meets it (expectations), the fault kinds (fault_kinds), what a fault
request did (fault_outcome), the Kafka names that workloads make and faults look for
(kafka_names), and the contracts between the runner and its parts: Client, Generator,
Workload and Nemesis (client, generator, workload, nemesis_protocol).

A module here imports nothing of ordeal's other packages; tests/test_layers.py keeps it so.
"""
