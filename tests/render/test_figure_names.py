"""Names are drawn literally in every figure: a group or system called ``$^$`` or ``$\\x$`` is a name, not
mathtext (matplotlib would parse it and fail), and ``$x$`` shows its dollar signs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.cli import main
from learned_metrics.meta_eval.bias import bias_matrix
from learned_metrics.meta_eval.shuffle_test import shuffle_test
from learned_metrics.render.figures import (
    bias_matrix_figure,
    length_gap_figure,
    roc_figure,
    score_histogram_figure,
)

# each crashes matplotlib's mathtext or is changed by it (the first three), or is plain (the control)
HOSTILE = ["$^$", "$\\x$", "$x$", "a$b", "\\frac{1}{2}", "_", "^"]
PLAIN = ["corpus a", "corpus b"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def texts(fig) -> list:
    import matplotlib.text

    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def drawn_literally(fig, names: list[str]) -> None:
    """The figure renders to PNG, every text with a dollar sign is literal, and each name is in some text as
    given."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"
    shown = texts(fig)
    assert all(not t.get_parse_math() for t in shown if "$" in t.get_text())
    for name in names:
        assert any(name in t.get_text() for t in shown), name


def labelled_rows(names: list[str]):
    rng = np.random.default_rng(0)
    labels = np.tile([1, 0], 20 * len(names))
    scores = rng.normal(size=labels.size) + labels
    groups = [name for name in names for _ in range(40)]
    return scores, labels, groups


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
def test_histogram_panels_show_group_names_literally(names):
    scores, labels, groups = labelled_rows(names)
    drawn_literally(score_histogram_figure(scores, labels, groups, dict.fromkeys(names, 0.75)), names)


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
def test_roc_legend_shows_group_names_literally(names):
    scores, labels, groups = labelled_rows(names)
    drawn_literally(roc_figure(scores, labels, groups, dict.fromkeys(names, 0.75)), names)


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
def test_bias_matrix_ticks_and_title_show_names_literally(names):
    rng = np.random.default_rng(1)
    human = rng.normal(size=(6, len(names)))
    matrix = bias_matrix(human, human + rng.normal(0, 0.3, human.shape), names)
    drawn_literally(bias_matrix_figure(matrix, title=names[0]), names)


def test_length_gap_figure_is_literal_too():
    rng = np.random.default_rng(2)
    report = shuffle_test(rng.normal(size=50) + 1, rng.normal(size=50), length_gap=rng.integers(-250, 250, 50),
                          resamples=20)
    fig = length_gap_figure(report)
    drawn_literally(fig, [])
    assert all(not t.get_parse_math() for t in texts(fig))


def test_a_figure_drawn_later_keeps_names_literal():
    """A notebook draws the returned figure outside the function: still literal."""
    scores, labels, groups = labelled_rows(HOSTILE)
    fig = score_histogram_figure(scores, labels, groups)
    fig.canvas.draw()
    assert all(not t.get_parse_math() for t in texts(fig) if "$" in t.get_text())


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
def test_cli_auc_plots_are_written_for_any_group_name(tmp_path, capsys, names):
    scores, labels, groups = labelled_rows(names)
    rows = [{"corpus": g, "label": int(y), "score": float(s)} for s, y, g in zip(scores, labels, groups, strict=True)]
    path = write_jsonl(tmp_path / "scored.jsonl", rows)
    plot, roc = tmp_path / "auc.png", tmp_path / "roc.png"
    code = main(["meta-eval", "auc", "--input", str(path), "--group-field", "corpus", "--resamples", "0",
                 "--plot", str(plot), "--roc-plot", str(roc)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert plot.read_bytes()[:4] == b"\x89PNG" and roc.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
def test_cli_bias_matrix_plot_is_written_for_any_system_name(tmp_path, capsys, names):
    rng = np.random.default_rng(3)
    quality = rng.normal(size=(8, len(names)))
    human = [{"doc_id": f"d{d}", "system_id": s, "score": float(quality[d, k])}
             for d in range(8) for k, s in enumerate(names)]
    metric = [{**row, "score": row["score"] + float(rng.normal(0, 0.3))} for row in human]
    plot = tmp_path / "bias.png"
    code = main(["meta-eval", "bias-matrix", "--human", str(write_jsonl(tmp_path / "h.jsonl", human)),
                 "--metric", str(write_jsonl(tmp_path / "m.jsonl", metric)), "--plot", str(plot)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert plot.read_bytes()[:4] == b"\x89PNG"
