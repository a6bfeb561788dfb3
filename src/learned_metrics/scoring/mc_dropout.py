"""Monte-Carlo dropout: K independent stochastic passes, run as few batched forwards.

MC mode puts *every* module in train mode, as in training, except the layers whose train mode changes state
(running statistics): several architectures apply attention dropout through the attention module's own
``training`` flag, so switching on only the ``nn.Dropout`` modules would silently leave it off (docs/scoring.md,
"Monte-Carlo dropout"). The K passes are one forward over K stacked copies of a batch when they fit the budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch
from torch import nn

from learned_metrics import compat


class FastDropout:
    """Dropout masks on CPU from numpy's PCG64 generator: the same Bernoulli(1 - p) keep mask scaled by 1/(1 - p),
    about 4x cheaper to draw than ``torch.bernoulli_`` (whose per-element Mersenne Twister took a third of an
    MC forward on article-length pairs). The keep threshold is p in units of 2^-32."""

    def __init__(self, seed: int):
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def __call__(self, x: torch.Tensor, p: float, inplace: bool = False) -> torch.Tensor:
        if p <= 0.0:
            return x
        if p >= 1.0:
            return x.zero_() if inplace else torch.zeros_like(x)
        threshold = np.uint32(min(2**32 - 1, round(p * 2**32)))
        draws = self.rng.integers(0, 2**32, size=x.numel(), dtype=np.uint32)
        mask = torch.from_numpy(np.where(draws >= threshold, np.float32(1.0 / (1.0 - p)), np.float32(0.0)))
        mask = mask.view(x.shape).to(x.dtype)
        return x.mul_(mask) if inplace else x * mask


def _dropout_forward(module: nn.Dropout, fast: FastDropout):
    def forward(x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cpu":
            return nn.functional.dropout(x, module.p, True, module.inplace)
        return fast(x, module.p, inplace=module.inplace)

    return forward


def _attention_with_fast_dropout(original, fast: FastDropout):
    """transformers' ``sdpa`` attention, except that with dropout on CPU it runs torch's own math path (where CPU
    SDPA falls back with dropout anyway) with ``fast`` masks; anything it does not cover goes to the original."""

    def attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, is_causal=None,
                  **kwargs):
        causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
        delegate = (not dropout or query.device.type != "cpu" or getattr(module, "num_key_value_groups", 1) > 1
                    or kwargs.get("position_bias") is not None or kwargs.get("cache") is not None
                    or kwargs.get("softcap") is not None or (attention_mask is None and causal and query.shape[2] > 1))
        if delegate:
            return original(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                            is_causal=is_causal, **kwargs)
        scale = scaling if scaling is not None else query.shape[-1] ** -0.5
        scores = torch.matmul(query, key.transpose(-2, -1)).mul_(scale)
        if attention_mask is not None and attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
        elif attention_mask is not None:
            scores = scores + attention_mask
        probs = fast(scores.softmax(dim=-1), dropout, inplace=True)  # a fresh tensor: masked in place
        return torch.matmul(probs, value).transpose(1, 2).contiguous(), None

    return attention


@contextlib.contextmanager
def _fast_cpu_dropout(model: nn.Module) -> Iterator[None]:
    """Every ``nn.Dropout`` and transformers' ``sdpa`` attention dropout draw their masks from one seeded
    :class:`FastDropout` (seeded from torch's RNG, so the dropout stream's seed decides the masks)."""
    fast = FastDropout(int(torch.randint(0, 2**62, (1,)).item()))
    patched = [m for m in model.modules() if isinstance(m, nn.Dropout)]
    for module in patched:
        module.forward = _dropout_forward(module, fast)
    mapping = compat.attention_functions()
    original = mapping.get("sdpa")
    if original is not None:
        mapping["sdpa"] = _attention_with_fast_dropout(original, fast)
    try:
        yield
    finally:
        for module in patched:
            del module.forward
        if original is not None:
            mapping["sdpa"] = original


@contextlib.contextmanager
def mc_dropout_mode(model: nn.Module, fast_cpu_masks: bool = True) -> Iterator[nn.Module]:
    """Enable the dropout the architecture uses in training; restore every module's mode on exit.
    ``fast_cpu_masks``: masks of tensors on CPU come from :class:`FastDropout` (same distribution, cheaper)."""
    stateful_norms = compat.stateful_norm_types()  # their train mode updates running statistics: kept in eval mode
    previous = {module: module.training for module in model.modules()}
    model.train()
    for module in model.modules():
        if isinstance(module, stateful_norms):
            module.eval()
    try:
        with _fast_cpu_dropout(model) if fast_cpu_masks else contextlib.nullcontext():
            yield model
    finally:
        for module, mode in previous.items():
            module.train(mode)


def copies_per_forward(passes: int, rows: int, width: int, max_tokens: int) -> int:
    """How many stacked copies of a ``rows x width`` batch fit ``max_tokens`` (at least 1, at most ``passes``)."""
    return max(1, min(passes, max_tokens // max(1, rows * width)))


def forward_passes(model: nn.Module, batch: dict[str, torch.Tensor], passes: int, max_tokens: int) -> torch.Tensor:
    """Class probabilities ``(passes, rows, classes)`` in float64; one pass = one full stochastic forward (the caller
    sets the mode: in eval mode every pass is the same, so it asks for ``passes=1``)."""
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
    """The scorer's own random stream for dropout masks: with a seed reproducible and continued across calls (chunk
    2 does not reuse chunk 1's masks), the global torch RNG untouched; without a seed the global RNG as is."""

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
    """The dropout seed of chunk ``chunk`` of a file run, derived (a resumed run starting at chunk 5 has no stream
    state to carry): it draws the masks an uninterrupted one drew; chunk 0 uses ``seed`` as ``score(seed=)`` does."""
    return seed if chunk == 0 else int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])
