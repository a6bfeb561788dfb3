"""The released layouts of the faithfulness benchmarks (LLM-AggreFact, AggreFact, the SummaC benchmark, TRUE),
declared once: the columns a file of each has, which hold the grounding and the generation, where a row's dataset
is. Read by ``meta-eval benchmark`` (:mod:`learned_metrics.meta_eval.benchmarks_io`) and by ``score
faithfulness``, which recognizes a row's text columns; here, below both, so scoring imports no meta-evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Layout:
    """One benchmark's released layout."""

    key: str
    name: str
    premise: str  # the grounding column
    hypothesis: str  # the generation column
    columns: tuple[str, ...]  # what every file of the layout has
    dataset_field: str | None  # None: the dataset is the file name (TRUE)
    has_splits: bool
    positive: str  # what label 1 means
    source: str
    dataset_names: tuple[tuple[str, str], ...] = ()  # a dataset field's value -> the name the benchmark's tables use


LAYOUTS = {
    "llm-aggrefact": Layout("llm-aggrefact", "LLM-AggreFact", "doc", "claim", ("dataset", "doc", "claim", "label"),
                            "dataset", True, "supported", "Hugging Face dataset lytang/LLM-AggreFact (gated: accept "
                            "its terms), dev and test Parquet files"),
    "aggrefact": Layout("aggrefact", "AggreFact", "doc", "summary",
                        ("dataset", "origin", "id", "doc", "summary", "model_name", "label", "cut"), "origin", True,
                        "consistent", "aggre_fact_final.csv / aggre_fact_sota.csv of github.com/Liyan06/AggreFact",
                        (("cnndm", "AggreFact-CNN"), ("xsum", "AggreFact-XSum"))),
    "summac": Layout("summac", "SummaC benchmark", "document", "claim", ("document", "claim", "label", "dataset"),
                     "dataset", True, "consistent",
                     "built by SummaCBenchmark (github.com/tingofurro/summac) from the original sources, saved"),
    "true": Layout("true", "TRUE", "grounding", "generated_text", ("grounding", "generated_text", "label"), None,
                   False, "grounded", "built by the download script of github.com/google-research/true"),
}
# Recognized from a file's columns in this order (AggreFact's columns include LLM-AggreFact's minus claim).
DETECTION_ORDER = ("aggrefact", "summac", "llm-aggrefact", "true")
# Recognized from a row's text columns (scoring) in this order.
TEXT_ORDER = ("true", "aggrefact", "llm-aggrefact", "summac")


def recognize(columns: Sequence[str]) -> Layout | None:
    """The layout whose columns a file has (None when it has none of them)."""
    return next((LAYOUTS[name] for name in DETECTION_ORDER if set(LAYOUTS[name].columns) <= set(columns)), None)


def text_layout(row: dict[str, Any]) -> Layout | None:
    """The layout whose grounding and generation columns a row has (what ``score faithfulness`` reads)."""
    layouts = (LAYOUTS[name] for name in TEXT_ORDER)
    return next((layout for layout in layouts if layout.premise in row and layout.hypothesis in row), None)
