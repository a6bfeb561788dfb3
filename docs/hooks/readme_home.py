"""mkdocs hook: the site's home page is README.md itself, generated at build time (no copy to keep in sync).

README's links are written for GitHub, relative to the repository root. On the site the home page sits in docs/,
so ``docs/X.md`` links become ``X.md`` (mkdocs then checks them, anchors included, under ``--strict``), and links to
files outside docs/ (``bench/README.md``, ``examples/notebook.ipynb``) become their text and the repository path
in code, since the site has no copy of those files to link to.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")


def readme_for_site(text: str) -> str:
    """README's markdown with its links pointed at the site's pages (see the module docstring)."""

    def relink(match: re.Match[str]) -> str:
        text, target = match["text"], match["target"]
        if target.startswith(("#", "http://", "https://", "mailto:")):
            return match[0]
        if target.startswith("docs/"):
            return f"[{text}]({target.removeprefix('docs/')})"
        return f"{text} (`{target}` in the repository)"

    return _LINK.sub(relink, text)


def on_files(files, config):
    readme = Path(config["config_file_path"]).parent / "README.md"
    files.append(File.generated(config, "index.md", content=readme_for_site(readme.read_text(encoding="utf-8"))))
    return files
