"""The LightningModule: one sequence classifier for both metrics. Coherence puts a 2-class head on any encoder;
faithfulness keeps an NLI model's 3-way head, its label order resolved by name. Checkpoints carry the HF config and
the training card, so ``learned-metrics export`` rebuilds a transformers folder offline."""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score

from learned_metrics.errors import UserError
from learned_metrics.labels import METRIC_KINDS, resolve_label_ids
from learned_metrics.safety import check_model_folder, load_classifier, load_config
from learned_metrics.validate import flag

_NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")


def load_pretrained_classifier(name_or_path: str, metric_kind: str, head_labels: list[str] | None = None,
                               allow_pickle: bool = False):
    """Load a ``*ForSequenceClassification`` with the label set ``metric_kind`` needs. ``head_labels`` (coherence): a
    fresh head with these labels unless the model has exactly them; None (faithfulness): its NLI head, by name."""
    folder = check_model_folder(name_or_path)  # no custom code, tokenizer present: checked once before any loading
    config = load_config(folder)
    required, head = METRIC_KINDS[metric_kind], {}
    if head_labels is not None:
        if sorted(head_labels) != sorted(required):
            raise UserError(f"model.head_labels must be an ordering of {list(required)}, got {list(head_labels)}")
        if not _has_labels(config.id2label, required):
            labels = dict(enumerate(head_labels))
            head = {"num_labels": len(labels), "id2label": labels, "label2id": {v: k for k, v in labels.items()},
                    "ignore_mismatched_sizes": True}
    elif not _has_labels(config.id2label, required):
        resolve_label_ids(config.id2label, required, option="model.head_labels")  # raises the clear error
        raise UserError(f"model '{name_or_path}' has {len(config.id2label)} classes, expected {len(required)}")
    return load_classifier(folder, allow_pickle=allow_pickle, flag="model.allow_pickle=true", **head)


def _has_labels(id2label: dict, required) -> bool:
    try:
        resolve_label_ids(id2label, required)
    except UserError:
        return False
    return len(id2label) == len(required)


class SequenceClassifier(L.LightningModule):
    """Fine-tunes a transformers sequence classifier; logs loss, accuracy and macro F1."""

    def __init__(self, name_or_path: str, metric_kind: str = "coherence", head_labels: list[str] | None = None,
                 allow_pickle: bool = False, lr: float = 2e-6, weight_decay: float = 0.01, warmup_ratio: float = 0.0,
                 adam_epsilon: float = 1e-8, betas: tuple[float, float] = (0.9, 0.999)):
        super().__init__()
        allow_pickle = flag(allow_pickle, "model.allow_pickle")  # "no" is not False: never read by its truthiness
        if metric_kind not in METRIC_KINDS:
            raise UserError(f"model.metric_kind must be one of {sorted(METRIC_KINDS)}, got '{metric_kind}'")
        self.save_hyperparameters()
        self.model = load_pretrained_classifier(name_or_path, metric_kind, head_labels, allow_pickle)
        self.model.train()  # from_pretrained returns eval mode; Lightning keeps module modes, so dropout would stay off
        self.label_ids = resolve_label_ids(self.model.config.id2label, METRIC_KINDS[metric_kind])
        self.card: dict[str, Any] = {}  # the training card (learned_metrics.card), set once when fitting starts
        num_classes = self.model.config.num_labels
        metrics = MetricCollection({"acc": MulticlassAccuracy(num_classes=num_classes, average="micro"),
                                    "f1": MulticlassF1Score(num_classes=num_classes, average="macro")})
        self.val_metrics = metrics.clone(prefix="val/")
        self.test_metrics = metrics.clone(prefix="test/")

    def forward(self, batch: dict[str, torch.Tensor]):
        inputs = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids", "labels")}
        return self.model(**inputs)

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        out = self(batch)
        self.log("train/loss", out.loss, prog_bar=True, batch_size=batch["labels"].size(0))
        return out.loss

    def _eval_step(self, batch: dict[str, torch.Tensor], prefix: str, metrics: MetricCollection) -> None:
        out = self(batch)
        labels = batch["labels"]
        metrics.update(out.logits.argmax(-1), labels)
        self.log(f"{prefix}/loss", out.loss, prog_bar=True, batch_size=labels.size(0), sync_dist=True)
        self.log_dict(metrics, on_step=False, on_epoch=True, prog_bar=True, batch_size=labels.size(0))

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        self._eval_step(batch, "val", self.val_metrics)

    def test_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        self._eval_step(batch, "test", self.test_metrics)

    def configure_optimizers(self):
        from transformers import get_linear_schedule_with_warmup

        hp = self.hparams
        decay, no_decay = [], []
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                (no_decay if any(key in name for key in _NO_DECAY) else decay).append(param)
        groups = [{"params": decay, "weight_decay": hp.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=hp.lr, eps=hp.adam_epsilon, betas=tuple(hp.betas))
        total = max(1, int(self.trainer.estimated_stepping_batches))
        scheduler = get_linear_schedule_with_warmup(optimizer, int(hp.warmup_ratio * total), total)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """What export needs (the tokenizer is in the run folder) and the torch CPU/CUDA RNG states (tensors only,
        so checkpoints load with ``weights_only``)."""
        checkpoint["hf_config"] = self.model.config.to_dict()
        checkpoint["learned_metric"] = self.card
        checkpoint["rng_states"] = {"torch": torch.get_rng_state()}
        if torch.cuda.is_available():
            checkpoint["rng_states"]["cuda"] = torch.cuda.get_rng_state_all()

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Resuming restores the dropout RNG too, so a resumed run matches an uninterrupted one."""
        states = checkpoint.get("rng_states")
        if states is None:
            return
        torch.set_rng_state(states["torch"])
        if "cuda" in states and torch.cuda.is_available() and len(states["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(states["cuda"])
