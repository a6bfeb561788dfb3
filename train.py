"""Train a learned metric: ``python train.py experiment=NAME [key=value ...]`` (the README's "Train" sections list
the experiments and overrides). The composition lives in ``conf/``; the work in ``learned_metrics.train.run``; every
failure a user can meet ends as one line through ``learned_metrics.boundary``.
"""

import os
import sys
from pathlib import Path

from learned_metrics.progress import StartUp

startup = StartUp()  # before the imports below: the start-up line counts them

from learned_metrics.boundary import exit_on_stop_signals, run_command  # noqa: E402

exit_on_stop_signals("train.py")  # first: Ctrl-C during the imports below is one line, not a traceback
os.environ.setdefault("PROJECT_ROOT", str(Path(__file__).resolve().parent))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:
    import hydra
    from omegaconf import DictConfig
except ModuleNotFoundError as exc:  # a core install: scoring and meta-evaluation only
    sys.exit(f"train.py: error: training needs the 'train' extra ({exc.name} is not installed): "
             "pip install 'learned-metrics[train]'")

from learned_metrics.train.config import register_resolvers  # noqa: E402
from learned_metrics.train.run_folders import check_run_folder  # noqa: E402

register_resolvers()


@hydra.main(version_base="1.3", config_path="conf", config_name="train")
def main(cfg: DictConfig) -> float | None:
    clock = startup if not startup.reported else StartUp()  # a sweep's later runs (-m) time their own start
    clock.lap("config")  # Hydra's import and composition
    result: dict[str, float | None] = {}

    def task() -> int:
        folder = check_run_folder(cfg)  # before Lightning's import (seconds): a refused folder is refused at once
        from learned_metrics.train.run import optimized_metric_value, train

        clock.lap("imports")  # Lightning, torch, transformers
        result["value"] = optimized_metric_value(cfg, train(cfg, clock, folder))
        return 0

    code = run_command("train.py", task)
    if code:
        sys.exit(code)
    return result.get("value")


if __name__ == "__main__":
    main()
