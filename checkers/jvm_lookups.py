"""py4j's look-ups of JVM classes and methods, each asked once per process, not once per use.

PySpark reaches the JVM through py4j's view of it (`SparkContext._jvm`). Every column
function (`F.col`, `F.lit`, ...) and every list of columns it passes asks that view twice
before it calls anything: which class a name is (`functions`, `PythonUtils`: a short name
is tried against each of PySpark's wildcard imports, and a miss is a search of every jar
on the class path), then whether the member is a method. py4j keeps neither answer. In a
warm check of a 3,000-op history these look-ups were 3,758 of its 12,000 round trips to
the JVM and 1.5 s of its 8.9 (a probe tallying py4j commands, on a slow day).

`cache_jvm_lookups` puts a view in front of py4j's that keeps the classes it found and, per
class, the methods: a method (a py4j `JavaMember`) holds only its class's and its own name,
so one serves every later call. Anything else is asked anew every time: a package, a
static field's value (it may change), a name that was not found (a later import may add
it), and every call itself.
"""
from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JVMView
from pyspark import SparkContext


class _KnownClass(JavaClass):
    """A py4j JavaClass that keeps the methods it has looked up."""

    def __init__(self, fqn: str, gateway_client: Any) -> None:
        super().__init__(fqn, gateway_client)
        self._known_methods: dict[str, JavaMember] = {}

    def __getattr__(self, name: str) -> Any:
        method = self.__dict__.get("_known_methods", {}).get(name)
        if method is not None:
            return method
        found = super().__getattr__(name)
        if isinstance(found, JavaMember):
            self._known_methods[name] = found
        return found


class _KnownView:
    """py4j's JVMView, with the classes it has found kept (`_KnownClass`); every other
    attribute is the view's own."""

    def __init__(self, view: JVMView) -> None:
        self._view = view
        self._known_classes: dict[str, _KnownClass] = {}

    def __getattr__(self, name: str) -> Any:
        known = self._known_classes.get(name)
        if known is not None:
            return known
        found = getattr(self._view, name)
        if type(found) is JavaClass:
            known = _KnownClass(found._fqn, found._gateway_client)
            self._known_classes[name] = known
            return known
        return found


def cache_jvm_lookups() -> None:
    """Put the caching view in front of the running SparkContext's py4j view (once: a view
    already cached is left as it is; a new gateway gets a view of its own from PySpark,
    which this wraps when called again)."""
    view = SparkContext._jvm
    if view is not None and not isinstance(view, _KnownView):
        SparkContext._jvm = _KnownView(view)  # type: ignore[assignment]  # a JVMView by duck typing
