"""Rule: every option value handed to the Python API is parsed strictly, by one family of parsers
(:mod:`learned_metrics.validate`) that every settings declaration uses.

Found before: ``load_scorer(..., allow_pickle="false")`` loaded a pickle file and ``compile="no"`` compiled (a
string's truthiness decided); ``label_order`` given as a set mapped the classes in set-iteration order; meta-eval's
``sota="no"`` kept the SOTA subset and ``stats=set(...)`` ran the statistics in set order. The walks below hand every
declared option (each :class:`ScoringOptions` field, each meta-eval :class:`Option`) the wrong values for its kind;
a refusal is a UserError naming the option (API keyword and ``--flag``); a valid value of each kind is the control.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from functools import partial

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import options as meta_options
from learned_metrics.scoring import load_scorer
from learned_metrics.scoring.options import ScoringOptions
from learned_metrics.settings import Settings

NOT_BOOLS = ["false", "no", "true", 0, 1, 0.0, "", np.float64(1.0)]
UNORDERED = {
    "set": lambda items: set(items),
    "frozenset": lambda items: frozenset(items),
    "dict.keys()": lambda items: dict.fromkeys(items).keys(),
    "dict": lambda items: dict.fromkeys(items),
}
NOT_INTS = [True, False, 2.5, float("nan"), float("inf"), -float("inf"), "3", None]
NOT_FRACTIONS = [True, float("nan"), float("inf"), 0, 1, 1.5, -0.5, "0.5", None]
NLI_ORDER = ("entailment", "neutral", "contradiction")


def _refused(build, *names: str) -> str:
    with pytest.raises(UserError) as info:
        build()
    message = str(info.value)
    assert "\n" not in message
    for name in names:
        assert name in message, f"{name!r} not named in {message!r}"
    return message


# --- ScoringOptions: every field, by the kind its declaration gives it ---------------------------------------


def scoring_fields(kind: str) -> list[dataclasses.Field]:
    return [spec for spec in dataclasses.fields(ScoringOptions) if spec.metadata.get("kind") == kind]


def scoring_names(spec: dataclasses.Field) -> tuple[str, str]:
    return spec.name, "--" + spec.name.replace("_", "-")


def none_allowed(spec: dataclasses.Field) -> bool:
    return spec.default is None or "None" in str(spec.type)


def test_every_scoring_field_declares_a_kind_the_walk_knows():
    kinds = {spec.name: spec.metadata.get("kind") for spec in dataclasses.fields(ScoringOptions)}
    assert set(kinds.values()) <= {"flag", "int", "choice", "list", "text"}, kinds
    assert {"compile", "allow_pickle"} <= {spec.name for spec in scoring_fields("flag")}
    assert "label_order" in {spec.name for spec in scoring_fields("list")}
    assert {"mc_samples", "max_tokens", "seed"} <= {spec.name for spec in scoring_fields("int")}


@pytest.mark.parametrize("wrong", NOT_BOOLS + [None], ids=repr)
def test_scoring_bools_take_true_or_false_only(wrong):
    specs = scoring_fields("flag")
    assert specs
    for spec in specs:
        if wrong is None and none_allowed(spec):
            continue
        message = _refused(partial(ScoringOptions, **{spec.name: wrong}), *scoring_names(spec))
        assert "True or False" in message


@pytest.mark.parametrize("value", [True, False, np.bool_(True)], ids=repr)
def test_scoring_bools_accept_bools(value):
    for spec in scoring_fields("flag"):
        parsed = getattr(ScoringOptions(**{spec.name: value}), spec.name)
        assert type(parsed) is bool and parsed == bool(value)


@pytest.mark.parametrize("wrong", NOT_INTS, ids=repr)
def test_scoring_integers_refuse_bools_fractions_and_non_finite_values(wrong):
    specs = scoring_fields("int")
    assert specs
    for spec in specs:
        if wrong is None and none_allowed(spec):
            continue
        _refused(partial(ScoringOptions, **{spec.name: wrong}), *scoring_names(spec))


def test_scoring_integers_refuse_values_below_their_minimum():
    for spec in scoring_fields("int"):
        minimum = spec.metadata["minimum"]
        _refused(partial(ScoringOptions, **{spec.name: minimum - 1}), *scoring_names(spec), str(minimum))


# The options a field needs beside it to be accepted at all (--chunk-tokens only chunks with --premise-strategy chunk).
CONTEXT = {"chunk_tokens": {"premise_strategy": "chunk"}}


@pytest.mark.parametrize("value", [3, 3.0, np.int64(3)], ids=repr)
def test_scoring_integers_accept_integers_and_normalise_them(value):
    for spec in scoring_fields("int"):
        parsed = getattr(ScoringOptions(**{spec.name: value, **CONTEXT.get(spec.name, {})}), spec.name)
        assert type(parsed) is int and parsed == 3


@pytest.mark.parametrize("unordered", list(UNORDERED), ids=str)
def test_scoring_ordered_options_refuse_unordered_collections(unordered):
    specs = scoring_fields("list")
    assert specs
    for spec in specs:
        message = _refused(partial(ScoringOptions, **{spec.name: UNORDERED[unordered](NLI_ORDER)}),
                           *scoring_names(spec))
        assert "order" in message


@pytest.mark.parametrize("value", [NLI_ORDER, list(NLI_ORDER), "entailment, neutral,contradiction", "e,n,c",
                                   (name for name in NLI_ORDER), np.array(NLI_ORDER)],
                         ids=["tuple", "list", "text", "letters", "generator", "array"])  # stable under xdist
def test_label_order_accepts_ordered_values(value):
    assert ScoringOptions(label_order=value).label_order == NLI_ORDER


def test_scoring_choices_refuse_other_values_with_the_option_named():
    for spec in scoring_fields("choice"):
        _refused(partial(ScoringOptions, **{spec.name: "nonsense"}), spec.name.replace("_", " "))
        assert getattr(ScoringOptions(**{spec.name: spec.metadata["choices"][0]}), spec.name) == \
            spec.metadata["choices"][0]


# --- meta-eval: every field of the settings classes in meta_eval/options.py -----------------------------


@dataclasses.dataclass(frozen=True)
class Option:
    """One field of a meta-eval settings class, checked through the class's keywords."""

    cls: type
    spec: dataclasses.Field

    name = property(lambda self: self.spec.name)
    kind = property(lambda self: self.spec.metadata["kind"])
    choices = property(lambda self: self.spec.metadata["choices"] or ("score_a", "score_b"))  # a list of any names
    minimum = property(lambda self: self.spec.metadata["minimum"])
    default = property(lambda self: self.spec.default)
    flag = property(lambda self: "--" + self.spec.name.replace("_", "-"))

    def check(self, value):
        return getattr(self.cls.from_keywords(**{self.name: value}), self.name)


def meta_declarations() -> list[Option]:
    """Every field of every settings class meta_eval/options.py declares (each class checks its own)."""
    classes = [v for v in vars(meta_options).values() if isinstance(v, type) and issubclass(v, Settings)
               and v.__module__ == meta_options.__name__]
    return [Option(cls, spec) for cls in classes for spec in dataclasses.fields(cls)]


def meta_of(kind: str) -> list[Option]:
    return [option for option in meta_declarations() if option.kind == kind]


def meta_names(option: Option) -> tuple[str, str]:
    return option.name, option.flag


def test_the_meta_eval_walk_sees_every_kind():
    assert len(meta_declarations()) > 40
    assert {"sota", "published_scores"} <= {o.name for o in meta_of("flag")}
    assert "stats" in {o.name for o in meta_of("list")}
    assert {"resamples", "permutations", "seed"} <= {o.name for o in meta_of("int")}
    assert {"confidence", "alpha"} <= {o.name for o in meta_of("fraction")}


@pytest.mark.parametrize("wrong", NOT_BOOLS + [None], ids=repr)
def test_meta_eval_flags_take_true_or_false_only(wrong):
    for option in meta_of("flag"):
        message = _refused(partial(option.check, wrong), *meta_names(option))
        assert "True or False" in message


def test_meta_eval_flags_accept_bools():
    for option in meta_of("flag"):
        assert option.check(True) is True and option.check(np.bool_(False)) is False


@pytest.mark.parametrize("unordered", list(UNORDERED), ids=str)
def test_meta_eval_lists_refuse_unordered_collections(unordered):
    for option in meta_of("list"):
        message = _refused(partial(option.check, UNORDERED[unordered](option.choices[:2])), *meta_names(option))
        assert "order" in message


def test_meta_eval_lists_accept_ordered_values():
    for option in meta_of("list"):
        first, second = option.choices[:2]
        assert option.check(f"{second}, {first}") == (second, first)
        assert option.check([second, first]) == (second, first)
        assert option.check(item for item in (second, first)) == (second, first)


@pytest.mark.parametrize("wrong", NOT_INTS, ids=repr)
def test_meta_eval_integers_refuse_wrong_kinds(wrong):
    for option in meta_of("int"):
        if wrong is None and option.default is None:
            continue
        _refused(partial(option.check, wrong), *meta_names(option))


def test_meta_eval_integers_refuse_values_below_their_minimum_and_accept_integers():
    for option in meta_of("int"):
        _refused(partial(option.check, option.minimum - 1), *meta_names(option), str(option.minimum))
        assert option.check(np.int64(option.minimum + 2)) == option.minimum + 2
        assert type(option.check(float(option.minimum + 2))) is int


@pytest.mark.parametrize("wrong", NOT_FRACTIONS, ids=repr)
def test_meta_eval_fractions_refuse_wrong_kinds_and_values_outside_0_1(wrong):
    for option in meta_of("fraction"):
        _refused(partial(option.check, wrong), *meta_names(option), "(0, 1)")


def test_meta_eval_fractions_accept_numbers_inside_0_1():
    for option in meta_of("fraction"):
        assert option.check(0.9) == 0.9 and option.check(np.float32(0.5)) == 0.5


# --- end to end: the public functions ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pickle_only_nli(tiny_deberta_nli, tmp_path_factory):
    """The tiny NLI model with its weights as pytorch_model.bin only."""
    folder = tmp_path_factory.mktemp("pickle-only-nli")
    for file in tiny_deberta_nli.iterdir():
        if file.suffix != ".safetensors":
            shutil.copy(file, folder / file.name)
    torch.save(AutoModelForSequenceClassification.from_pretrained(tiny_deberta_nli).state_dict(),
               folder / "pytorch_model.bin")
    return folder


@pytest.fixture
def nothing_loaded(monkeypatch):
    """Fails the test if load_scorer gets as far as resolving the model folder."""
    from learned_metrics.scoring import loading

    def refuse(*args, **kwargs):
        raise AssertionError("the model folder was read before the options were checked")

    monkeypatch.setattr(loading, "resolve_model_dir", refuse)


@pytest.mark.parametrize(("keyword", "value"), [("allow_pickle", "false"), ("allow_pickle", 0), ("compile", "no"),
                                                ("compile", "false"), ("allow_pickle", None)])
def test_load_scorer_refuses_a_non_bool_before_anything_is_loaded(pickle_only_nli, nothing_loaded, keyword, value):
    _refused(lambda: load_scorer(pickle_only_nli, **{keyword: value}), keyword, "--" + keyword.replace("_", "-"))


def test_load_scorer_loads_pickle_weights_only_when_allow_pickle_is_true(pickle_only_nli):
    with pytest.raises(UserError, match="pickle"):
        load_scorer(pickle_only_nli, allow_pickle=False)
    assert load_scorer(pickle_only_nli, allow_pickle=True).kind == "faithfulness"


@pytest.fixture(scope="module")
def generic_nli(tiny_deberta_nli, tmp_path_factory):
    """The tiny NLI model with LABEL_0.. labels, and the order its classes really have."""
    folder = shutil.copytree(tiny_deberta_nli, tmp_path_factory.mktemp("generic") / "model")
    config = json.loads((folder / "config.json").read_text())
    order = tuple(config["id2label"][str(i)].lower() for i in range(len(config["id2label"])))
    config["id2label"] = {str(i): f"LABEL_{i}" for i in range(len(order))}
    config["label2id"] = {f"LABEL_{i}": i for i in range(len(order))}
    (folder / "config.json").write_text(json.dumps(config))
    return folder, order


def test_load_scorer_refuses_label_order_as_a_set(generic_nli, nothing_loaded):
    folder, order = generic_nli
    _refused(lambda: load_scorer(folder, label_order=set(order)), "label_order", "--label-order")
    _refused(lambda: load_scorer(folder, label_order=frozenset(order)), "label_order", "--label-order")


def test_load_scorer_takes_label_order_as_a_tuple(generic_nli):
    folder, order = generic_nli
    scorer = load_scorer(folder, label_order=order)
    assert scorer.label_ids == {name: order.index(name) for name in scorer.label_ids}


def test_score_details_takes_true_or_false_only(tiny_deberta_nli):
    scorer = load_scorer(tiny_deberta_nli)
    pairs = {"groundings": ["Anna slept."], "generations": ["Anna slept."]}
    for wrong in ("no", "false", 0, 1, None):
        _refused(partial(scorer.score, **pairs, details=wrong), "details")
    assert scorer.score(**pairs, details=False).sentences is None
    assert scorer.score(**pairs, details=True).sentences is not None


def test_read_benchmark_flags_and_names_are_strict(tmp_path):
    from learned_metrics.meta_eval import read_benchmark

    rows = [{"doc": f"d{i}", "claim": f"c{i}", "label": i % 2, "dataset": "x", "score": i / 10} for i in range(6)]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    _refused(lambda: read_benchmark([path], sota="no"), "sota")
    _refused(lambda: read_benchmark([path], published_scores="false"), "published_scores")
    _refused(lambda: read_benchmark([path, path], names={"a", "b"}), "names")
    assert list(read_benchmark([path, path], names=("a", "b")).scores) == ["a", "b"]


def test_load_grid_names_are_ordered(tmp_path):
    from learned_metrics.meta_eval import load_grid

    rows = [{"doc_id": d, "system_id": s, "score": float(d * s % 5)} for d in range(4) for s in range(3)]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps(row) + "\n" for row in rows))
    _refused(lambda: load_grid(human, [human, human], names={"a", "b"}), "names")
    _refused(lambda: load_grid(human, [human, human], names=dict.fromkeys("ab").keys()), "names")
    assert list(load_grid(human, [human, human], names=["b", "a"]).metrics) == ["b", "a"]
    assert list(load_grid(human, [human, human], names="b,a").metrics) == ["b", "a"]


def test_confounders_by_label_and_names_are_strict():
    from learned_metrics.meta_eval import confounders

    rows = [{"generation": "One. Two." * (i + 1), "score": i / 10, "label": i % 2} for i in range(10)]
    common = {"human_field": None, "grounding_field": None, "resamples": 0}
    _refused(lambda: confounders(rows, by_label="no", **common), "by_label")
    _refused(lambda: confounders(rows, names={"m"}, **common), "names")
    assert confounders(rows, by_label=True, names=("m",), **common).metrics == ["m"]


def test_export_and_data_prep_take_true_or_false_only(tmp_path):
    from learned_metrics.data.shuffle_set import build_shuffle_set
    from learned_metrics.export import export_checkpoint

    ckpt = tmp_path / "x.ckpt"
    ckpt.write_bytes(b"")
    _refused(lambda: export_checkpoint(ckpt, tmp_path / "out", allow_pickle="false"), "allow_pickle")
    _refused(lambda: export_checkpoint(ckpt, tmp_path / "out", overwrite="no"), "overwrite")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"text": "A.\nB.\nC."}) + "\n")
    _refused(lambda: build_shuffle_set("jsonl:" + str(docs), tmp_path / "set", overwrite="no"), "overwrite")
    assert not (tmp_path / "set").exists() and not (tmp_path / "out").exists()
