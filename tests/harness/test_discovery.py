"""Workload and fault modules are found by importing their package; a broken one is named."""
from __future__ import annotations

import sys

from harness.discovery import import_failures, import_package_modules
from harness.nemesis_api import fault_names
from harness.workload import workload_names


def test_a_module_that_fails_to_import_is_named_and_the_others_still_load(tmp_path, monkeypatch):
    pkg = tmp_path / "ordeal_test_plugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text("LOADED = True\n")
    (pkg / "bad.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import_package_modules("ordeal_test_plugins")
    assert sys.modules["ordeal_test_plugins.good"].LOADED
    assert import_failures("ordeal_test_plugins") == \
        "; ordeal_test_plugins.bad failed to import: RuntimeError: half written"


def test_the_noop_workload_and_fault_are_always_registered():
    assert "noop" in workload_names() and "noop" in fault_names()
