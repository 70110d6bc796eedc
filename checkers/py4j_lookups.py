"""Remembered py4j name lookups: what a name is in a running JVM is asked once.

Why: PySpark reaches the JVM through py4j, and py4j resolves every name it is given with
a round trip of its own before the call itself: `functions.col("x")` asks which class
`org.apache.spark.sql.functions` is, then whether `col` is a method of it, then calls
it. A check builds some thousand column expressions, and on a 3,000-op history about a
third of its ~10,400 round trips were such lookups (counted at py4j's send_command): a
small check's cost is mostly round trips, not Spark's work.

A class found by name, and a static method found on a class, stay what they are while
the JVM runs; they are kept per py4j client (a new JVM has a new client, and starts
afresh). Anything else is asked every time, as py4j does: fields (their values change),
packages, and names that were not found.
"""
from __future__ import annotations

import threading
from typing import Any

from py4j import java_gateway
from py4j.java_gateway import JavaClass, JavaMember, JVMView

_ATTR = "_ordeal_lookups"
_lock = threading.Lock()


def _kept(client: Any) -> dict[tuple[str, str, str], Any]:
    kept = getattr(client, _ATTR, None)
    if kept is None:
        with _lock:
            kept = getattr(client, _ATTR, None)
            if kept is None:
                kept = {}
                setattr(client, _ATTR, kept)
    return kept


def install() -> None:
    """Make py4j keep class and static-method lookups (idempotent; process-wide)."""
    if getattr(java_gateway, _ATTR, False):
        return
    asked_view, asked_class = JVMView.__getattr__, JavaClass.__getattr__

    def view_lookup(self: JVMView, name: str) -> Any:
        kept = _kept(self._gateway_client)
        key = ("view", self._id, name)
        found = kept.get(key)
        if found is None:
            found = asked_view(self, name)
            if isinstance(found, JavaClass):
                kept[key] = found
        return found

    def class_lookup(self: JavaClass, name: str) -> Any:
        kept = _kept(self._gateway_client)
        key = ("class", self._fqn, name)
        found = kept.get(key)
        if found is None:
            found = asked_class(self, name)
            if isinstance(found, (JavaMember, JavaClass)):  # a static method, or a nested class
                kept[key] = found
        return found

    JVMView.__getattr__ = view_lookup
    JavaClass.__getattr__ = class_lookup
    setattr(java_gateway, _ATTR, True)
