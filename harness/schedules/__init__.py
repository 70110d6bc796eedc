"""Fault schedules: when a run's nemesis starts and stops which fault, as the scenario's
`[nemesis] schedule` names it. Each is a generator of nemesis ops (ground/generator.py),
seeded from the run's seed.

- one_at_a_time: one fault at a time, every `interval` s (the default; `in-order` too);
- random_faults: faults that overlap in Jepsen's manner (`random`).
"""
