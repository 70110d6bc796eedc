"""The house's layers, read from the code's own imports (module level, inside functions and
under TYPE_CHECKING alike): ground at the bottom, importing nothing of ordeal, and the model
OSN beside it, importing nothing of ordeal either; Fabric's network material and client on
them; clusters and checkers on those (in checkers, the JVM runtime and the ingest under the
anomaly checks); reports on checkers; workloads and nemesis on clusters; harness, then the
commands (cli), then bench on top. No import climbs, and no modules import each other in a
circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ground", "osn", "fabric", "checkers", "clusters", "reports", "workloads", "nemesis", "harness", "cli",
            "bench")
EVERYTHING = PACKAGES
# What each part may import (itself included); the longest matching prefix rules.
MAY_IMPORT = {
    "ground": ("ground",),
    "osn": ("osn",),  # the model OSN is its own program: its image holds osn/ and nothing else of ordeal
    "fabric": ("ground", "osn", "fabric"),
    "checkers.runtime": ("ground", "checkers.runtime"),
    "checkers.ingest": ("ground", "checkers.ingest"),
    "checkers": ("ground", "osn", "fabric", "checkers"),
    "clusters": ("ground", "osn", "fabric", "clusters"),
    "reports": ("ground", "checkers", "reports"),
    "workloads": ("ground", "osn", "fabric", "clusters", "workloads"),
    "nemesis": ("ground", "osn", "fabric", "clusters", "nemesis"),
    "harness": tuple(p for p in PACKAGES if p not in ("cli", "bench")),
    "cli": tuple(p for p in PACKAGES if p != "bench"),
    "bench": EVERYTHING,
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "wire" in parts:  # protoc's generated code
                continue
            found[".".join(parts).removesuffix(".__init__")] = path
    return found


def _imports(modules: dict[str, Path]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                # `from pkg import mod` imports the module pkg.mod when there is one.
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != name and not (path.name == "__init__.py" and target.startswith(name)):
                    graph.add_edge(name, target)
    return graph


def _rule(module: str) -> tuple[str, ...]:
    prefix = max((p for p in MAY_IMPORT if module == p or module.startswith(p + ".")), key=len)
    return MAY_IMPORT[prefix]


def _within(module: str, allowed: tuple[str, ...]) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def test_no_import_climbs_from_a_lower_layer_to_a_higher_one() -> None:
    graph = _imports(_modules())
    climbing = sorted(f"{a} -> {b}" for a, b in graph.edges if not _within(b, _rule(a)))
    assert not climbing, "imports that climb:\n" + "\n".join(climbing)


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = _imports(_modules())
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, f"circles: {circles}"


def test_no_module_shares_its_name_with_a_package() -> None:
    """A script run as `python bench/NAME.py` has bench/ first on its path: a bench/checkers.py
    would hide the checkers package from everything it imports."""
    clashes = [str(p.relative_to(ROOT)) for p in ROOT.glob("*/*.py") if p.stem in PACKAGES]
    assert not clashes
