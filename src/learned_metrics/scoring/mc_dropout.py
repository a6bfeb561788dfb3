"""Monte-Carlo dropout: K stochastic passes as few batched forwards, every module in train mode except stateful
norms (attention dropout often reads the module's own ``training`` flag; docs/scoring.md, "Monte-Carlo dropout").
A row's masks come from the seed, its own token ids and the pass (:class:`KeyedDropout`): the same MC score
whichever rows share its batch, whichever process or Ray actor scores it and however often it is retried.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Iterator

import numpy as np
import torch
from torch import nn

from learned_metrics import compat


def _derived_seed(*words: int) -> int:
    return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _generator(seed: int, device: torch.device):
    """numpy's PCG64 on CPU (about 4x cheaper to draw than ``torch.bernoulli_``), a torch generator elsewhere."""
    if device.type == "cpu":
        return np.random.Generator(np.random.PCG64(seed))
    return torch.Generator(device).manual_seed(seed)


def _masks(x: torch.Tensor, p: float, generators: list) -> torch.Tensor:
    """Bernoulli(1 - p) keep masks scaled by 1/(1 - p) of ``x`` split into as many equal blocks as ``generators``,
    each block from its generator (on CPU uint32 draws against p in units of 2^-32)."""
    size = x.numel() // len(generators)
    if x.device.type == "cpu":
        draws = np.empty(len(generators) * size, dtype=np.uint32)
        for block, generator in enumerate(generators):
            draws[block * size:(block + 1) * size] = generator.integers(0, 2**32, size=size, dtype=np.uint32)
        threshold = np.uint32(min(2**32 - 1, round(p * 2**32)))
        return torch.from_numpy(np.where(draws >= threshold, np.float32(1.0 / (1.0 - p)), np.float32(0.0)))
    draws = torch.empty(len(generators) * size, device=x.device)
    for block, generator in enumerate(generators):  # torch.rand's draws, written in place (no concatenated copy)
        draws[block * size:(block + 1) * size].uniform_(generator=generator)
    return (draws >= p).to(x.dtype).div_(1.0 - p)


def row_keys(batch: dict[str, torch.Tensor]) -> list[int]:
    """Each row's identity: a 128-bit hash of its real tokens (and token types), padding excluded."""
    mask = batch["attention_mask"].bool().cpu()
    columns = [batch[name].cpu() for name in ("input_ids", "token_type_ids") if name in batch]
    keys = []
    for row in range(mask.shape[0]):
        digest = hashlib.blake2b(digest_size=16)
        for column in columns:
            digest.update(column[row][mask[row]].numpy().astype("<i8").tobytes())
        keys.append(int.from_bytes(digest.digest(), "little"))
    return keys


class KeyedDropout:
    """Dropout whose masks come from (seed, row key, pass), one generator per stacked copy of a row. An input shared
    by the whole batch (DeBERTa's relative-position embeddings) gets a mask of the pass alone, so such models run one
    pass per forward (:attr:`shared`)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.blocks: list[int] = []
        self.shared_seed = 0
        self.shared: set[int] = set()  # ids of the modules whose dropout input is shared by the batch
        self.batched: set[int] = set()
        self._probing: dict[int, list[int]] | None = None
        self._generators: dict[tuple[bool, str], list] = {}

    def start(self, keys: list[int], passes: range) -> None:
        """Blocks of the next forward: copy-major, as ``Tensor.repeat`` stacks them."""
        self.blocks = [_derived_seed(self.seed, key & (2**64 - 1), key >> 64, step) for step in passes for key in keys]
        self.shared_seed = _derived_seed(self.seed, 2**32, passes.start)
        self._generators = {}

    def __call__(self, x: torch.Tensor, p: float, inplace: bool = False,
                 module: nn.Module | None = None) -> torch.Tensor:
        if self._probing is not None:
            self._probing.setdefault(id(module), []).append(x.shape[0] if x.dim() else 0)
            return x
        if p <= 0.0:
            return x
        if p >= 1.0:
            return x.zero_() if inplace else torch.zeros_like(x)
        shared = module is not None and id(module) in self.shared
        if not shared and (x.dim() == 0 or x.shape[0] % len(self.blocks)):
            raise RuntimeError(f"MC dropout: a dropout input of shape {tuple(x.shape)} is neither per row nor shared "
                               "by the batch")
        key = (shared, str(x.device))
        generators = self._generators.get(key)
        if generators is None:  # made once per forward: every dropout call continues each block's own stream
            seeds = [self.shared_seed] if shared else self.blocks
            generators = self._generators[key] = [_generator(seed, x.device) for seed in seeds]
        mask = _masks(x, p, generators).view(x.shape).to(device=x.device, dtype=x.dtype)
        return x.mul_(mask) if inplace else x * mask

    def probe(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> None:
        """Which dropout inputs are per row: two tiny forwards, of one row and of two, record each module's first
        dimension; a module whose first dimension does not double is shared by the batch."""
        seen: list[dict[int, list[int]]] = []
        for rows in (1, 2):
            self._probing = {}
            tiny = {name: t[:1, : min(t.shape[1], 4)].repeat(rows, 1) for name, t in batch.items()}
            model.forward(**tiny)  # not a scoring forward: the model's own hooks do not see it
            seen.append(self._probing)
        self._probing = None
        for module, firsts in seen[0].items():
            doubled = [2 * a == b for a, b in zip(firsts, seen[1].get(module, []), strict=False)]
            (self.batched if doubled and all(doubled) else self.shared).add(module)


def _attention_with_keyed_dropout(original, masks: KeyedDropout):
    """transformers' ``sdpa`` attention, except that with dropout it runs torch's own math path (where CPU SDPA falls
    back with dropout anyway) with ``masks``; anything it does not cover goes to the original."""

    def attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, is_causal=None,
                  **kwargs):
        causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
        delegate = (not dropout or getattr(module, "num_key_value_groups", 1) > 1
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
        probs = masks(scores.softmax(dim=-1), dropout, inplace=True)  # a fresh tensor: masked in place
        return torch.matmul(probs, value).transpose(1, 2).contiguous(), None

    return attention


@contextlib.contextmanager
def mc_dropout_mode(model: nn.Module, masks: KeyedDropout | None = None) -> Iterator[nn.Module]:
    """Enable the dropout the architecture uses in training; restore every module's mode on exit. Masks come from
    ``masks`` (every ``nn.Dropout`` and the ``sdpa`` attention's), else from torch's own generator (as in a compiled
    graph, or the paper's code)."""
    stateful_norms = compat.stateful_norm_types()  # their train mode updates running statistics: kept in eval mode
    previous = {module: module.training for module in model.modules()}
    model.train()
    for module in model.modules():
        if isinstance(module, stateful_norms):
            module.eval()
    patched = [m for m in model.modules() if isinstance(m, nn.Dropout)] if masks else []
    for module in patched:
        module.forward = functools.partial(masks, p=module.p, inplace=module.inplace, module=module)
    mapping = compat.attention_functions() if masks else {}
    original = mapping.get("sdpa")
    if original is not None:
        mapping["sdpa"] = _attention_with_keyed_dropout(original, masks)
    try:
        yield model
    finally:
        for module, mode in previous.items():
            module.train(mode)
        for module in patched:
            del module.forward
        if original is not None:
            mapping["sdpa"] = original


def copies_per_forward(passes: int, rows: int, width: int, max_tokens: int) -> int:
    """How many stacked copies of a ``rows x width`` batch fit ``max_tokens`` (at least 1, at most ``passes``)."""
    return max(1, min(passes, max_tokens // max(1, rows * width)))


def forward_passes(model: nn.Module, batch: dict[str, torch.Tensor], passes: int, max_tokens: int,
                   masks: KeyedDropout | None = None) -> torch.Tensor:
    """Class probabilities ``(passes, rows, classes)`` in float64; one pass = one full stochastic forward (the caller
    sets the mode). With ``masks`` the rows have equal lengths and passes are grouped by the width alone, so a row's
    masks do not depend on its batch."""
    rows, width = batch["input_ids"].shape
    keys = None
    if masks is None:
        per_forward = copies_per_forward(passes, rows, width, max_tokens)
    else:
        if not masks.batched and not masks.shared:
            masks.probe(model, batch)
        per_forward = 1 if masks.shared else copies_per_forward(passes, 1, width, max_tokens)
        keys = row_keys(batch)
    chunks: list[torch.Tensor] = []
    for done in range(0, passes, per_forward):
        copies = min(per_forward, passes - done)
        inputs = batch if copies == 1 else {name: t.repeat(copies, 1) for name, t in batch.items()}
        if keys is not None:
            masks.start(keys, range(done, done + copies))
        chunks.append(model(**inputs).logits.double().softmax(-1).view(copies, rows, -1))
    return torch.cat(chunks)


class DropoutStream:
    """The scorer's own random stream for dropout masks: with a seed reproducible and continued across calls (chunk
    2 does not reuse chunk 1's masks), the global torch RNG untouched; without a seed the global RNG as is."""

    def __init__(self, seed: int | None, device: torch.device):
        self.device, self.seed = device, seed
        self._state: tuple[torch.Tensor, torch.Tensor | None] | None = None

    def reseed(self, seed: int | None) -> None:
        self.seed, self._state = seed, None

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
