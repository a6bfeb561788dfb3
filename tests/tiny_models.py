"""Tiny models and tokenizers built from configs, for offline tests.

Tokenizers are byte-level BPE trained here on generated text, so any input is
tokenizable; models are 2-layer, hidden-size-32 versions of the real
architectures (RoBERTa for the coherence classifier, DeBERTa-v2 for NLI).
"""

from __future__ import annotations

import random
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from torch import nn
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertConfig,
    DebertaV2Config,
    PreTrainedTokenizerFast,
    RobertaConfig,
)

from learned_metrics.data.demo import coherent_document, nli_triple
from learned_metrics.export import write_export

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def training_corpus(n: int = 400, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    corpus = [" ".join(coherent_document(rng)) for _ in range(n)]
    for _ in range(n):
        triple = nli_triple(rng)
        corpus += [triple["context"], triple["hypothesis"]]
    corpus += ["Here is what I know: I am not sure, but I think I believe I love that! I like that! yep. Also Sure!"]
    return corpus


def build_tokenizer(out_dir: Path, vocab_size: int = 600) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer with RoBERTa-style special tokens and save it."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(training_corpus(), trainer)
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
    )
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=128,
    )
    fast.save_pretrained(out_dir)
    return fast


def _common(tokenizer, **overrides) -> dict:
    cfg = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    cfg.update(overrides)
    return cfg


def build_model(
    out_dir: Path,
    arch: str = "roberta",
    id2label: dict[int, str] | None = None,
    seed: int = 0,
    **overrides,
) -> Path:
    """Save a tiny ``arch`` (roberta|deberta|bert) sequence classifier with its tokenizer in ``out_dir``."""
    import torch

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out_dir)
    labels = {}
    if id2label is not None:
        labels = {"id2label": id2label, "label2id": {v: k for k, v in id2label.items()}}
    if arch == "roberta":
        config = RobertaConfig(**_common(tokenizer, max_position_embeddings=130, **labels, **overrides))
    elif arch == "deberta":
        config = DebertaV2Config(
            **_common(
                tokenizer,
                max_position_embeddings=128,
                relative_attention=True,
                position_buckets=32,
                pos_att_type=["p2c", "c2p"],
                **labels,
                **overrides,
            )
        )
    elif arch == "bert":
        config = BertConfig(**_common(tokenizer, max_position_embeddings=128, **labels, **overrides))
    else:
        raise ValueError(arch)
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config)
    model.save_pretrained(out_dir)
    return out_dir


NLI_ORDER_DEBERTA = {0: "entailment", 1: "neutral", 2: "contradiction"}
NLI_ORDER_ROBERTA = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}


COHERENCE_ORDER = {0: "incoherent", 1: "coherent"}
GROUNDINGS = [
    "On Monday, Anna went to the market and bought 3 apples. The weather was mild.",
    "On Friday, Ben went to the library and bought 5 books.",
    "Carla walked to the station. Then she waited for the train. Finally, she went home.",
    "On Sunday, David went to the harbour and bought 2 maps. The weather was mild. He paid with a card.",
    "Elif bought bread.",
]
GENERATIONS = ["Anna bought apples.", "Ben never went to the library.", "Carla likes trains a lot.",
               "David went there on Tuesday.", "Elif bought 4 loaves of bread at the bakery on Monday."]
DOCUMENTS = [
    ["First, Anna woke up at 7 o'clock.", "Then she walked to the market.", "Finally, she went home."],
    ["First, Ben went to the library.", "After that, he read a book.", "Later, it started to rain.",
     "Finally, he told the family about the trip."],
    ["First, Carla paid for the bread.", "Finally, she put it on the table."],
]


# --- scoring artefacts: inputs, exports with cards, modified copies -------------------------------


def copy_tokenizer(src: Path, dst: Path) -> None:
    AutoTokenizer.from_pretrained(src).save_pretrained(dst)


def biased_copy(src: Path, dst: Path, label: str) -> Path:
    """A copy of a classifier whose output bias makes ``label`` (by name) win by a wide margin."""
    model = AutoModelForSequenceClassification.from_pretrained(src)
    head = [m for m in model.modules() if isinstance(m, nn.Linear) and m.out_features == model.config.num_labels][-1]
    index = next(int(i) for i, name in model.config.id2label.items() if name.lower() == label)
    with torch.no_grad():
        head.bias.zero_()
        head.bias[index] = 12.0
    model.save_pretrained(dst)
    copy_tokenizer(src, dst)
    return dst


def export_with_card(src: Path, dst: Path, card: dict) -> Path:
    model = AutoModelForSequenceClassification.from_pretrained(src)
    return write_export(model, src, card, dst)


def coherence_card(splitter: str | None = "pysbd", joiner: str | None = "\n") -> dict:
    return {
        "kind": "coherence",
        "label_names": ["incoherent", "coherent"],
        "preprocessing": {"splitter": splitter, "joiner": joiner, "max_length": 128, "text_fields": ["text"],
                          "truncation": "end"},
        "scoring": {"score": "P(coherent)"},
    }


def faithfulness_card(default_mode: str = "e-c") -> dict:
    return {
        "kind": "faithfulness",
        "label_names": ["entailment", "neutral", "contradiction"],
        "preprocessing": {"splitter": None, "joiner": None, "max_length": 128,
                          "text_fields": ["premise", "hypothesis"], "truncation": "premise_only"},
        "scoring": {"default_mode": default_mode},
    }
