"""mkdocs hook: the site's home page is README.md itself, and the benchmark figures (``bench/README.md``) and the
notebook (``examples/notebook.ipynb``) are pages of their own, all generated at build time (no copy to keep in sync).

README's links are written for GitHub, relative to the repository root. On the site the home page sits in docs/,
so ``docs/X.md`` links become ``X.md``, links to ``bench/README.md`` and the notebook point at their generated
pages (anchors kept), and mkdocs checks every one of them, anchors included, under ``--strict``. A link to any
other file outside docs/ becomes its text and the repository path in code, since the site has no copy of it.
The notebook page shows the cells and the outputs saved in the file, as a code host shows them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.structure.files import File

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")
# Repository files that become site pages: the path README links to -> the page generated from it.
PAGES = {"bench/README.md": "bench.md", "examples/notebook.ipynb": "notebook.md"}


def readme_for_site(text: str) -> str:
    """README's markdown with its links pointed at the site's pages (see the module docstring)."""

    def relink(match: re.Match[str]) -> str:
        text, target = match["text"], match["target"]
        if target.startswith(("#", "http://", "https://", "mailto:")):
            return match[0]
        if target.startswith("docs/"):
            return f"[{text}]({target.removeprefix('docs/')})"
        path, hash_, anchor = target.partition("#")
        if path in PAGES:
            return f"[{text}]({PAGES[path]}{hash_}{anchor})"
        return f"{text} (`{target}` in the repository)"

    return _LINK.sub(relink, text)


def _source(cell: dict) -> str:
    return "".join(cell.get("source", ""))


def _output_text(output: dict) -> str:
    """The text a code host shows for one saved output: a stream's text or a result's ``text/plain``."""
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    return "".join(output.get("data", {}).get("text/plain", ""))


def notebook_markdown(notebook: dict) -> str:
    """A notebook as a page: markdown cells as they are, code cells as Python blocks, saved outputs as text blocks."""
    parts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append(_source(cell))
        elif cell["cell_type"] == "code":
            parts.append(f"```python\n{_source(cell)}\n```")
            parts.extend(f"```text\n{text.rstrip()}\n```" for text in map(_output_text, cell.get("outputs", []))
                         if text.strip())
    return "\n\n".join(parts) + "\n"


def on_files(files, config):
    root = Path(config["config_file_path"]).parent
    pages = {"index.md": readme_for_site((root / "README.md").read_text(encoding="utf-8")),
             "bench.md": (root / "bench" / "README.md").read_text(encoding="utf-8"),
             "notebook.md": notebook_markdown(json.loads((root / "examples" / "notebook.ipynb").read_text("utf-8")))}
    for name, content in pages.items():
        files.append(File.generated(config, name, content=content))
    return files
