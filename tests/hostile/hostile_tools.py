"""Running the real commands as a hostile user would, and checking the promise after each run.

The promise (docs/safety.md): a refused command exits non-zero with one line naming what is wrong,
prints no traceback, leaves no output and no temporary file, and every file the user had is
byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
LEARNED_METRICS = [str(Path(sys.executable).with_name("learned-metrics"))]
BUILD_SHUFFLE_SET = [PYTHON, str(ROOT / "data_prep" / "build_shuffle_set.py")]
BUILD_ANLI = [PYTHON, str(ROOT / "data_prep" / "build_anli_augmented.py")]
TRAIN = [PYTHON, str(ROOT / "train.py")]
# Root ignores file modes; without these two capabilities it obeys them like any user.
DROP_ROOT_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if ": error: " in line]


def run(cmd: list[str], *, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None,
        as_user: bool = False, timeout: int = 300) -> Result:
    """Run a command the way a user would (offline, no terminal)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "OMP_NUM_THREADS": "1",
                "PROJECT_ROOT": str(ROOT), **(env or {})}
    if as_user and os.geteuid() == 0:
        cmd = [*DROP_ROOT_OVERRIDE, *cmd]
    proc = subprocess.run(cmd, cwd=cwd or ROOT, input=stdin if stdin is not None else "", capture_output=True,
                          text=True, env=full_env, timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_refused(result: Result, *fragments: str, code: int = 2) -> str:
    """Non-zero exit, no traceback, exactly one error line, naming every fragment; returns the line."""
    assert "Traceback" not in result.err + result.out, result.err[-3000:]
    assert result.code == code, (result.code, result.err[-3000:])
    lines = result.error_lines
    assert len(lines) == 1, result.err[-3000:]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def digest(*roots: Path) -> dict[str, str]:
    """Every file, folder and link under ``roots`` with a hash of its bytes (not following links)."""
    found: dict[str, str] = {}
    for root in roots:
        paths = [root] if not root.is_dir() or root.is_symlink() else [root, *sorted(root.rglob("*"))]
        for path in paths:
            if path.is_symlink():
                found[str(path)] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                found[str(path)] = "dir"
            elif path.exists():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def temporaries(folder: Path) -> list[str]:
    """Temporaries the output policy would leave behind (hidden ``.NAME.lmtmp-...`` entries)."""
    return sorted(p.name for p in folder.rglob("*") if ".lmtmp-" in p.name)


# --- artefacts -----------------------------------------------------------------------------------


def copy_model(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


def craft_checkpoint(model_dir: Path, path: Path, **fields) -> Path:
    """A learned-metrics checkpoint built from a model folder; ``fields`` replace or add top-level entries.

    As in a training run's checkpoint, the tokenizer is not inside: export finds it through the card's
    ``base_model`` (``model_dir``), there being no ``tokenizer/`` folder beside ``path``'s folder.
    """
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    checkpoint = {
        "state_dict": {f"model.{k}": v for k, v in model.state_dict().items()},
        "hf_config": model.config.to_dict(),
        "learned_metric": {"kind": "faithfulness", "base_model": str(model_dir), "preprocessing": {"max_length": 64}},
        "global_step": 1,
    }
    checkpoint.update(fields)
    torch.save(checkpoint, path)
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


PAIRS = [{"grounding": f"On Monday, Anna went to the market and bought {n} apples.",
          "generation": f"Anna bought {n} apples."} for n in range(2, 8)]


EVIL_MODULE = '''
from pathlib import Path
Path({marker!r}).write_text("model code ran")
from transformers import PretrainedConfig, PreTrainedModel
class EvilConfig(PretrainedConfig):
    model_type = "evil"
class EvilModel(PreTrainedModel):
    config_class = EvilConfig
'''


def make_remote_code_folder(source: Path, folder: Path, marker: Path, *, where: str = "config") -> Path:
    """A copy of ``source`` asking to run ``evil.py`` (which writes ``marker`` when imported).

    ``where="config"``: an unknown model_type with ``auto_map`` in config.json (transformers would
    prompt ``[y/N]``); ``where="tokenizer"``: a known architecture whose tokenizer_config.json maps
    AutoTokenizer to the module.
    """
    shutil.copytree(source, folder)
    (folder / "evil.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    if where == "config":
        config = json.loads((folder / "config.json").read_text())
        config.update(model_type="evil", auto_map={"AutoConfig": "evil.EvilConfig",
                                                   "AutoModelForSequenceClassification": "evil.EvilModel"})
        (folder / "config.json").write_text(json.dumps(config))
    else:
        tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
        tokenizer_config.update(auto_map={"AutoTokenizer": ["evil.EvilTokenizer", None]},
                                tokenizer_class="EvilTokenizer")
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    return folder


# --- in-process runs (no interpreter start-up: the same boundary, the same one line) -------------------


def _captured(capsys, call) -> Result:
    """Run ``call`` (which returns an exit code), with whatever it printed; an escaped exception is a traceback."""
    import traceback

    capsys.readouterr()
    try:
        code = call()
    except SystemExit as exc:  # argparse's refusal: the console script would exit with this code
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:  # what a user would see as a traceback
        out, err = capsys.readouterr()
        return Result(1, out, err + traceback.format_exc())
    out, err = capsys.readouterr()
    return Result(code, out, err)


def cli(capsys, *argv: object) -> Result:
    """``learned-metrics ARGV`` in this process."""
    from learned_metrics.cli import main

    return _captured(capsys, lambda: main([str(arg) for arg in argv]))


def shuffle_set(capsys, *argv: object) -> Result:
    """``python data_prep/build_shuffle_set.py ARGV`` in this process (the script's own entry point)."""
    from learned_metrics.cli.prep import shuffle_set_script

    return _captured(capsys, lambda: shuffle_set_script([str(arg) for arg in argv]))


def anli_augmented(capsys, *argv: object) -> Result:
    """``python data_prep/build_anli_augmented.py ARGV`` in this process (the script's own entry point)."""
    from learned_metrics.cli.prep import anli_script

    return _captured(capsys, lambda: anli_script([str(arg) for arg in argv]))


def train_run(capsys, cfg) -> Result:
    """``python train.py`` with a composed config (tests/conftest.py's ``train_config``), in this process."""
    from learned_metrics.boundary import run_command
    from learned_metrics.train.run import train

    return _captured(capsys, lambda: run_command("train.py", lambda: train(cfg)))


def damaged_dataset(source: Path, target: Path, edit) -> Path:
    """A copy of the saved DatasetDict ``source`` at ``target``, changed by ``edit(dict of split -> Dataset)``.

    ``edit`` changes the dict in place (drop a split, replace one with ``ds.select([])`` or
    ``ds.remove_columns(...)``); the data-prep report goes along.
    """
    import datasets

    splits = dict(datasets.load_from_disk(str(source)))
    edit(splits)
    datasets.DatasetDict(splits).save_to_disk(str(target))
    if (source / "report.json").exists():
        shutil.copy(source / "report.json", target / "report.json")
    return target
