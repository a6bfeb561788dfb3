"""Rule: realistic_system_level's full-set scores are paired with the judged systems by label, never by position.

``metric_full`` was read on its own, so a wide DataFrame whose columns came in another order (a pivot sorts them, a
full-set run lists its systems as it finished them) gave every system another system's full-set mean: tau_sys_full
1.0 became -1.0 with no warning. A long frame's first-seen order was taken as the judged matrix's column order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.system_level import realistic_system_level

SYSTEMS = ["A", "B", "C", "D", "E"]
RNG = np.random.default_rng(0)
HUMAN = pd.DataFrame(RNG.normal(size=(10, 5)) + np.arange(5), index=[f"d{i}" for i in range(10)], columns=SYSTEMS)
METRIC = HUMAN + RNG.normal(size=(10, 5)) * 0.3
FULL = pd.DataFrame(RNG.normal(size=(30, 5)) * 0.1 + np.arange(5), index=[f"f{i}" for i in range(30)],
                    columns=SYSTEMS)
BANDS = [(0, 1.5), (1.5, float("inf"))]


def _numbers(report):
    return (report.tau_sys_full.value, [(band.pairs, band.agreement.value, band.tau.value) for band in report.bands])


def test_control_same_column_order():
    report = realistic_system_level(HUMAN, METRIC, FULL, bands=BANDS, resamples=0)
    assert report.tau_sys_full.value == pytest.approx(1.0)


def test_control_plain_matrices_stay_positional():
    plain = realistic_system_level(HUMAN.to_numpy(), METRIC.to_numpy(), FULL.to_numpy(), bands=BANDS, resamples=0)
    assert _numbers(plain) == _numbers(realistic_system_level(HUMAN, METRIC, FULL, bands=BANDS, resamples=0))


@pytest.mark.parametrize("order", [SYSTEMS[::-1], ["C", "A", "E", "B", "D"]])
def test_full_set_columns_in_another_order(order):
    expected = _numbers(realistic_system_level(HUMAN, METRIC, FULL, bands=BANDS, resamples=0))
    assert _numbers(realistic_system_level(HUMAN, METRIC, FULL[order], bands=BANDS, resamples=0)) == expected


def test_full_set_with_an_extra_system_is_noted():
    report = realistic_system_level(HUMAN, METRIC, FULL.assign(Z=1.0)[["Z", *SYSTEMS[::-1]]], resamples=0)
    assert report.tau_sys_full.value == pytest.approx(1.0)
    assert any("'Z'" in note for note in report.notes)


def test_full_set_without_a_judged_system_is_refused():
    with pytest.raises(UserError, match="'C'"):
        realistic_system_level(HUMAN, METRIC, FULL.drop(columns="C"), resamples=0)


def test_systems_x_documents_full_set_rows_by_label():
    expected = _numbers(realistic_system_level(HUMAN, METRIC, FULL, bands=BANDS, resamples=0))
    turned = realistic_system_level(HUMAN.T, METRIC.T, FULL[SYSTEMS[::-1]].T, bands=BANDS, axes="systems x documents",
                                    resamples=0)
    assert _numbers(turned) == expected


def test_long_full_set_beside_plain_matrices_is_refused():
    long = FULL.stack().rename("score").rename_axis(["doc_id", "system_id"]).reset_index()
    with pytest.raises(UserError, match="metric_full"):
        realistic_system_level(HUMAN.to_numpy(), METRIC.to_numpy(), long.iloc[::-1], resamples=0)


def test_many_extra_systems_make_one_short_note():
    """A full-set run over a whole leaderboard: the note names three of the unjudged systems and counts the rest,
    instead of a caption listing every one."""
    extra = FULL.assign(**{f"X{i:02d}": 1.0 for i in range(40)})
    notes = realistic_system_level(HUMAN, METRIC, extra, resamples=0).notes
    assert notes == ["metric_full: ignored 40 system(s) without human judgements ('X00', 'X01', 'X02' and 37 more)"]
