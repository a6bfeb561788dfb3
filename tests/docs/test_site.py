"""The documentation site: every public name has an API reference entry, and ``mkdocs build --strict`` passes.

The reference pages (docs/reference/*.md) name what they render with mkdocstrings' ``::: identifier`` blocks,
optionally limited by a ``members:`` list. A name added to ``learned_metrics.meta_eval.__all__`` (one line of its
``_EXPORTS``) or to ``learned_metrics.scoring.__all__`` without a reference entry fails here, in well under a second.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
_BLOCK = re.compile(r"^::: *(?P<identifier>\S+)[ \t]*\n(?P<options>(?:(?:[ \t]+.*)?\n)*)", re.MULTILINE)


def reference_entries() -> dict[str, list[str] | None]:
    """Identifier of every ``:::`` block of the reference pages -> its ``members`` list (None: all public members,
    ``[]``: none)."""
    entries: dict[str, list[str] | None] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for block in _BLOCK.finditer(page.read_text(encoding="utf-8")):
            options = (yaml.safe_load(block["options"]) or {}).get("options") or {}
            members = options.get("members")
            entries[block["identifier"]] = [] if members is False else members
    return entries


def documented(module: str, name: str, entries: dict[str, list[str] | None]) -> bool:
    """Whether ``module.name`` is rendered: its own block, or its module's block with it among the members."""
    return f"{module}.{name}" in entries or (module in entries and (entries[module] is None
                                                                    or name in entries[module]))


def test_reference_pages_parse_into_blocks():
    entries = reference_entries()
    assert entries["learned_metrics.meta_eval.auc"] == ["GroupAuc", "AucReport", "auc_by_group", "roc_points"]
    assert entries["learned_metrics.export"] is None and entries["learned_metrics.scoring"] == []


def test_every_public_meta_eval_name_has_a_reference_entry():
    from learned_metrics import meta_eval

    entries = reference_entries()
    missing = []
    for name in meta_eval.__all__:
        module = meta_eval._EXPORTS[name]
        module = module if "." in module else f"learned_metrics.meta_eval.{module}"
        if not documented(module, name, entries):
            missing.append(f"{module}.{name}")
    assert not missing, f"public names without an entry in docs/reference/: {missing}"


def test_every_public_scoring_name_has_a_reference_entry():
    from learned_metrics import scoring

    entries = reference_entries()
    # scoring's names are defined in scoring/scorer.py (its __getattr__ reads them from there)
    missing = [name for name in scoring.__all__ if not documented("learned_metrics.scoring.scorer", name, entries)]
    assert not missing, f"public names without an entry in docs/reference/: {missing}"


@pytest.mark.slow
def test_every_listed_member_exists():
    """A ``members:`` entry that names nothing renders nothing, silently: the listed names must exist (griffe reads
    the whole package: about 1.5 s)."""
    griffe = pytest.importorskip("griffe")
    package = griffe.load("learned_metrics", search_paths=[str(ROOT / "src")])
    absent = []
    for identifier, members in reference_entries().items():
        obj = package[identifier.removeprefix("learned_metrics.")]
        absent += [f"{identifier}.{name}" for name in members or () if name not in obj.members]
    assert not absent, f"docs/reference/ lists members that do not exist: {absent}"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the docs extra)")
def test_mkdocs_build_strict_passes(tmp_path):
    """The whole site, as `make docs` builds it: about 5 s on 2 CPU cores (10 s while other work ran)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, f"mkdocs build --strict failed after {elapsed:.1f} s:\n{done.stderr[-4000:]}"
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "learned-metrics" in home and 'href="safety/"' in home  # README as the home page, docs/ links relinked
    scoring = (site / "reference" / "scoring" / "index.html").read_text(encoding="utf-8")
    assert 'id="learned_metrics.scoring.scorer.load_scorer"' in scoring
    assert ":func:" not in scoring and ":meth:" not in scoring  # Sphinx roles rendered as code or links
    assert 'href="bench/#scoring"' in home and 'href="notebook/"' in home  # README's repository files as pages
    assert not unresolved_links(site), "links in the built site that lead nowhere"


def unresolved_links(site: Path) -> list[str]:
    """Every ``href`` of every built page that names no file of the site (``x/`` -> ``x/index.html``; ``/x`` from
    the site's root, as the 404 page writes them)."""
    missing = []
    for page in site.rglob("*.html"):
        for target in re.findall(r'href="([^"#?]*)[^"]*"', page.read_text(encoding="utf-8")):
            if not target or re.match(r"[a-z]+:", target):
                continue
            path = (site / target.lstrip("/") if target.startswith("/") else page.parent / target).resolve()
            if not (path / "index.html" if target.endswith("/") or path.is_dir() else path).exists():
                missing.append(f"{page.relative_to(site)} -> {target}")
    return missing


def test_unresolved_links_finds_a_dead_link(tmp_path):
    """Control for the site walk: a page linking to a page that is not there is reported, a good link is not."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<a href="../b/">b</a> <a href="../a/">a</a> <a href="#x">x</a>')
    assert unresolved_links(tmp_path) == [f"{Path('a/index.html')} -> ../b/"]


def test_readme_links_to_repository_files_become_site_pages():
    """README's links to bench/README.md (anchors kept) and the notebook point at the pages the hook generates;
    a link to another file outside docs/ becomes its repository path in code (the site has no copy of it)."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import readme_home
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    text = ("[figures](bench/README.md#scoring) [nb](examples/notebook.ipynb) [guide](docs/scoring.md#x) "
            "[script](bench/bench_scoring.py) [web](https://example.org/a.md)")
    assert readme_home.readme_for_site(text) == (
        "[figures](bench.md#scoring) [nb](notebook.md) [guide](scoring.md#x) "
        "script (`bench/bench_scoring.py` in the repository) [web](https://example.org/a.md)")
    page = readme_home.notebook_markdown({"cells": [
        {"cell_type": "markdown", "source": ["# Title"]},
        {"cell_type": "code", "source": ["print(1)"], "outputs": [{"output_type": "stream", "text": ["1\n"]}]},
        {"cell_type": "code", "source": "x", "outputs": [{"output_type": "execute_result",
                                                           "data": {"text/plain": ["0.5"]}}]}]})
    assert page == "# Title\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\n```python\nx\n```\n\n```text\n0.5\n```\n"


def test_make_docs_installs_nothing(tmp_path):
    """``make docs`` builds with the environment there is: its recipe runs no pip and no venv creation, even when
    pyproject.toml is newer than the venv's install stamp (it once re-ran ``make venv``, which needs the network)."""
    recipe = subprocess.run(["make", "-n", "-W", "pyproject.toml", "docs"], cwd=ROOT, capture_output=True, text=True)
    assert recipe.returncode == 0, recipe.stderr
    assert "mkdocs build --strict" in recipe.stdout
    assert "pip" not in recipe.stdout and "-m venv" not in recipe.stdout


def test_make_docs_without_mkdocs_says_what_to_run(tmp_path):
    """Control: with no mkdocs in the venv it stops with one line naming the command that installs it."""
    done = subprocess.run(["make", "docs", f"VENV={tmp_path / 'no-venv'}"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.startswith("make docs:")]
    assert len(lines) == 1 and "make venv" in lines[0]
