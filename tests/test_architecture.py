"""The package's shape holds: no import circle anywhere, library code never imports the CLI, layers only import
downwards, and scoring never imports meta-evaluation.

grimp reads every import statement, the ones inside functions included (a lazy import is still a dependency:
it only moves the circle from start-up to the first call); a module that loads others by name through
``importlib.import_module`` (the packages' lazy re-exports) depends on each module it names. Type-checking-only
imports are left out.

The layers, top first: the CLI; the analyses (every ``meta_eval`` module but the pure statistics and the option
declarations), which build their results on the table model; the presentation (``render``: the table model,
its renderers and the figures), which imports no analysis; the pure statistics (arrays in, small results out,
no I/O, no captions), which import neither.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import grimp
import pytest

PACKAGE = "learned_metrics"


def _named_modules(module: str, modules: set[str]) -> set[str]:
    """The modules a module that calls ``importlib.import_module`` names in its strings, in full or relative to
    its package (``_EXPORTS = {"auc": ...}`` in ``meta_eval/__init__.py``): what it loads at run time."""
    top, *parts = module.split(".")
    root = Path(importlib.util.find_spec(top).origin).parent  # a top-level spec: nothing is imported
    path = root.joinpath(*parts)
    is_package = (path / "__init__.py").is_file()
    path = path / "__init__.py" if is_package else path.with_suffix(".py")
    source = path.read_text(encoding="utf-8") if path.is_file() else ""
    if "import_module" not in source:
        return set()
    base = module if is_package else module.rpartition(".")[0]
    strings = {node.value for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return {name for text in strings for name in (text, f"{base}.{text}") if name in modules} - {module}


def package_graph(package: str) -> grimp.ImportGraph:
    """grimp's graph of the package (imports in function bodies included) plus the importlib re-exports."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    modules = set(graph.modules)
    for module in sorted(modules):
        for target in _named_modules(module, modules):
            graph.add_import(importer=module, imported=target)
    return graph


def import_cycles(package: str) -> list[list[str]]:
    """Every group of modules that import each other, directly or through others (Tarjan's strongly connected
    components over grimp's graph, iterative so a deep package cannot exhaust the stack). Without the importlib
    re-exports: a package loading its own children lazily is no circle."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def test_the_package_has_no_import_circle():
    assert import_cycles(PACKAGE) == []


def test_library_code_never_imports_the_cli():
    graph = package_graph(PACKAGE)
    cli = {m for m in graph.modules if m == f"{PACKAGE}.cli" or m.startswith(f"{PACKAGE}.cli.")}
    importers = {m for target in cli for m in graph.find_modules_that_directly_import(target)} - cli
    assert importers == set()


@pytest.mark.parametrize("lazy", [False, True], ids=["top-level", "inside-a-function"])
def test_the_check_finds_a_circle(tmp_path, monkeypatch, lazy):
    """A control: a package with a circle (also one hidden in a function body) is caught."""
    package = tmp_path / "circular_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import circular_pkg.b\n")
    body = "def f():\n    import circular_pkg.c\n" if lazy else "import circular_pkg.c\n"
    (package / "b.py").write_text(body)
    (package / "c.py").write_text("from circular_pkg import a\n")
    (package / "d.py").write_text("import circular_pkg.a\n")  # imports the circle, is not part of it
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("circular_pkg") == [["circular_pkg.a", "circular_pkg.b", "circular_pkg.c"]]


# pure statistics: arrays in, small results out, no I/O, no captions (nlpstats' shape)
STATISTICS = ("coefficients", "resampling", "multiple", "roc", "length_gap")
# declarations every layer reads (flags, defaults, checks); in no layer, so a chain through them still counts
DECLARATIONS = ("options",)


def layers(graph: grimp.ImportGraph, package: str = PACKAGE) -> list:
    """The layers of the package, top first (see the module docstring)."""
    meta_eval = f"{package}.meta_eval"
    statistics = {f"{meta_eval}.{name}" for name in STATISTICS}
    analyses = {m for m in graph.find_children(meta_eval)} - statistics - {f"{meta_eval}.{n}" for n in DECLARATIONS}
    return [f"{package}.cli", grimp.Layer(*sorted(analyses), independent=False), f"{package}.render",
            grimp.Layer(*sorted(statistics), independent=False)]


def upward_imports(graph: grimp.ImportGraph, layer_list: list) -> list[str]:
    """Every import chain from a lower layer to a higher one, one line each: ``a -> b -> c``."""
    lines = []
    for dependency in graph.find_illegal_dependencies_for_layers(layers=layer_list):
        for route in dependency.routes:
            lines.append(" -> ".join(["|".join(sorted(route.heads)), *route.middle, "|".join(sorted(route.tails))]))
    return sorted(lines)


def test_layers_only_import_downwards():
    graph = package_graph(PACKAGE)
    statistics = {f"{PACKAGE}.meta_eval.{name}" for name in STATISTICS}
    assert statistics <= set(graph.modules), "a pure statistics module was renamed: update STATISTICS"
    assert upward_imports(graph, layers(graph)) == []


def test_scoring_never_imports_meta_eval():
    graph = package_graph(PACKAGE)
    assert graph.find_shortest_chains(importer=f"{PACKAGE}.scoring", imported=f"{PACKAGE}.meta_eval",
                                      as_packages=True) == set()


@pytest.mark.parametrize("how", ["top-level", "inside-a-function", "importlib"])
def test_the_check_finds_an_upward_import(tmp_path, monkeypatch, how):
    """A control: a package whose bottom layer imports its top one (also from a function body, or by name through
    importlib) is caught; the same package without that import passes."""
    package = tmp_path / "layered_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "top.py").write_text("import layered_pkg.middle\n")
    (package / "middle.py").write_text("from layered_pkg import bottom\n")
    upward = {"top-level": "import layered_pkg.top\n",
              "inside-a-function": "def f():\n    from layered_pkg import top\n",
              "importlib": "import importlib\n\ndef f():\n    return importlib.import_module('layered_pkg.top')\n"}
    (package / "bottom.py").write_text(upward[how])
    monkeypatch.syspath_prepend(str(tmp_path))
    layer_list = ["layered_pkg.top", "layered_pkg.middle", "layered_pkg.bottom"]
    assert upward_imports(package_graph("layered_pkg"), layer_list) == ["layered_pkg.bottom -> layered_pkg.top"]
    (package / "bottom.py").write_text("import math\n")  # the control: downward imports only
    assert upward_imports(package_graph("layered_pkg"), layer_list) == []
