"""ground/anomalies.py is the one home of each anomaly's name, meaning and effect: the docs'
tables are written from it, the checkers' families and the report's words come from it."""
from __future__ import annotations

from ground import anomalies
from ground.anomalies import DOC, render_doc


def test_the_docs_tables_are_the_registrys_own():
    text = DOC.read_text()
    assert render_doc(text) == text, "docs/anomalies.md differs from ground/anomalies.py: run python -m ground.anomalies"


def test_every_anomaly_is_in_one_table_of_the_docs():
    text = DOC.read_text()
    missing = [a.name for a in anomalies.ANOMALIES if f"| {a.name} |" not in text]
    assert missing == []


def test_effects_follow_the_variant_and_the_producer():
    assert anomalies.fails("lost-write", idempotent=False) is True
    assert anomalies.fails("duplicate", idempotent=False) is False and anomalies.fails("duplicate", True) is True
    assert anomalies.fails("hang", False, available=False) is False and anomalies.fails("hang", False, True) is True
    assert anomalies.fails("G1c", True, True) is False and anomalies.fails("unseen", True, True) is False
    assert anomalies.effect_on("lagging-osn", True, True) == "unknown"
    assert anomalies.effect_on("duplicate", idempotent=False, available=False) == "allowed"
    assert anomalies.fails("a-name-nobody-registered", False) is True  # an unknown name is never waved through
