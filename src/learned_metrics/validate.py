"""One validation family for everything a user hands us: row fields, API arguments, option values, names.

One rule written once says the same thing everywhere (a :class:`~learned_metrics.errors.UserError` naming file, row
and field)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import unicodedata
from collections.abc import Callable, Iterator, Mapping, MappingView, Sequence, Set
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, TypeVar

from learned_metrics.errors import UserError, first_line

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")

# Characters that render as nothing: categories Cc/Cf (controls, zero-width space/joiners, BOM, soft hyphen),
# Z* (spaces and separators), Mn (combining marks and variation selectors with no base), plus letters and
# symbols that are blank by design (Hangul fillers, the blank Braille pattern).
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn"})
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: empty, whitespace, or only zero-width/invisible characters."""
    return all(c.isspace() or c in _INVISIBLE_EXTRA or unicodedata.category(c) in _INVISIBLE_CATEGORIES for c in text)


def is_missing(value: Any) -> bool:
    """``None`` (JSON null) or a float NaN (pandas' missing value)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def field_value(row: dict[str, Any], name: str, *, path: object = None, row_number: int | None = None) -> Any:
    """``row[name]``; a missing field names the fields the row does have."""
    if name not in row:
        available = ", ".join(sorted(map(str, row))) or "none"
        raise UserError(f"missing field (fields present: {available})", path=path, row=row_number, field=name)
    return row[name]


def text(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> str:
    """A non-blank string (kept exactly as given)."""
    if is_missing(value):
        raise UserError("value is missing (null, None or NaN)", path=path, row=row, field=field)
    if not isinstance(value, str):
        raise UserError(f"expected text, got {type(value).__name__}", path=path, row=row, field=field)
    if is_blank(value):
        raise UserError("text is empty (or only invisible characters)", path=path, row=row, field=field)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # a JSON "\ud800" escape without its pair: tokenizers take no such text
            raise UserError(f"holds a lone surrogate ({value[exc.start]!r}), which is not Unicode text", path=path,
                            row=row, field=field) from None
    return value


def sentences(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> list[str]:
    """A list of strings (CSV cells hold it as JSON text); blank sentences dropped, at least one left."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise UserError("expected a JSON list of strings", path=path, row=row, field=field) from None
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(s, str) for s in value):
        raise UserError("expected a list of strings", path=path, row=row, field=field)
    kept = [s.strip() for s in value if not is_blank(s)]
    if not kept:
        raise UserError("no non-empty sentences", path=path, row=row, field=field)
    return kept


def number(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> float | None:
    """A finite number as float; ``None`` when null, empty or NaN (the caller decides: error or drop)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise UserError(f"expected a number, got {str(value).lower()}", path=path, row=row, field=field)
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return None
        try:
            value = float(stripped)
        except ValueError:
            raise UserError(f"expected a number, got {stripped[:40]!r}", path=path, row=row, field=field) from None
    if not isinstance(value, (int, float)):
        raise UserError(f"expected a number, got {type(value).__name__}", path=path, row=row, field=field)
    try:
        value = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise UserError(f"number out of range ({len(str(abs(value)))} digits)", path=path, row=row,
                        field=field) from None
    if math.isinf(value):
        raise UserError("value is infinite", path=path, row=row, field=field)
    return None if math.isnan(value) else value


_TRUE, _FALSE = {"1", "1.0", "true", "yes"}, {"0", "0.0", "false", "no"}


def binary_label(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> int:
    """1/0, true/false or yes/no (text or JSON)."""
    if isinstance(value, (int, float)) and value in (0, 1):  # bools too
        return int(value)
    lowered = str(value).strip().lower()
    if lowered in _TRUE or lowered in _FALSE:
        return int(lowered in _TRUE)
    raise UserError(f"expected a 0/1 label, got {str(value)[:40]!r}", path=path, row=row, field=field)


def key(value: Any, *, path: object = None, row: int | None = None, field: str | None = None) -> str:
    """An identifier as text (``1``, ``1.0`` and ``"1"`` are the same key); empty is an error."""
    if is_missing(value) or (isinstance(value, str) and is_blank(value)):
        raise UserError("key is empty", path=path, row=row, field=field)
    if isinstance(value, (list, dict)):
        raise UserError(f"expected a key (text or number), got {type(value).__name__}", path=path, row=row, field=field)
    return str(int(value) if isinstance(value, float) and value.is_integer() else value).strip()


def _in_row(parse: Callable[..., T]) -> Callable[..., T]:
    """``parse`` of ``row[name]``: a missing field names the fields present, a refusal the file, row and field."""

    def read(row: dict[str, Any], name: str, *, path: object, row_number: int) -> T:
        return parse(field_value(row, name, path=path, row_number=row_number), path=path, row=row_number, field=name)

    return read


row_text = _in_row(text)
row_sentences = _in_row(sentences)
row_number_value = _in_row(number)
row_key = _in_row(key)


def text_list(values: Any, name: str, parse: Callable[..., Any] = text, what: str = "strings") -> list[Any]:
    """Texts (or what ``parse`` reads) as a list, tuple, array or Series from the API; errors name it and the place."""
    if hasattr(values, "tolist") and not isinstance(values, str):
        values = values.tolist()
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise UserError(f"{name} must be a list of {what}, got {type(values).__name__}")
    return [parse(value, row=i, field=name) for i, value in enumerate(values, start=1)]


def sentence_lists(values: Any, name: str) -> list[list[str]]:
    """A list of sentence lists passed to the Python API."""
    return text_list(values, name, sentences, "sentence lists")


def one_of(value: Any, choices: Sequence[str], what: str, *, also: str | None = None) -> Any:
    """``value`` if it is one of ``choices``, else one line naming ``what`` and the choices (fixed-choice options)."""
    if not isinstance(value, str) or value not in choices:
        raise UserError(f"unknown {what} '{value}', expected one of: {', '.join(choices)}{_also(also)}")
    return value


# Option values, the strict parsers of every settings declaration: ``what`` starts the message (a keyword, or a
# --flag), ``also`` is the option's other spelling in brackets, so a refusal names both the keyword and the flag.


def _also(also: str | None) -> str:
    return f" ({also})" if also else ""


def flag(value: Any, what: str, *, also: str | None = None) -> bool:
    """True or False only: ``"false"``, ``"no"``, ``0`` and ``None`` are refused, never read by their truthiness
    (``allow_pickle="false"`` once loaded a pickle). numpy's bool counts as a bool."""
    if isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    raise UserError(f"{what} takes True or False, got {_shown(value)}{_also(also)}")


def ordered(value: Any, what: str, *, also: str | None = None) -> tuple[Any, ...]:
    """An option whose order means something: comma-separated text (blanks dropped), or a list, tuple, array, Series
    or generator as given; sets, dicts and dict views are refused (their iteration order is not the user's)."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if not isinstance(value, (Set, Mapping, MappingView)) and hasattr(value, "tolist"):
        value = value.tolist()  # a numpy array, a pandas Series or Index
    if isinstance(value, (Set, Mapping, MappingView)) or not isinstance(value, (Sequence, Iterator)):
        raise UserError(f"{what} takes an ordered list (a list, a tuple or comma-separated text), got "
                        f"{type(value).__name__} {_shown(value)}: a set or a dict has no order of yours{_also(also)}")
    return tuple(value)


def int_at_least(value: Any, minimum: int, what: str, *, maximum: int | None = None, also: str | None = None) -> int:
    """An integer in ``[minimum, maximum]``: bools, text, NaN/inf, fractions refused; numpy ints, whole floats taken."""
    allowed = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
    whole = isinstance(value, Integral) or isinstance(value, Real) and math.isfinite(value) and value % 1 == 0
    if isinstance(value, bool) or not whole or int(value) < minimum or maximum is not None and int(value) > maximum:
        raise UserError(f"{what} must be an integer {allowed}, got {_shown(value)}{_also(also)}")
    return int(value)


def _real(value: Any, what: str, also: str | None, ok: Callable[[float], bool], allowed: str) -> float:
    """A number ``ok`` accepts, as float; bools, text and NaN refused with ``what`` and ``allowed`` named."""
    if isinstance(value, bool) or not isinstance(value, Real) or not ok(value):
        raise UserError(f"{what} must be {allowed}, got {_shown(value)}{_also(also)}")
    return float(value)


def number_in(value: Any, what: str, allowed: str, ok: Callable[[float], bool]) -> float:
    """A number ``ok`` accepts (``allowed`` says which, for the message), as float."""
    return _real(value, what, None, ok, allowed)


def finite(value: Any, what: str, *, also: str | None = None) -> float:
    """A finite number as float; bools, text, NaN and infinities refused."""
    return _real(value, what, also, math.isfinite, "a finite number")


def share(value: Any, what: str, *, also: str | None = None) -> float:
    """A share in ``[0, 1)`` (a split's fraction of the documents)."""
    return _real(value, what, also, lambda v: 0 <= v < 1, "in [0, 1)")


def fraction(value: Any, what: str, *, also: str | None = None) -> float:
    """A level strictly between 0 and 1 (alpha, confidence)."""
    return _real(value, what, also, lambda v: 0 < v < 1, "in (0, 1)")


def _shown(value: Any) -> str:
    """A refused value as the message quotes it: its repr, cut at 60 characters."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def numbers(values: Any, what: str) -> np.ndarray:
    """Scores from the API as a float array (NaN kept: absent); text, bools, infinities: one line naming the place."""
    import numpy as np

    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        array = None
    if array is None or np.isinf(array).any():
        flat = np.asarray(values, dtype=object).ravel()
        for index, value in enumerate(flat, start=1):
            if value is None or isinstance(value, float) and math.isnan(value):
                continue
            number(value, field=f"{what}[{index}]")  # raises on text, bools, infinities
        raise UserError(f"{what}: expected numbers, got {type(values).__name__}")
    return array


def _axes(value: Any) -> list[tuple[str, Any]]:
    return [("index", value.index), *([("columns", value.columns)] if getattr(value, "ndim", 1) == 2 else [])]


def by_label(*named: tuple[str, Any], keyed_by_columns: Callable[[Any], bool] = lambda value: False,
             same_as_given: bool = False) -> list[Any]:
    """The values, pandas ones aligned by label to the first pandas one (index, and columns for two DataFrames), never
    by position (different rows compared with exit 0); a duplicate label or differing labels are refused by name.
    ``same_as_given``: pandas values whose labels are all the same, repeats included, are paired as given."""
    values = [value for _, value in named]
    labelled = [i for i, value in enumerate(values)
                if hasattr(value, "index") and hasattr(value, "reindex") and not keyed_by_columns(value)]
    if same_as_given and all(values[i].index.equals(values[labelled[0]].index) for i in labelled):
        return values
    for i in labelled:
        for axis, labels in _axes(values[i]):
            if not labels.is_unique:
                raise UserError(f"{named[i][0]}: duplicate {axis} label {labels[labels.duplicated()][0]!r}; pandas "
                                "inputs are paired by their labels, so each needs a distinct one")
    reference = dict(_axes(values[labelled[0]])) if labelled else {}  # the first pandas value's labels
    for i in labelled[1:]:
        wanted = {axis: reference[axis] for axis, _ in _axes(values[i]) if axis in reference}
        for axis, labels in _axes(values[i]):
            # pandas' set operation, not Python sets: two NaN labels are one label there (Python: two objects)
            differ = [] if axis not in wanted else labels.difference(wanted[axis], sort=False).tolist() or \
                wanted[axis].difference(labels, sort=False).tolist()
            if differ:
                raise UserError(f"{named[labelled[0]][0]} and {named[i][0]}: their pandas {axis} hold different labels "
                                f"({differ[0]!r} is in one only); pandas inputs are paired by label, "
                                "never by position: give both the same labels")
        values[i] = values[i].reindex(**wanted)
    return values


@contextlib.contextmanager
def library_errors(what: str, *, path: object = None, kinds: type | tuple[type, ...] = Exception) -> Iterator[None]:
    """A library's failure inside the block (one of ``kinds``: libraries raise many types for a damaged file) as one
    line, ``what (its first line)`` naming ``path``; a UserError of ours passes unchanged."""
    try:
        yield
    except UserError:
        raise
    except kinds as exc:
        raise UserError(f"{what} ({first_line(exc)})", path=path) from None


def plain_file_name(name: Any, *, what: str, path: object = None) -> str:
    """A bare file name (``vocab.json``) from inside an artefact, before it becomes a path: no separators, ``..``,
    absolute paths, drive letters or control characters (``../../x`` would write outside the requested folder)."""
    if not isinstance(name, str) or not name or name in (".", ".."):
        raise UserError(f"{what}: {name!r} is not a plain file name", path=path)
    bad = "/" in name or "\\" in name or os.path.isabs(name) or (len(name) > 1 and name[1] == ":")
    if bad or any(unicodedata.category(c) == "Cc" for c in name):
        raise UserError(f"{what}: {name!r} is not a plain file name (no folders, no '..', no absolute paths)",
                        path=path)
    return name


def _cli_number(read: Callable[[str], T], expected: str, allowed: str, ok: Callable[[T], bool]) -> Callable[[str], T]:
    """An argparse ``type`` for a number ``ok`` accepts; the parser reports ``expected`` / ``allowed``."""

    def parse(text: str) -> T:
        try:
            value = read(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text}")
        return value

    parse.__name__ = read.__name__
    return parse


def int_option(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[minimum, maximum]``; the parser reports the allowed range."""
    allowed = f"an integer >= {minimum}" if maximum is None else f"an integer between {minimum} and {maximum}"
    return _cli_number(int, allowed, allowed, lambda v: v >= minimum and (maximum is None or v <= maximum))


seconds_option = _cli_number(float, "a number of seconds > 0", "a number of seconds > 0", lambda v: 0 < v < math.inf)
fraction_option = _cli_number(float, "a number in [0, 1)", "in [0, 1)", lambda v: 0 <= v < 1)  # a share
level_option = _cli_number(float, "a number in (0, 1)", "in (0, 1)", lambda v: 0 < v < 1)  # alpha, confidence


def renamed_keywords(**old_to_new: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Keep old keyword spellings of an API function working one release: ``@renamed_keywords(doc="doc_field")``
    passes ``doc=`` on as ``doc_field=`` with a DeprecationWarning naming both; both spellings at once is an error."""
    import functools
    import warnings

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise UserError(f"{function.__name__}() got both {old}= and {new}=; pass {new}= only")
                warnings.warn(f"{function.__name__}({old}=...) is deprecated and will be removed in the next "
                              f"release; use {new}=", DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper

    return decorate
