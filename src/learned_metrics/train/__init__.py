"""Training: ``python train.py experiment=NAME`` composes the config and calls :func:`run.train`.

- :mod:`~learned_metrics.train.run`: the whole path, top to bottom (check, build, fit, best, export, report);
- :mod:`~learned_metrics.train.datamodule`, :mod:`~learned_metrics.train.sampler`: tokenized, length-grouped
  batches (the LightningModule itself is :mod:`learned_metrics.models.classifier`);
- :mod:`~learned_metrics.train.checkpointing`: atomic checkpoint files, ``last.ckpt`` every N steps;
- :mod:`~learned_metrics.train.config`: the OmegaConf resolvers ``conf/`` uses;
- :mod:`~learned_metrics.train.run_folders`: reading run folders for ``learned-metrics runs list``.
"""
