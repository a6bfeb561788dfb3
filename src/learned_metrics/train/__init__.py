"""Training: ``python train.py experiment=NAME`` composes the config and calls :func:`run.train` (the whole path,
top to bottom); the LightningModule itself is :mod:`learned_metrics.models.classifier`."""
