"""A result holds its analysis's settings object, so a field added to the settings class reaches the result's JSON
settings block and captions with no other edit (one declaration per surface)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from learned_metrics.meta_eval.correlations import correlations
from learned_metrics.meta_eval.options import CorrelationSettings, SystemLevelSettings
from learned_metrics.meta_eval.system_level import realistic_system_level
from learned_metrics.settings import setting, takes


def _grids():
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, (10, 4)).astype(float)
    return human, human + rng.normal(0, 1, human.shape)


def _wider(cls):
    """``cls`` with one more field, as a developer would add it."""
    return dataclass(frozen=True)(type("Wider", (cls,), {
        "__annotations__": {"window": "int"}, "window": setting(3, "documents per window", minimum=1)}))


def test_a_field_added_to_the_system_level_settings_reaches_the_json_settings_block():
    human, metric = _grids()
    extended = takes(_wider(SystemLevelSettings))(inspect.unwrap(realistic_system_level))
    report = extended(human, metric, resamples=5, window=7)
    assert report.to_json()["settings"]["window"] == 7
    plain = realistic_system_level(human, metric, resamples=5).to_json()["settings"]  # control: the declared class
    assert plain.keys() == report.to_json()["settings"].keys() - {"window"}
    assert plain["resamples"] == 5 and plain["systems"] == 4 and plain["judged_docs"] == 10


def test_the_system_level_report_holds_its_settings_and_its_caption_reads_them():
    human, metric = _grids()
    settings = SystemLevelSettings(resamples=7, seed=4, confidence=0.8)
    report = realistic_system_level(human, metric, settings=settings)
    assert report.settings == settings
    caption = report.tables()[0].caption
    assert "80% bootstrap CIs (7 resamples" in caption and "seed 4" in caption


def test_the_correlation_report_holds_its_settings_and_its_caption_reads_them():
    human, metric = _grids()
    settings = CorrelationSettings(resamples=9, seed=2, confidence=0.9, stats=("tau_sys", "tau_sum"))
    report = correlations(human, metric, settings=settings)
    assert report.settings == settings
    assert "90% bootstrap CIs (9 resamples, both), seed 2" in report.tables()[0].caption
    fisher = correlations(human, metric, settings=CorrelationSettings(ci_method="fisher"))  # control: Fisher
    assert fisher.settings.ci_method == "fisher" and "Fisher-z" in fisher.tables()[0].caption
    assert all(result.resamples == 0 for result in fisher.stats.values())
