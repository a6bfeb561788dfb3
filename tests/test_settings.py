"""Rule: every surface's options are one Settings declaration, and everything else follows from it.

Walks every :class:`~learned_metrics.settings.Settings` subclass of the package (scoring, data prep, export): each
field is a CLI flag and an API keyword, parsed strictly by its kind (wrong kinds are one ``UserError`` naming the
field), recorded in ``to_json`` and, unless declared ``scores=False``, in ``affecting`` (provenance, fingerprints).
A field added to a subclass appears in all of these with no other edit.
"""

from __future__ import annotations

import argparse
import inspect
import math
from dataclasses import dataclass, fields

import pytest

import learned_metrics.data.choices
import learned_metrics.export
import learned_metrics.scoring.options
import learned_metrics.train.target_metric  # noqa: F401  (registers the subclasses the walk finds)
from learned_metrics.errors import UserError
from learned_metrics.settings import Settings, setting

WRONG = {  # values of the wrong kind for each kind of field
    "flag": ["false", "no", 0, 1, 0.0],
    "int": [True, 2.5, math.nan, math.inf, "3", -1],
    "choice": [3, True, "nope"],
    "list": [{"a", "b"}, frozenset({"a"}), {"a": 1}.keys()],
    "share": [1.0, -0.1, math.nan, True, "0.1"],
}


def surfaces() -> list[type[Settings]]:
    found, todo = [], list(Settings.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({cls for cls in found if cls.__module__.startswith("learned_metrics.")}, key=lambda c: c.__name__)


def cases():
    for cls in surfaces():
        for spec in fields(cls):
            for i, value in enumerate(WRONG.get(spec.metadata["kind"], [])):
                if spec.metadata["kind"] == "int" and value == -1 and (spec.metadata["minimum"] or 0) < 0:
                    continue
                # ids without reprs: a set's repr changes with the hash seed, and pytest-xdist workers must agree
                yield pytest.param(cls, spec.name, value, id=f"{cls.__name__}.{spec.name}-{type(value).__name__}{i}")


def test_the_walk_finds_every_surface():
    names = {cls.__name__ for cls in surfaces()}
    assert {"ScoringOptions", "ShuffleSetSettings", "AnliSettings", "ExportSettings"} <= names


@pytest.mark.parametrize("cls, name, value", list(cases()))
def test_a_value_of_the_wrong_kind_is_one_line_naming_the_field(cls, name, value):
    with pytest.raises(UserError) as caught:
        cls.from_keywords(**{name: value})
    assert name in str(caught.value) or name.replace("_", "-") in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("cls", surfaces(), ids=lambda c: c.__name__)
def test_defaults_are_valid_and_round_trip_through_the_cli_and_json(cls):
    """Controls: the declared defaults parse; a command line with no flags gives the defaults; to_json's values
    are accepted back as keywords (the data-prep CLI calls the builders this way)."""
    default = cls()
    parser = argparse.ArgumentParser()
    cls.add_arguments(parser)
    assert cls.from_arguments(parser.parse_args([])) == default
    assert cls.from_keywords(**default.to_json()) == default


@pytest.mark.parametrize("cls", surfaces(), ids=lambda c: c.__name__)
def test_unknown_keywords_are_refused_with_the_known_ones(cls):
    with pytest.raises(UserError, match="unknown .* option.*known: "):
        cls.from_keywords(not_an_option=1)


def test_a_field_added_to_a_surface_appears_everywhere():
    from learned_metrics.data.choices import ShuffleSetSettings

    @dataclass(frozen=True)
    class Extended(ShuffleSetSettings):
        window: int = setting(3, "sentences per window", minimum=1)
        verbose: bool = setting(False, "say more", flag=True, scores=False)

    parser = argparse.ArgumentParser()
    Extended.add_arguments(parser)
    args = parser.parse_args(["--window", "5", "--verbose"])
    settings = Extended.from_arguments(args)
    assert (settings.window, settings.verbose) == (5, True)  # flags
    assert Extended.from_keywords(window=4).window == 4  # keywords
    assert settings.to_json()["window"] == 5 and settings.to_json()["verbose"] is True  # the settings block
    assert settings.affecting()["window"] == 5 and "verbose" not in settings.affecting()  # scores=False stays out
    with pytest.raises(UserError, match="window"):
        Extended.from_keywords(window=0)  # and its range is checked


def test_a_flag_on_by_default_is_turned_off_with_no():
    from learned_metrics.data.choices import AnliSettings

    parser = argparse.ArgumentParser()
    AnliSettings.add_arguments(parser)
    assert AnliSettings.from_arguments(parser.parse_args(["--no-augment"])).augment is False
    assert AnliSettings.from_arguments(parser.parse_args([])).augment is True
    with pytest.raises(UserError, match="phrase-subset"):
        AnliSettings.from_arguments(parser.parse_args(["--no-augment", "--phrase-subset", "5"]))


def test_the_joiner_is_decoded_from_the_command_line_only():
    from learned_metrics.data.choices import ShuffleSetSettings

    parser = argparse.ArgumentParser()
    ShuffleSetSettings.add_arguments(parser)
    assert ShuffleSetSettings.from_arguments(parser.parse_args(["--joiner", "\\t"])).joiner == "\t"
    assert ShuffleSetSettings.from_keywords(joiner="\\t").joiner == "\\t"  # the API takes the string as given
    with pytest.raises(UserError, match="malformed escape"):
        ShuffleSetSettings.from_arguments(parser.parse_args(["--joiner", "\\x1"]))


# --- the API face: one decorator (settings.takes) gives every API function its settings' keywords ------------------


def _api_functions():
    """(function, its settings class, arguments that reach it): scoring, a meta-eval analysis, data prep, export."""
    from learned_metrics.data.choices import ShuffleSetSettings
    from learned_metrics.data.shuffle_set import build_shuffle_set
    from learned_metrics.export import ExportSettings, export_checkpoint
    from learned_metrics.meta_eval import correlations
    from learned_metrics.meta_eval.options import CorrelationSettings
    from learned_metrics.scoring import load_scorer
    from learned_metrics.scoring.options import ScoringOptions

    human = [[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [3.0, 1.0, 2.0]]
    return [(load_scorer, ScoringOptions, ("/nonexistent/model",)),
            (correlations, CorrelationSettings, (human, human)),
            (build_shuffle_set, ShuffleSetSettings, ("jsonl:/nonexistent.jsonl", "/nonexistent/out")),
            (export_checkpoint, ExportSettings, ("/nonexistent.ckpt", "/nonexistent/out"))]


@pytest.mark.parametrize("index", range(4), ids=["load_scorer", "correlations", "build_shuffle_set",
                                                 "export_checkpoint"])
def test_an_unknown_api_keyword_is_one_user_error_naming_the_known_ones(index):
    """Found before: correlations(..., seeds=1) (a misspelled keyword) was a bare TypeError."""
    function, cls, args = _api_functions()[index]
    own = [name for name in inspect.signature(inspect.unwrap(function)).parameters if name != "settings"]
    known = ", ".join(sorted({spec.name for spec in fields(cls)} | set(own)))  # the function's own names too
    with pytest.raises(UserError, match=rf"unknown .* option.*\['seeds'\]; known: {known}$"):
        function(*args, seeds=1)
    with pytest.raises(UserError, match=f"takes a {cls.__name__}, got dict"):
        function(*args, settings={"seed": 1})
    assert {spec.name for spec in fields(cls)} <= set(inspect.signature(function).parameters)


def test_a_function_with_its_own_open_keywords_can_take_a_settings_class():
    """Found before: decorating ``f(x, *, settings, **extra)`` raised ValueError (the fields were put after
    ``**extra`` in the signature). Its extra keywords pass through; the fields still parse strictly."""
    from learned_metrics.data.choices import ShuffleSetSettings
    from learned_metrics.settings import takes

    @takes(ShuffleSetSettings)
    def build(source, *, settings, **extra):
        return settings, extra

    settings, extra = build("x", seed=3, colour="red")
    assert settings.seed == 3 and extra == {"colour": "red"}
    parameters = list(inspect.signature(build).parameters)
    assert parameters[0] == "source" and parameters[-1] == "extra" and "seed" in parameters
    with pytest.raises(UserError, match="seed"):
        build("x", seed=-1)


def test_load_scorer_takes_one_settings_object_as_it_takes_keywords(nli_export):
    """The CLI and the Ray actors hand the resolved ScoringOptions on as it is; keywords beside it override it."""
    from learned_metrics.scoring import load_scorer
    from learned_metrics.scoring.options import ScoringOptions

    settings = ScoringOptions(mc_samples=3, seed=5, max_length=64)
    by_object = load_scorer(nli_export, settings=settings)
    assert by_object.options == load_scorer(nli_export, mc_samples=3, seed=5, max_length=64).options
    assert load_scorer(nli_export, settings=settings, mc_samples=2).options.mc_samples == 2
    with pytest.raises(UserError, match="mc_samples"):
        load_scorer(nli_export, settings=settings, mc_samples=-1)
