"""A model folder is checked once per load: one checked value goes to every loader (config, tokenizer, weights,
card), none of which looks at the folder again. The refusals themselves are covered by tests/test_safety.py and
tests/hostile/test_no_model_code.py."""

from __future__ import annotations

from learned_metrics import safety
from learned_metrics.scoring import load_scorer


def test_load_scorer_checks_the_model_folder_once(nli_export, monkeypatch):
    real, checked = safety.read_json_object, []

    def counting(path, *args, **kwargs):  # each check of a folder reads its config.json for custom code
        checked.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(safety, "read_json_object", counting)
    scorer = load_scorer(nli_export)
    assert checked.count("config.json") == 1 and checked.count("tokenizer_config.json") == 1
    assert scorer.score(groundings=["Anna bought apples."], generations=["Anna has apples."]).scores.shape == (1,)
