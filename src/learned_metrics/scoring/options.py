"""Every scoring option, declared once in :class:`ScoringOptions`: the CLI flags, ``load_scorer`` keywords, provenance
and the ``--resume`` fingerprint come from it. Importable without torch so that ``learned-metrics --help`` stays fast.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import FORMATS
from learned_metrics.labels import METRIC_KINDS, SCORE_MODES, parse_label_order
from learned_metrics.settings import Settings, flag_name, parse_setting, setting

MODES = SCORE_MODES
PREMISE_STRATEGIES = ("truncate", "chunk")
GRANULARITIES = ("document", "paragraph", "sentence")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
ENGINES = ("torch", "onnx", "ray")
MC_MASKS = ("per-row", "torch")
# torch's CPU generator keeps a seed's low 32 bits (2**32 draws what 0 draws): every mask source takes 0 .. 2**32 - 1
MAX_SEED = 2**32 - 1
DEFAULT_CHUNK_SIZE = 10_000  # rows sorted together; also the most an interrupted run can lose
BOTH = tuple(METRIC_KINDS)
NLI = ("faithfulness",)


def _seed_in_range(seed: int) -> int:
    """A seed every mask source draws its own masks from (per-row, torch's CPU and GPU generators, a compiled graph's),
    checked wherever one is given: the option and a per-call ``Scorer.score(seed=)``."""
    if seed > MAX_SEED:
        raise UserError(f"--seed (seed=) must be at most {MAX_SEED}, got {seed}: torch's CPU generator keeps a seed's "
                        "low 32 bits, so a larger seed would draw the masks of a smaller one")
    return seed


# a setting() naming the metric kinds it applies to (a flag of ``score KIND`` only for those). Device, precision,
# max_tokens and batch_size change scores (kernels, rounding, batch shapes): only scores=False fields stay out of
# provenance and the --resume fingerprint
_option = functools.partial(setting, kinds=BOTH)


@dataclass(frozen=True)
class ScoringOptions(Settings):
    """How a scorer runs. Every field is a ``load_scorer`` keyword and a ``learned-metrics score`` flag."""

    device: str = _option("auto", f"one of {', '.join(DEVICES)} or cuda:N")
    precision: str = _option("auto", "auto = bf16 on GPUs that support it, fp32 on CPU", choices=PRECISIONS)
    mc_samples: int = _option(1, "Monte-Carlo dropout passes K (paper: 15); 0 or 1 = deterministic", minimum=0)
    seed: int | None = _option(0, "seed of the MC dropout masks (reproducible runs), 0 to 4294967295", minimum=0,
                               check=_seed_in_range)
    max_tokens: int | None = _option(
        None, "token budget per forward: rows x padded length (default on CPU 1024 for base-sized and larger "
        "models, up to 4096 for tiny ones; on GPU 32768 for large models, more for smaller ones)", minimum=1)
    batch_size: int | None = _option(None, "cap on rows per batch (default: only the token budget limits batches)",
                                     minimum=1)
    max_length: int | None = _option(
        None, "tokens per input (default: the length the model was trained with, capped by its limit; at least "
        "the special tokens plus one token of each text)", minimum=1)
    mode: str | None = _option(None, "score mode (default: the card's, else e-c)", kinds=NLI, choices=MODES)
    premise_strategy: str = _option("truncate", "long groundings: truncate the premise (paper) or score premise "
                                    "chunks (the default for a file in a benchmark layout)", kinds=NLI,
                                    choices=PREMISE_STRATEGIES)
    granularity: str = _option(
        "document", "grounding units each generation sentence is checked against: document (the whole grounding; "
        "with --premise-strategy chunk, fitted chunks of a grounding too long for the model), paragraph or "
        "sentence (SummaC-ZS style: best unit per generation sentence, mean over sentences)", kinds=NLI,
        choices=GRANULARITIES)
    chunk_tokens: int | None = _option(
        None, "with --premise-strategy chunk: chunk every grounding into sentence-packed chunks of at most this many "
        "tokens (MiniCheck: 400, AlignScore: 350; capped by what fits beside the claim); default: only groundings "
        "too long for the model, in chunks of what fits", kinds=NLI, minimum=1)
    claim_split: str = _option("sentences", "with --premise-strategy chunk: sentences (AlignScore: best chunk per "
                               "claim sentence, mean over sentences) or whole (MiniCheck: the whole claim against "
                               "each chunk, the best chunk's score)", kinds=NLI, choices=("sentences", "whole"))
    label_order: tuple[str, ...] | None = _option(
        None, "class names in index order for a model whose config has generic labels (LABEL_0, LABEL_1, ...), as "
        "its model card states, e.g. entailment,neutral,contradiction, or incoherent,coherent for a coherence "
        "classifier (docs/scoring.md lists common checkpoints)", kinds=BOTH, check=parse_label_order, kind="list")
    tokenizer_workers: int | None = _option(
        None, "threads that tokenize ahead of the model, so a GPU does not wait for the CPU (default: on a GPU the "
        "cores available less one, at most 4; on CPU the cores torch's threads leave free, often none); 0 = "
        "tokenize, then run the model, one after the other; at most the cores available. Scores are identical either "
        "way", minimum=0, scores=False)  # the same batches reach the model whoever tokenized them
    compile: bool = _option(False, "compile the model's forward with torch.compile (inductor; the first batches of "
                            "each shape wait for compilation; scores agree with the eager forward to about 1e-6, "
                            "MC masks come from the compiled graph's own generator). See docs/scoring.md for when it "
                            "pays", flag=True)
    mc_masks: str = _option(
        "per-row", "where MC dropout masks come from: per-row (the seed and each row's tokens: a row's score is the "
        "same in any batch, process or Ray actor) or torch (torch's generator, as the paper code: a "
        "row's score then depends on the rows scored with it; 5-10x faster on a GPU for DeBERTa-v3-large, where "
        "per-row masks are drawn row by row; no faster on CPU)", choices=MC_MASKS)
    allow_pickle: bool = _option(False, "accept weights that exist only as pytorch_model.bin (a pickle: trusted "
                                 "files only)", flag=True,
                                 scores=False)  # decides only whether a pickle may load; the weights are hashed
    engine: str = _option("torch", "what runs the model's forward: torch, onnx (ONNX Runtime on CPU, the export's "
                          "model.onnx from `learned-metrics export --onnx-from DIR`; no --mc-samples), or ray (the "
                          "torch forward on a pool of Ray actors, Parquet output; docs/scaling.md)", choices=ENGINES)
    onnx_precision: str = _option("fp32", "graph --engine onnx runs: fp32 (model.onnx) or int8 (model.int8.onnx, "
                                  "an approximation)", choices=("fp32", "int8"))

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.chunk_tokens, self.claim_split) != (None, "sentences") and (self.premise_strategy, self.granularity) \
                == ("truncate", "document"):  # a truncated premise has no chunks to size or claim sentences to split
            raise UserError("--chunk-tokens and --claim-split need --premise-strategy chunk (or a --granularity other "
                            "than document)")
        if self.engine == "onnx":  # the graph runs on CPU in fp32 (or int8) and has no dropout
            if self.device not in ("auto", "cpu") or self.precision not in ("auto", "fp32") or self.compile \
                    or self.mc_masks != "per-row":
                raise UserError("--engine onnx runs on CPU from the exported graph, without dropout: drop --device, "
                                "--precision, --compile and --mc-masks, or use --engine torch")
            if self.mc_samples > 1:
                raise UserError("--mc-samples needs dropout, which the ONNX graph does not have: use --engine torch "
                                "for Monte-Carlo dropout")
        elif self.onnx_precision != "fp32":  # no graph runs: provenance would name a precision no score came from
            raise UserError(f"--onnx-precision {self.onnx_precision} is for --engine onnx (the {self.engine} engine "
                            "runs the PyTorch weights)")

    @property
    def torch_masks(self) -> bool:
        """MC masks from torch's generator (``mc_masks='torch'``, or a compiled forward, whose graph cannot take
        per-row masks): a seeded stream per chunk and per process, not per row."""
        return self.compile or self.mc_masks == "torch"

    @classmethod
    def checked_seed(cls, seed: Any) -> int | None:
        """A per-call seed (``Scorer.score(seed=)``) through the option's own declaration and range."""
        return parse_setting(next(spec for spec in fields(cls) if spec.name == "seed"), seed)

    def applying(self, metric: str) -> dict[str, Any]:
        """What can change a score of ``metric``: :meth:`affecting`, None where a field does not apply to it."""
        return self.affecting(where=of_kind(metric))


@dataclass(frozen=True)
class FileRun(Settings):
    """The ``learned-metrics score`` file options. Only the chunk size (a compiled forward's MC masks follow the
    chunks) and ``details`` (an output column) change the output."""

    input_format: str | None = _option(None, "format of --input when its suffix does not say (default for -: jsonl)",
                                       choices=FORMATS, scores=False)
    output_format: str | None = _option(None, "format of --output when its suffix does not say (default for -: "
                                        "jsonl)", choices=FORMATS, scores=False)
    chunk_size: int = _option(DEFAULT_CHUNK_SIZE, "rows read, sorted and scored at a time: bounds memory, and is "
                              "what an interrupted run can lose", minimum=1)
    resume: bool = _option(False, "continue an interrupted run of the same command after its last finished chunk "
                           "(starts from the beginning when there is nothing to continue)", flag=True, scores=False)
    restart: bool = _option(False, "discard what an interrupted run of this output finished and score from the "
                            "beginning", flag=True, scores=False)
    system_field: str | None = _option(None, "field naming each row's system: prints a per-system table of mean "
                                       "scores with bootstrap 95%% CIs at the end", metavar="FIELD", scores=False)
    details: bool = _option(False, "add a details column: per generation sentence its score and the grounding unit "
                            "that supported it most (see --granularity)", kinds=NLI, flag=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.resume and self.restart:  # the API as the CLI: neither silently wins
            raise UserError("give --resume or --restart, not both")


@dataclass(frozen=True)
class RaySettings(Settings):
    """Where and on what ``score --engine ray`` runs: none of it changes a score (MC masks follow each row)."""

    ray_address: str | None = _option(None, "Ray cluster to join (default: $RAY_ADDRESS, else a local instance with "
                                      "this machine's cores and GPUs)", metavar="ADDRESS", scores=False)
    ray_actors: int | None = _option(None, "scoring actors, each loading the model once (default: one per GPU "
                                     "with GPUs per actor, else the cores / CPUs per actor)", minimum=1, scores=False,
                                     metavar="N")
    ray_cpus_per_actor: int = _option(1, "CPUs each actor reserves (its torch threads)", minimum=1, scores=False,
                                    metavar="N")
    ray_gpus_per_actor: int | None = _option(None, "GPUs each actor reserves (default: 1 when the cluster has GPUs and "
                                             "--device is not cpu, else 0)", minimum=0, scores=False, metavar="N")
    ray_single_file: bool = _option(False, "write --output as one Parquet file instead of a folder of part files",
                                    flag=True, scores=False)

    def check(self, engine: str, device: str, world: int = 1) -> None:
        """The combinations that make no sense, refused before anything starts (``world``: launched processes)."""
        given = [flag_name(name) for name, value in self.to_json().items() if value != RaySettings().to_json()[name]]
        if engine != "ray" and given:
            raise UserError(f"{', '.join(given)} need --engine ray (the Ray options say where its actors run)")
        if engine == "ray" and device == "cpu" and (self.ray_gpus_per_actor or 0) > 0:
            raise UserError("--ray-gpus-per-actor reserves GPUs that --device cpu never uses: drop one of them")
        if engine == "ray" and world > 1:
            raise UserError("--engine ray under accelerate launch (or torchrun) would score the whole input in every "
                            "process: run the command once, the Ray engine starts its own actors")


def of_kind(kind: str) -> Callable[[Any], bool]:
    """Which fields apply to metric ``kind``: the flags of ``score KIND``, what can change its scores."""
    return lambda spec: kind in spec.metadata["kinds"]
