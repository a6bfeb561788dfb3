"""Rule: a Hub id that cannot be fetched is one complete line that ends with what to do (a local folder, or the
variable that turns downloads on), never a library message cut mid-sentence (it once ended "set 'HF_HUB_OFFL...")."""

from __future__ import annotations

import pytest
from huggingface_hub import errors

from learned_metrics.errors import UserError
from learned_metrics.scoring import loading

REPO = "someone/some-nli-model"


def refusal(monkeypatch, exc: BaseException) -> str:
    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr("huggingface_hub.snapshot_download", fail)
    with pytest.raises(UserError) as caught:
        loading.resolve_model_dir(REPO)
    message = str(caught.value)
    assert "\n" not in message and "..." not in message.split("[")[0]
    assert "local model folder" in message
    return message


def test_offline_says_which_variables_turn_downloads_on(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    message = refusal(monkeypatch, errors.LocalEntryNotFoundError("Cannot find an appropriate cached snapshot folder "
                                                                   "for the specified revision on the local disk and "
                                                                   "outgoing traffic has been disabled. To enable ..."))
    assert "HF_HUB_OFFLINE" in message and "unset both variables" in message


def hub_error(cls: type[Exception], text: str) -> Exception:
    """An HTTP error of huggingface_hub as the library raises it after a request, without a response object."""
    exc = cls.__new__(cls)
    Exception.__init__(exc, text)
    return exc


@pytest.mark.parametrize("make, words", [
    (lambda: hub_error(errors.RepositoryNotFoundError, "404 Client Error"), "neither a local folder nor a model"),
    (lambda: hub_error(errors.GatedRepoError, "403 Client Error"), "gated model"),
    (lambda: ConnectionError("[Errno -2] Name or service not known"), "is the network reachable"),
], ids=["unknown", "gated", "no-network"])
def test_online_failures_say_why_and_what_to_do(monkeypatch, make, words):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    assert words in refusal(monkeypatch, make())


def test_a_local_folder_is_never_looked_up(tmp_path, monkeypatch):
    """Control: a folder that exists is returned as is, with no Hub call."""
    monkeypatch.setattr("huggingface_hub.snapshot_download", lambda *a, **k: pytest.fail("looked up the Hub"))
    assert loading.resolve_model_dir(tmp_path) == tmp_path
