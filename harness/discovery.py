"""Finding what workloads/ and nemesis/ register: importing every module of a package runs
its `register_workload` / `register_fault` calls.

A module that fails to import is remembered, not raised: the other workloads and faults
stay usable, and a lookup that misses names the broken module and its error.
"""
from __future__ import annotations

import importlib
import logging
import pkgutil

log = logging.getLogger("ordeal.discovery")

_failures: dict[str, str] = {}
_done: set[str] = set()


def import_package_modules(package: str) -> None:
    """Import every module directly under `package` (once per process)."""
    if package in _done:
        return
    _done.add(package)
    try:
        pkg = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name == package:
            return
        raise
    for info in pkgutil.iter_modules(pkg.__path__):
        name = f"{package}.{info.name}"
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - reported with the lookup that needed it
            _failures[name] = f"{exc.__class__.__name__}: {exc}"
            log.warning("could not import %s: %s", name, _failures[name])


def import_failures(package: str) -> str:
    """'; pkg.mod failed to import: Error: ...' for each broken module of `package`, or ''."""
    return "".join(f"; {name} failed to import: {err}" for name, err in sorted(_failures.items())
                   if name.startswith(package + "."))
