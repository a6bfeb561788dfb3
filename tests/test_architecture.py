"""The package's shape holds: no import circle anywhere, and library code never imports the CLI.

grimp reads every import statement, the ones inside functions included (a lazy import is still a dependency:
it only moves the circle from start-up to the first call). Type-checking-only imports are left out.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "learned_metrics"


def import_cycles(package: str) -> list[list[str]]:
    """Every group of modules that import each other, directly or through others (Tarjan's strongly connected
    components over grimp's graph, iterative so a deep package cannot exhaust the stack)."""
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
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=True, cache_dir=None)
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
