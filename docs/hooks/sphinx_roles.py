"""griffe extension: the package's docstrings use Sphinx roles (``:func:`load_grid```, ``:meth:`~Scorer.score```);
mkdocstrings renders Markdown, where they would show as ``:func:`` followed by code. Each role becomes its code
text, inside an *optional* cross-reference when the name resolves, from where the docstring stands, to a full path
(``learned_metrics.scoring.scorer.Scorer.score``): a link where that object is on the site, plain code where it is
not (a private name, a module the reference leaves out), and never a warning under ``mkdocs build --strict``. A name
that does not resolve stays plain code (it is not handed to autorefs, which would match a page heading of the same
name). The role syntax follows Sphinx: ``~`` shows the last component, ``title <target>`` shows the title, a
leading ``.`` is relative to the current package.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Extension, Object

_ROLE = re.compile(r":(?:py:)?(?:func|meth|mod|class|attr|data|exc|obj|const):`(?P<body>[^`]+)`")


def qualify(obj: Object, target: str) -> str | None:
    """The full path ``target`` names in ``obj``'s scope, or None."""
    if target.startswith("."):
        module = obj.module
        package = module.path if module.is_init_module else module.parent.path
        return f"{package}.{target.lstrip('.')}"
    if target.startswith("learned_metrics."):
        return target
    first, _, rest = target.partition(".")
    try:
        path = obj.resolve(first)
    except Exception:  # griffe's NameResolutionError, or an alias it cannot follow
        return None
    return f"{path}.{rest}" if rest else path


def replace_roles(text: str, obj: Object) -> str:
    """``text`` with every Sphinx role turned into code, linked where it resolves (see the module docstring)."""

    def replace(match: re.Match[str]) -> str:
        body = match["body"].strip()
        titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body)
        if titled:
            title, target = titled["title"], titled["target"].lstrip("~")
        else:
            target = body.lstrip("~")
            title = target.rsplit(".", 1)[-1] if body.startswith("~") else target.lstrip(".")
        code = f"<code>{html.escape(title)}</code>"
        path = qualify(obj, target)
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path, quote=True)}" optional>{code}</autoref>'

    return _ROLE.sub(replace, text)


class SphinxRoles(Extension):
    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        # after the tree is built: names resolve, and a module's docstring is set
        if obj.docstring is not None:
            obj.docstring.value = replace_roles(obj.docstring.value, obj)
