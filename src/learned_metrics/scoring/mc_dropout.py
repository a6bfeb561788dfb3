"""Monte-Carlo dropout: K independent stochastic passes, run as few batched forwards.

Why train mode and not "switch the nn.Dropout modules on": in transformers v5
several architectures (RoBERTa among them) apply attention-probability dropout
through the attention module's own ``training`` flag
(``dropout=0.0 if not self.training else self.dropout.p``) rather than by
calling their ``nn.Dropout``. Flipping only the dropout modules silently leaves
attention dropout off. So MC mode puts *every* module in train mode, exactly as
in training, except the layers whose train mode changes state (batch-norm-like
running statistics); ``torch.inference_mode`` keeps gradients off.

The K passes are one forward over K stacked copies of the batch whenever
``K x rows x length`` fits the token budget (dropout masks are drawn per
element, so the copies are independent passes), else as few forwards as fit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch
from torch import nn

# Layers whose train mode updates running statistics: they stay in eval mode.
_STATEFUL_NORMS = (nn.modules.batchnorm._NormBase,)


@contextlib.contextmanager
def mc_dropout_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Enable the dropout the architecture uses in training; restore every module's mode on exit."""
    previous = {module: module.training for module in model.modules()}
    model.train()
    for module in model.modules():
        if isinstance(module, _STATEFUL_NORMS):
            module.eval()
    try:
        yield model
    finally:
        for module, mode in previous.items():
            module.train(mode)


def copies_per_forward(passes: int, rows: int, width: int, max_tokens: int) -> int:
    """How many stacked copies of a ``rows x width`` batch fit ``max_tokens`` (at least 1, at most ``passes``)."""
    return max(1, min(passes, max_tokens // max(1, rows * width)))


def forward_passes(model: nn.Module, batch: dict[str, torch.Tensor], passes: int, max_tokens: int) -> torch.Tensor:
    """Class probabilities ``(passes, rows, classes)`` in float64; one pass = one full stochastic forward.

    The caller decides the mode: in eval mode every pass is the same
    deterministic forward, so callers ask for ``passes=1`` there.
    """
    rows, width = batch["input_ids"].shape
    per_forward = copies_per_forward(passes, rows, width, max_tokens)
    chunks: list[torch.Tensor] = []
    done = 0
    while done < passes:
        copies = min(per_forward, passes - done)
        inputs = batch if copies == 1 else {name: t.repeat(copies, 1) for name, t in batch.items()}
        logits = model(**inputs).logits
        chunks.append(logits.double().softmax(-1).view(copies, rows, -1))
        done += copies
    return torch.cat(chunks)


class DropoutStream:
    """The scorer's own random stream for dropout masks.

    With a seed, results are reproducible run to run and call to call (the
    stream continues across calls, so chunk 2 of a file does not reuse the
    masks of chunk 1), and the caller's global torch RNG is left untouched.
    Without a seed the global RNG is used as is.
    """

    def __init__(self, seed: int | None, device: torch.device):
        self.device = device
        self.seed = seed
        self._state: tuple[torch.Tensor, torch.Tensor | None] | None = None

    def reseed(self, seed: int | None) -> None:
        self.seed = seed
        self._state = None

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        if self.seed is None:
            yield
            return
        cuda = self.device.type == "cuda"
        index = (self.device.index if self.device.index is not None else torch.cuda.current_device()) if cuda else None
        with torch.random.fork_rng(devices=[index] if cuda else [], device_type="cuda"):
            if self._state is None:
                torch.random.default_generator.manual_seed(self.seed)
                if cuda:
                    torch.cuda.default_generators[index].manual_seed(self.seed)
            else:
                torch.set_rng_state(self._state[0])
                if cuda:
                    torch.cuda.set_rng_state(self._state[1], index)
            yield
            self._state = (torch.get_rng_state(), torch.cuda.get_rng_state(index) if cuda else None)


def chunk_seed(seed: int, chunk: int) -> int:
    """The dropout seed of chunk ``chunk`` of a file run: a resumed run draws the masks an uninterrupted one drew.

    Derived, not carried over in memory: the stream state of chunk 5 does not
    exist in a process that starts at chunk 5. Chunk 0 uses ``seed`` itself, so
    a file of one chunk scores as ``Scorer.score(..., seed=seed)`` does.
    """
    return seed if chunk == 0 else int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])
