"""One settings object per surface: a frozen dataclass whose fields are declared once, with :func:`setting`.

The CLI flags, the API keywords and their strict parsing, the JSON ``settings`` block and what changes results all come
from that declaration, so adding a field is the only step for it to appear everywhere. Importable without torch."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from learned_metrics import validate
from learned_metrics.errors import UserError

KINDS = ("flag", "int", "choice", "list", "share", "fraction", "number", "text")
S = TypeVar("S", bound="Settings")
_PARSERS = {"flag": validate.flag, "share": validate.share, "fraction": validate.fraction, "number": validate.finite}
_CLI_TYPES = {"share": validate.fraction_option, "fraction": validate.level_option, "number": float}


def setting(default: Any, help: str, *, minimum: int | None = None, maximum: int | None = None, flag: bool = False,
            choices: Sequence[str] | None = None, check: Callable[[Any], Any] | None = None, scores: bool = True,
            kind: str | None = None, cli: bool = True, metavar: str | None = None, **metadata: Any) -> Any:
    """A field and what every face of the surface needs (help, allowed values or a parsing ``check``, the strict
    parser ``kind`` of :data:`KINDS`, ``scores=False`` when no value changes a result, ``cli=False`` for no flag);
    metadata read: ``from_text``, ``noun`` (in refusals), ``aliases`` (old flags), ``argparse`` (more keywords)."""
    kind = kind or ("flag" if flag else "choice" if choices is not None else "int" if minimum is not None else "text")
    if kind not in KINDS:
        raise ValueError(f"setting kind {kind!r} is not one of {KINDS}")
    return field(default=default, metadata={"help": help, "minimum": minimum, "maximum": maximum,
                                            "choices": choices, "flag": flag, "check": check, "scores": scores,
                                            "kind": kind, "cli": cli, "metavar": metavar, **metadata})


def flag_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_setting(spec: Any, value: Any, flag_first: bool = False) -> Any:
    """One field's value through the strict parser of its kind; refusals name the keyword and the --flag (the flag
    first and ``name=`` in brackets when ``flag_first``; no flag for a ``cli=False`` field: it has none)."""
    meta, name, flag = spec.metadata, spec.name, flag_name(spec.name) if spec.metadata["cli"] else None
    also = f" ({flag})" if flag else ""
    if flag_first and flag:
        name, flag, also = flag, f"{name}=", f" ({name}=)"
    if value is None and (spec.default is None or "None" in str(spec.type)):  # as declared: ``seed: int | None``
        return None
    kind = meta["kind"]
    if kind in _PARSERS:
        value = _PARSERS[kind](value, name, also=flag)
    elif kind == "int":
        value = validate.int_at_least(value, meta["minimum"], name, maximum=meta["maximum"], also=flag)
    elif kind == "choice":
        value = validate.one_of(value, meta["choices"], meta.get("noun") or spec.name.replace("_", " "), also=flag)
    elif kind == "list":
        value = validate.ordered(value, name, also=flag)
        unknown = [item for item in value if item not in (meta["choices"] or value)]
        if meta["choices"] and not value:  # an empty list names the option itself ('[]' named nothing)
            raise UserError(f"{name} takes at least one of: {', '.join(meta['choices'])}{also}")
        if unknown:
            raise UserError(f"unknown {meta.get('noun') or name} {unknown}, expected some of: "
                            f"{', '.join(meta['choices'])}{also}")
    elif value is None:
        raise UserError(f"{name} takes a value, got None{also}")
    return meta["check"](value) if meta["check"] is not None else value


@dataclass(frozen=True)
class Settings:
    """Base of every surface's settings object. ``show_defaults``: help lines end with the default; ``int_metavar``
    names an integer's value in the help; ``flag_first``: refusals start with the --flag."""

    show_defaults: ClassVar[bool] = False
    int_metavar: ClassVar[str | None] = None
    flag_first: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for spec in fields(self):
            object.__setattr__(self, spec.name, parse_setting(spec, getattr(self, spec.name), self.flag_first))

    @classmethod
    def from_keywords(cls: type[S], **keywords: Any) -> S:
        """Settings from API keywords; an unknown name is one line listing the known ones."""
        cls.refuse_unknown(keywords)
        return cls(**keywords)

    @classmethod
    def refuse_unknown(cls, keywords: Iterable[str], also: Iterable[str] = ()) -> None:
        """One line naming the keywords that are neither fields nor ``also`` (a function's own), and the known ones."""
        known = {spec.name for spec in fields(cls)} | set(also)
        unknown = sorted(set(keywords) - known)
        if unknown:
            raise UserError(f"unknown {cls.surface()} option(s) {unknown}; known: {', '.join(sorted(known))}")

    @classmethod
    def surface(cls) -> str:
        """How messages name the surface: ``ScoringOptions`` -> ``scoring``, ``ExportSettings`` -> ``export``."""
        name = cls.__name__.removesuffix("Options").removesuffix("Settings")
        return "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()

    @classmethod
    def add_arguments(cls, parser: Any, where: Callable[[Any], bool] | None = None) -> None:
        """One ``--flag`` per field (those ``where`` keeps): type, default and choices from the declaration."""
        for spec in fields(cls):
            meta = spec.metadata
            if not meta["cli"] or (where is not None and not where(spec)):
                continue
            if meta["flag"]:  # a flag on by default is turned off by its name with a no- prefix
                on = spec.default is True
                parser.add_argument(flag_name(("no_" if on else "") + spec.name), dest=spec.name, help=meta["help"],
                                    action="store_false" if on else "store_true")
                continue
            kind, kwargs = meta["kind"], {"default": spec.default, "help": cls._help(spec)}
            if meta["choices"] is not None and kind == "choice":
                kwargs["choices"] = meta["choices"]
            elif kind == "int":
                kwargs["type"] = validate.int_option(meta["minimum"], meta["maximum"])
            elif kind in _CLI_TYPES:
                kwargs["type"] = _CLI_TYPES[kind]
            if meta["metavar"] or (kind == "int" and cls.int_metavar):
                kwargs["metavar"] = meta["metavar"] or cls.int_metavar
            kwargs.update(meta.get("argparse") or {})
            if meta.get("aliases"):  # old spellings: same destination, hidden, a note when used
                parser.add_argument(*meta["aliases"], dest=spec.name, type=kwargs.get("type"), help=argparse.SUPPRESS,
                                    action=_renamed(flag_name(spec.name)), default=argparse.SUPPRESS)
            parser.add_argument(flag_name(spec.name), dest=spec.name, **kwargs)

    @classmethod
    def _help(cls, spec: Any) -> str:
        shown, text = spec.default, spec.metadata["help"]
        if not cls.show_defaults or shown is None or "(default" in text:
            return text
        shown = ",".join(shown) if isinstance(shown, tuple) else shown
        return f"{text} (default: {shown})".replace("%", "%%")

    @classmethod
    def from_arguments(cls: type[S], args: argparse.Namespace, **overrides: Any) -> S:
        """The settings a parsed command line asks for (fields the parser does not have keep their defaults)."""
        values = {spec.name: _typed(spec, getattr(args, spec.name)) for spec in fields(cls) if hasattr(args, spec.name)}
        return cls(**{**values, **overrides})

    def narrow(self, cls: type[S], **changes: Any) -> S:
        """These values as the settings of ``cls``, a part of this surface (an analysis, a table's test), changed."""
        return cls(**{**{spec.name: getattr(self, spec.name) for spec in fields(cls)}, **changes})

    def to_json(self) -> dict[str, Any]:
        """Every field as a JSON value, in declaration order (tuples as lists)."""
        return {spec.name: _plain(getattr(self, spec.name)) for spec in fields(self)}

    def affecting(self, where: Callable[[Any], bool] | None = None) -> dict[str, Any]:
        """Fields that can change a result (not ``scores=False``) as JSON; None where ``where`` rejects it."""
        return {spec.name: _plain(getattr(self, spec.name)) if where is None or where(spec) else None
                for spec in fields(self) if spec.metadata["scores"]}


def _renamed(new_flag: str) -> type[argparse.Action]:
    class Renamed(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
            print(f"note: {option_string} is deprecated and will be removed in the next release; use {new_flag}",
                  file=sys.stderr)
            setattr(namespace, self.dest, values)

    return Renamed


def _typed(spec: Any, value: Any) -> Any:
    """A command line's text as the API takes it, where the two differ (a joiner's backslash escapes): decoded here,
    after argparse, so a refusal is the declaration's one line rather than argparse's "invalid value"."""
    from_text = spec.metadata.get("from_text")
    return from_text(value) if from_text is not None and isinstance(value, str) else value


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def takes(cls: type[Settings]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A function whose keywords are ``cls``'s fields: ``function(..., settings)`` is called as ``function(...,
    resamples=200)`` (parsed by ``cls.from_keywords``) or with a ``settings=`` object; its signature lists the
    fields with their defaults, so a field added to ``cls`` is a keyword with no other edit. A keyword that is
    neither the function's nor a field is refused as ``from_keywords`` refuses it (one line, the known names)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        names = [spec.name for spec in fields(cls)]
        signature, keyword = inspect.signature(function), inspect.Parameter.KEYWORD_ONLY
        own = [p for p in signature.parameters.values() if p.name != "settings"]
        open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in own)
        by_name = [p.name for p in own if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, keyword)]

        @functools.wraps(function)
        def wrapper(*args: Any, settings: Settings | None = None, **keywords: Any) -> Any:
            given = {name: keywords.pop(name) for name in names if name in keywords}
            if not open_ended:  # a misspelled keyword: one line naming it and every known one
                cls.refuse_unknown(keywords, also=by_name)
            if settings is None:
                settings = cls.from_keywords(**given)
            elif not isinstance(settings, cls):
                raise UserError(f"{function.__name__}(settings=...) takes a {cls.__name__}, got "
                                f"{type(settings).__name__}")
            elif given:
                settings = dataclasses.replace(settings, **given)
            return function(*args, settings=settings, **keywords)

        extra = [inspect.Parameter(spec.name, keyword, default=spec.default, annotation=spec.type)
                 for spec in fields(cls) if spec.name not in signature.parameters]
        settings = inspect.Parameter("settings", keyword, default=None)
        fixed = [p for p in own if p.kind is not inspect.Parameter.VAR_KEYWORD]  # **extra stays last
        rest = [p for p in own if p.kind is inspect.Parameter.VAR_KEYWORD]
        wrapper.__signature__ = signature.replace(parameters=[*fixed, *extra, settings, *rest])  # type: ignore[attr-defined]
        wrapper.settings_class = cls  # type: ignore[attr-defined]  (what a caller reads a partial's keywords as)
        return wrapper

    return decorate
