"""Rule: every settings object of the package parses strictly (issue 28, item 2), found by walking the package.

tests/hostile/test_strict_option_parsing.py walks the scoring and meta-eval declarations field by field with their
CLI-specific controls; this walk finds *every* :class:`~learned_metrics.settings.Settings` subclass any module
declares (data prep, export, training callbacks, file runs, engines, ...), so a surface added later is walked without
anyone listing it. Each field gets the wrong values of its declared kind; the refusal is one-line UserError naming
the field; the class's defaults are the control.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import numpy as np
import pytest

import learned_metrics
from learned_metrics.errors import UserError
from learned_metrics.settings import Settings

WRONG = {
    "flag": ["false", "no", "true", 0, 1, 0.0, "", np.float64(1.0)],
    "int": [True, 2.5, float("nan"), float("inf"), "3"],
    "fraction": [True, float("nan"), float("inf"), 1.5, -0.5, "0.5"],
    "share": [True, float("nan"), float("inf"), 1.5, -0.5, "0.5"],
    "number": [True, float("nan"), float("inf"), "0.5"],
    "list": [{"a", "b"}, frozenset({"a"}), dict.fromkeys(["a", "b"]).keys()],
    "choice": ["surely-not-a-choice", 3, True],
}


def _all_settings() -> list[type[Settings]]:
    for module in pkgutil.walk_packages(learned_metrics.__path__, "learned_metrics."):
        if module.name.endswith("__main__"):  # runs the CLI
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed (its own tests cover it)
            continue
    found, todo = [], list(Settings.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({cls for cls in found if cls.__module__.startswith("learned_metrics.")},
                  key=lambda c: (c.__module__, c.__name__))


SETTINGS = _all_settings()
FIELDS = [(cls, spec) for cls in SETTINGS for spec in dataclasses.fields(cls) if spec.metadata["kind"] in WRONG]


def test_the_walk_finds_the_settings_of_every_surface():
    names = {cls.__name__ for cls in SETTINGS}
    assert {"ScoringOptions", "FileRun"} <= names and len(SETTINGS) >= 8, names
    assert {kind for _, spec in FIELDS for kind in [spec.metadata["kind"]]} >= {"flag", "int", "choice", "list"}


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__name__)
def test_every_settings_class_builds_from_its_defaults(cls):
    assert cls() == cls.from_keywords()  # the control: the declared defaults pass their own parsers


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__name__)
def test_every_field_refuses_the_wrong_kinds_of_value_naming_itself(cls):
    for spec in dataclasses.fields(cls):
        names = (spec.name, "--" + spec.name.replace("_", "-"))
        for value in WRONG.get(spec.metadata["kind"], []):
            with pytest.raises(UserError) as info:
                cls.from_keywords(**{spec.name: value})
            message = str(info.value)
            assert "\n" not in message and any(name in message for name in names), (spec.name, value, message)
        if spec.metadata["kind"] == "int" and spec.metadata["minimum"] is not None:
            with pytest.raises(UserError, match=spec.name.replace("_", "[_ -]")):
                cls.from_keywords(**{spec.name: spec.metadata["minimum"] - 1})


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__name__)
def test_every_list_of_choices_refuses_an_empty_list_naming_itself(cls):
    """``--stats ''`` said 'unknown statistic(s) []' and named no option on the command line."""
    for spec in dataclasses.fields(cls):
        if spec.metadata["kind"] == "list" and spec.metadata["choices"]:
            with pytest.raises(UserError, match="takes at least one of") as info:
                cls.from_keywords(**{spec.name: []})
            assert spec.name in str(info.value) or spec.name.replace("_", "-") in str(info.value)
