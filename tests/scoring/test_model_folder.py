"""A model folder is checked once per load: one checked value goes to every loader (config, tokenizer, weights,
card), none of which looks at the folder again. The refusals themselves are covered by tests/test_safety.py and
tests/hostile/test_no_model_code.py."""

from __future__ import annotations

import pytest

from learned_metrics import safety
from learned_metrics.scoring import load_scorer


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The names of the files a folder check reads (each check reads config.json for custom code)."""
    real, names = safety.read_json_object, []

    def counting(path, *args, **kwargs):
        names.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(safety, "read_json_object", counting)
    return names


def test_load_scorer_checks_the_model_folder_once(nli_export, checked):
    scorer = load_scorer(nli_export)
    assert checked.count("config.json") == 1 and checked.count("tokenizer_config.json") == 1
    assert scorer.score(groundings=["Anna bought apples."], generations=["Anna has apples."]).scores.shape == (1,)


def test_a_local_ray_run_checks_the_model_folder_once_for_the_driver_and_its_actors(nli_export, checked,
                                                                                    monkeypatch):
    """``--engine ray`` on this machine: the check before Ray starts hands its checked value to the driver's load
    (and to each actor's); none of them reads the folder's files for the check again. Control: a plain name is
    checked when loaded, as above."""
    pytest.importorskip("ray")
    from learned_metrics.scoring import ray_engine
    from learned_metrics.scoring.options import RaySettings

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    folder = ray_engine._check_model_here(nli_export, RaySettings())
    assert isinstance(folder, safety.ModelFolder) and checked.count("config.json") == 1
    checked.clear()
    scorer = load_scorer(folder)
    assert checked.count("config.json") == 0 and checked.count("tokenizer_config.json") == 0
    assert scorer.source == str(nli_export)  # provenance names the folder as the user gave it
    load_scorer(str(nli_export))  # control
    assert checked.count("config.json") == 1
