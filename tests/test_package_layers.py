"""The packages of src/torch_bench import one way, down the pipeline: a change to one layer
moves only what sits above it. Every import counts, including those inside functions."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "torch_bench"

# Lowest first; a package may import only those before it (docs/development.md draws this).
LAYERS = (
    # shared helpers, among themselves in any order that makes no circle
    {"errors", "metrics", "redact", "decoding", "fileio", "yamlfile", "config_file",
     "boundary", "presets", "suite_path", "provenance", "schemas"},
    {"results"},
    {"measure"},
    {"formats"},
    {"models"},
    {"zoo"},
    {"suites"},
    {"store"},
    {"execute"},
    {"analyze"},
    {"render"},
    {"report"},
    {"config"},
    {"runner"},
    {"cli"},
    {"action"},
    {"__main__"},
)


def module_names() -> dict[str, Path]:
    found = {}
    for path in SOURCE.rglob("*.py"):
        parts = ("torch_bench", *path.relative_to(SOURCE).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, modules: set[str] | frozenset[str] = frozenset()
             ) -> set[str]:
    """Every torch_bench module name `path` imports, relative imports resolved. `from P import
    x` imports P.x when that is one of `modules`, else P (where x is defined)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                inner = f"{base}.{alias.name}"
                names.add(inner if inner in modules else base)
    return {n for n in names if n == "torch_bench" or n.startswith("torch_bench.")}


def module_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (a name that is no module resolves to the module or
    package that defines it)."""
    modules = module_names()
    graph = {}
    for name, path in modules.items():
        edges = set()
        for target in imported(name, path, set(modules)):
            while target not in modules:
                target = target.rpartition(".")[0]
            if target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def package_graph(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in modules.items():
        edges = graph.setdefault(package_of(module), set())
        edges.update(package_of(t) for t in targets)
    return {package: edges - {package, "__init__"} for package, edges in graph.items()}


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as found:
        return found.args[1]
    return None


def test_no_module_imports_itself_back():
    modules = module_graph()
    # a submodule reading its package's __init__, which imports it, is a circle too
    assert cycle_in(modules) is None


def test_the_packages_import_one_way():
    assert cycle_in(package_graph(module_graph())) is None


def test_every_import_points_down_the_layers():
    rank = {package: i for i, layer in enumerate(LAYERS) for package in layer}
    packages = package_graph(module_graph())
    assert set(packages) - {"__init__"} <= set(rank), "a new package needs its place in LAYERS"
    upward = sorted(f"{package} -> {target}" for package, targets in packages.items()
                    for target in targets
                    if package != "__init__" and rank[target] >= rank[package]
                    and not (rank[target] == rank[package] == 0))
    assert upward == []


@pytest.mark.parametrize("source, expected", [
    ("from torch_bench.store.archive import decode\n", {"torch_bench.store.archive"}),
    ("from . import layout\n", {"torch_bench.store.layout"}),
    ("def f():\n    from ..render import paths\n", {"torch_bench.render.paths"}),
    ("import torch_bench.errors as e\n", {"torch_bench.errors"}),
    ("from torch_bench.zoo import parse_ref\n", {"torch_bench.zoo"}),  # the package's own
])
def test_the_walk_sees_every_kind_of_import(tmp_path, source, expected):
    (tmp_path / "store").mkdir()
    path = tmp_path / "store" / "plan.py"
    path.write_text(source)
    modules = {"torch_bench.store.archive", "torch_bench.store.layout",
               "torch_bench.render.paths", "torch_bench.errors", "torch_bench.zoo"}
    assert imported("torch_bench.store.plan", path, modules) == expected


def test_a_circle_is_found_and_named():
    assert set(cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}})) == {"a", "b", "c"}
