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
from collections.abc import Callable
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


def _remembering(asked: Callable[[Any, str], Any], key: Callable[[Any, str], tuple[str, str, str]],
                 kept_kinds: tuple[type, ...]) -> Callable[[Any, str], Any]:
    """py4j's lookup `asked`, with the answers of the kinds kept remembered under `key`."""

    def lookup(self: Any, name: str) -> Any:
        kept = _kept(self._gateway_client)
        where = key(self, name)
        found = kept.get(where)
        if found is None:
            found = asked(self, name)
            if isinstance(found, kept_kinds):
                kept[where] = found
        return found

    return lookup


def install() -> None:
    """Make py4j keep class and static-method lookups (idempotent; process-wide)."""
    if getattr(java_gateway, _ATTR, False):
        return
    # A name on the JVM's view: a class is kept; a package is asked again, as py4j does.
    JVMView.__getattr__ = _remembering(JVMView.__getattr__, lambda view, name: ("view", view._id, name),
                                       (JavaClass,))
    # A name on a class: a static method or a nested class is kept, a field's value is not.
    JavaClass.__getattr__ = _remembering(JavaClass.__getattr__, lambda cls, name: ("class", cls._fqn, name),
                                         (JavaMember, JavaClass))
    setattr(java_gateway, _ATTR, True)
