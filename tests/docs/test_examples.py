"""Every command example in README.md and docs/*.md is checked against the code, so docs and behaviour cannot drift.

The examples are read from the fenced ``bash``/``sh`` blocks (every line but comments) and from ``console`` and
untagged blocks (the lines after a ``$ `` prompt); ``\\`` continuations are joined, ``# ...`` comments dropped,
``for VAR in ...; do ...; done`` loops expanded, and ``;``, ``&``, ``&&`` and ``|`` split a line into commands.
Launchers are peeled off (``VAR=value``, ``/usr/bin/env``, ``srun``, ``sbatch --wrap "..."``, ``torchrun ...``,
``accelerate launch ... -m learned_metrics.cli``). Each command then falls in exactly one category:

- ``run``: a ``learned-metrics`` command whose inputs are shipped in ``examples/`` (or written by an earlier
  command of the same doc) runs for real, in-process through :func:`learned_metrics.cli.main`, in a temporary
  folder where ``examples/`` and ``conf/`` are links to the shipped ones, so every output lands in the
  temporary folder. The doc's order is kept (a benchmark reads what the score loop above it wrote). A console
  block that shows ``... error: ...`` under a command expects that exit and that message.
- ``tiny model``: a ``learned-metrics score`` command whose ``--model`` is a trained run's export
  (``checkpoints/<experiment>/latest/export``) runs the same way with the tiny exported model of
  ``tests/conftest.py`` in its place (the coherence or faithfulness one, by the command's kind): only the model
  path is substituted; every other argument runs as written.
- ``train``: ``python train.py ...`` (also under ``torchrun``/``srun``/``/usr/bin/env``, and ``-m`` sweeps)
  is composed with Hydra exactly as written (config groups, keys and ``hydra.*`` overrides must exist) and
  resolved; the README's "any override" command also trains for real (tiny model and data set substituted,
  ``@pytest.mark.slow``).
- ``parse``: what needs the Hub, GPUs, accelerate, SLURM, wandb or a user's own files is parsed, not run:
  ``learned-metrics`` and ``data_prep/*.py`` command lines by the real parsers (every flag must exist; an
  abbreviated command, one with ``...`` in it, has each of its flags looked up in its subcommand's parser),
  ``make`` targets in the Makefile, ``wandb sweep FILE`` through :func:`learned_metrics.sweeps.load_sweep`,
  ``python -`` here-documents compiled. A user's own input file must be one of ``PLACEHOLDER_INPUTS``: a path
  under ``examples/`` that is missing, or any other unknown input, fails the test.

A program that none of these know fails the test too, so a new kind of example cannot go unchecked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Inputs the docs name that stand for the reader's own files (or a download): parsed, never run.
PLACEHOLDER_INPUTS = {
    "-",  # standard input
    "EXPORT",  # "your export folder"
    "/models/roberta-large-mnli",  # a local NLI checkpoint
    "true/frank.csv",  # the TRUE benchmark's file (a download)
    "summaries.jsonl", "docs.csv", "pairs.jsonl", "summeval.jsonl", "big.jsonl",  # the reader's texts
    "model_annotations.aligned.paired.jsonl", "my_scores.jsonl",  # SummEval's official file, your metric
    "checkpoints", "checkpoints/", "checkpoints/nli_anli_aug",  # run folders that training writes
    "juliussteen/DeBERTa-v3-FaithAug",  # a Hub model id (a download)
}
# Trained runs' exports the docs score with: the tiny exported models stand in for them.
TRAINED_EXPORTS = re.compile(r"^checkpoints/[a-z_]+/latest/export$")
SHELL_BUILTINS = {"wait", "cat"}
WANDB_COMMANDS = {"login", "sweep", "agent"}


class DocDrift(AssertionError):
    """A doc example that the code does not accept (or that fails when run)."""


@dataclass
class Command:
    doc: str
    line: int
    argv: list[str]
    expect_error: str | None = None
    heredoc: str | None = None

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}: {shlex.join(self.argv)}"


# --- reading the examples ---------------------------------------------------------------------------------------

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def extract_commands(text: str, doc: str = "snippet") -> list[Command]:
    """The command examples of a Markdown text, in order (see the module docstring for the rules)."""
    commands: list[Command] = []
    for fence in FENCE.finditer(text):
        lang, body = fence.group(1), fence.group(2)
        if lang not in ("bash", "sh", "console", ""):
            continue
        first_line = text[: fence.start(2)].count("\n") + 1
        commands += _block_commands(body.splitlines(), first_line, doc, prompted=lang in ("console", ""))
    return commands


def _block_commands(lines: list[str], first_line: int, doc: str, *, prompted: bool) -> list[Command]:
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        i += 1
        if prompted:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        while i < len(lines) and (line.rstrip().endswith("\\") or _open_loop(line)):
            if line.rstrip().endswith("\\"):
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            else:  # a `for ... do` whose body and `done` follow on their own lines
                line = re.sub(r"\s+#.*$", "", line).rstrip()
                line = line.removesuffix(";") + (" " if line.endswith("do") else "; ") + lines[i]
            i += 1
        heredoc = None
        marker = re.search(r"<<-?\s*'?(\w+)'?", line)
        if marker:
            end = next((j for j in range(i, len(lines)) if lines[j].strip() == marker.group(1)), len(lines))
            heredoc, line, i = "\n".join(lines[i:end]) + "\n", line[: marker.start()], end + 1
        expect_error = None
        if prompted and i < len(lines) and re.match(r"^[\w.-]+( [\w-]+)*: error: ", lines[i]):
            expect_error = lines[i].strip()
        for argv in split_shell(line):
            commands.append(Command(doc, first_line + start, argv, expect_error, heredoc))
    return commands


def _open_loop(line: str) -> bool:
    words = re.sub(r"#.*", "", line).replace(";", " ; ").split()
    return words[:1] == ["for"] and "done" not in words


def split_shell(line: str) -> list[list[str]]:
    """Simple commands of one shell line: comments dropped, ``for`` loops expanded, split on ; & && |."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    commands: list[list[str]] = []
    while tokens:
        if tokens[0] == "for":
            var, rest = tokens[1], tokens[3:]
            words, rest = rest[: rest.index(";")], rest[rest.index(";") + 1:]
            assert rest[0] == "do", line
            done = rest.index("done")
            body, tokens = rest[1:done], rest[done + 1:]
            for word in words:
                commands += _split_on_operators([re.sub(rf"\$\{{?{var}\}}?", word, t) for t in body])
        else:
            end = tokens.index("for") if "for" in tokens and tokens.index("for") > 0 else len(tokens)
            commands += _split_on_operators(tokens[:end])
            tokens = tokens[end:]
    return commands


def _split_on_operators(tokens: list[str]) -> list[list[str]]:
    """Split on ; & && | ||, dropping redirections (``> FILE``: the shell's output, not the command's)."""
    commands: list[list[str]] = [[]]
    skip = False
    for token in tokens:
        if token in (";", "&", "&&", "|", "||"):
            commands.append([])
        elif token in (">", ">>", "<"):
            skip = True
        elif skip:
            skip = False
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


# --- classifying and checking ------------------------------------------------------------------------------------


@dataclass
class Context:
    """What checking one doc's commands needs: the tiny models, and a record of what each command got."""

    models: dict[str, Path] = field(default_factory=dict)  # metric kind -> tiny export
    run: bool = True  # False: classify and parse only (the control tests and the counts)
    categories: list[tuple[str, str]] = field(default_factory=list)  # (category, where)
    capsys: object = None
    written: set[str] = field(default_factory=set)  # outputs of the commands classified so far

    def record(self, category: str, command: Command) -> None:
        self.categories.append((category, command.where))


def peel(argv: list[str]) -> list[str]:
    """The command under its launchers and environment assignments."""
    while argv:
        head = argv[0]
        if re.match(r"^[A-Z_][A-Z0-9_]*=", head) or head in ("/usr/bin/env", "env", "srun"):
            argv = argv[1:]
        elif head == "torchrun":
            script = next(i for i, t in enumerate(argv) if t.endswith(".py"))
            argv = ["python", *argv[script:]]
        elif head == "accelerate" and argv[1:2] == ["launch"]:
            module = argv.index("-m")
            if argv[module + 1] != "learned_metrics.cli":
                raise DocDrift(f"accelerate launch of an unknown module: {shlex.join(argv)}")
            argv = ["learned-metrics", *argv[module + 2:]]
        else:
            return argv
    return argv


def check_command(command: Command, ctx: Context) -> None:
    argv = peel(command.argv)
    if not argv:
        return
    program = argv[0]
    if program == "learned-metrics":
        check_learned_metrics(command, argv[1:], ctx)
    elif program == "python" and argv[1:2] == ["train.py"]:
        check_train(command, argv[2:], ctx)
    elif program == "python" and len(argv) > 1 and argv[1].startswith("data_prep/"):
        check_data_prep(command, argv[1], argv[2:], ctx)
    elif program == "python" and argv[1:3] == ["-m", "learned_metrics.sweeps"]:
        check_sweep_script(command, argv[3:], ctx)
    elif program == "python" and argv[1:2] == ["-"]:
        if command.heredoc is None:
            raise DocDrift(f"{command.where}: 'python -' without a here-document")
        compile(command.heredoc, command.where, "exec")
        ctx.record("parse", command)
    elif program == "make":
        targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))
        missing = [t for t in argv[1:] if t not in targets]
        if missing:
            raise DocDrift(f"{command.where}: no Makefile target {missing}")
        ctx.record("parse", command)
    elif program == "wandb":
        check_wandb(command, argv[1:], ctx)
    elif program == "sbatch":
        wrap = argv.index("--wrap")
        for inner in split_shell(argv[wrap + 1]):
            check_command(Command(command.doc, command.line, inner), ctx)
    elif program in SHELL_BUILTINS:
        for path in argv[1:]:
            check_input(command, path)
    else:
        raise DocDrift(f"{command.where}: no check knows the program {program!r} (add one to this test)")


def check_input(command: Command, path: str, ctx: Context | None = None) -> bool:
    """True when the input exists (shipped or written earlier); False for a declared placeholder."""
    if Path(path).exists() or (ctx is not None and path.rstrip("/") in ctx.written):
        return True
    if path in PLACEHOLDER_INPUTS:
        return False
    raise DocDrift(f"{command.where}: input {path!r} is neither shipped in examples/ nor written by an earlier "
                   "command of this doc (a placeholder for the reader's own file goes in PLACEHOLDER_INPUTS)")


def parse(parser: argparse.ArgumentParser, argv: list[str], command: Command) -> argparse.Namespace:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parser.parse_args(argv)
        except SystemExit:
            raise DocDrift(f"{command.where}: {stderr.getvalue().strip()}") from None


def subcommand_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``argv`` names, for an abbreviated command line."""
    for token in argv:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers or token not in subparsers[0].choices:
            break
        parser = subparsers[0].choices[token]
    return parser


def check_flags(parser: argparse.ArgumentParser, argv: list[str], command: Command) -> None:
    parser = subcommand_parser(parser, argv)
    unknown = [t.split("=")[0] for t in argv if t.startswith("-") and t != "-" and t != "..."
               and t.split("=")[0] not in parser._option_string_actions]
    if unknown:
        raise DocDrift(f"{command.where}: {parser.prog} has no option {', '.join(unknown)}")


def check_learned_metrics(command: Command, argv: list[str], ctx: Context) -> None:
    from learned_metrics.cli import build_parser
    from learned_metrics.outputs import inputs_of

    parser = build_parser()
    if "..." in argv:  # abbreviated ("the same command, plus --resume"): every flag must exist
        check_flags(parser, argv, command)
        ctx.record("parse", command)
        return
    check_flags(parser, argv, command)  # exact names: argparse would also take an unambiguous prefix
    args = parse(parser, argv, command)
    runnable, tiny, substituted = True, False, list(argv)
    for path in inputs_of(args):
        if getattr(args, "model", None) == path and TRAINED_EXPORTS.match(path):
            substituted[substituted.index(path)] = str(ctx.models.get(args.kind, path))
            tiny = True
            continue
        runnable &= check_input(command, path, ctx)
    if not runnable:
        ctx.record("parse", command)
        return
    ctx.record("tiny model" if tiny else "run", command)
    output = getattr(args, "output", None)
    if isinstance(output, str):
        ctx.written |= {output, *(str(p) for p in Path(output).parents)}
    if ctx.run:
        run_cli(command, substituted, ctx)


def run_cli(command: Command, argv: list[str], ctx: Context) -> None:
    from learned_metrics.cli import main

    ctx.capsys.readouterr()
    code = main(argv)
    out, err = ctx.capsys.readouterr()
    if command.expect_error is not None:
        if code == 0 or command.expect_error not in err:
            raise DocDrift(f"{command.where}: the doc shows\n  {command.expect_error}\nthe command exits {code} "
                           f"with\n  {err.strip()}")
    elif code != 0:
        raise DocDrift(f"{command.where}: exit {code}: {err.strip()}")


def check_train(command: Command, argv: list[str], ctx: Context) -> None:
    from conftest import compose_train_config
    from omegaconf import OmegaConf

    overrides = [t for t in argv if t not in ("-m", "--multirun")]
    unknown = [t for t in overrides if "=" not in t]
    if unknown:
        raise DocDrift(f"{command.where}: train.py takes key=value overrides, not {unknown}")
    try:
        cfg = compose_train_config(overrides)
        OmegaConf.to_container(cfg, resolve=True)
    except Exception as exc:  # Hydra's errors name the group, option or key that does not exist
        raise DocDrift(f"{command.where}: {type(exc).__name__}: {exc}") from None
    ctx.record("train", command)


def data_prep_parsers() -> dict[str, object]:
    from learned_metrics.cli.prep import add_anli_arguments, add_nli_arguments, add_shuffle_set_arguments

    return {"data_prep/build_shuffle_set.py": add_shuffle_set_arguments,
            "data_prep/build_anli_augmented.py": add_anli_arguments, "data_prep/build_nli.py": add_nli_arguments}


def check_data_prep(command: Command, script: str, argv: list[str], ctx: Context) -> None:
    from learned_metrics.boundary import CommandParser

    add_arguments = data_prep_parsers().get(script)
    if add_arguments is None:
        raise DocDrift(f"{command.where}: no script {script}")
    parser = CommandParser(prog=Path(script).name)
    add_arguments(parser)
    check_flags(parser, argv, command)
    parse(parser, argv, command)
    ctx.record("parse", command)  # the sources are the Hub, a WSJ copy, the ANLI release: never shipped


def check_sweep_script(command: Command, argv: list[str], ctx: Context) -> None:
    from learned_metrics.sweeps import check_script

    for path in argv:
        check_input(command, path)
    ctx.record("run", command)
    if ctx.run:
        ctx.capsys.readouterr()
        code = check_script(argv)
        _, err = ctx.capsys.readouterr()
        if code != 0:
            raise DocDrift(f"{command.where}: exit {code}: {err.strip()}")


def check_wandb(command: Command, argv: list[str], ctx: Context) -> None:
    if not argv or argv[0] not in WANDB_COMMANDS:
        raise DocDrift(f"{command.where}: not a wandb command this project uses ({sorted(WANDB_COMMANDS)})")
    if argv[0] == "sweep":
        from learned_metrics.sweeps import load_sweep

        check_input(command, argv[1])
        load_sweep(argv[1])
    ctx.record("parse", command)


def check_doc(commands: list[Command], ctx: Context) -> None:
    for command in commands:
        check_command(command, ctx)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A temporary folder that sees the shipped examples/ and conf/ and takes every output."""
    for name in ("examples", "conf"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- the docs ----------------------------------------------------------------------------------------------------


def all_commands() -> dict[str, list[Command]]:
    return {str(doc.relative_to(ROOT)): extract_commands(doc.read_text(encoding="utf-8"), str(doc.relative_to(ROOT)))
            for doc in DOCS}


DOC_NAMES = [str(d.relative_to(ROOT)) for d in DOCS]


def report(doc: str, ctx: Context, started: float, capsys) -> None:
    with capsys.disabled():
        counts = {c: sum(1 for k, _ in ctx.categories if k == c) for c in ("run", "tiny model", "train", "parse")}
        print(f"\n{doc}: {len(ctx.categories)} commands {counts} in {time.perf_counter() - started:.1f} s")


@pytest.mark.parametrize("doc", DOC_NAMES)
@pytest.mark.slow
def test_doc_commands_parse_and_name_existing_files(doc, workdir, capsys):
    """Fast: every command classified; flags parsed, inputs found, Hydra overrides composed (nothing run)."""
    started = time.perf_counter()
    ctx = Context(run=False, capsys=capsys)
    check_doc(all_commands()[doc], ctx)
    report(doc, ctx, started, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOC_NAMES)
def test_doc_commands_run_as_documented(doc, workdir, capsys, coherence_export, nli_export):
    """Every runnable command runs as written, in the doc's order (tiny models for trained exports)."""
    started = time.perf_counter()
    ctx = Context(models={"coherence": coherence_export, "faithfulness": nli_export}, capsys=capsys)
    check_doc(all_commands()[doc], ctx)
    report(doc, ctx, started, capsys)


def test_every_doc_has_its_commands_found():
    """The extraction finds the examples it should (a changed fence style would silently check nothing)."""
    found = all_commands()
    assert len(found["README.md"]) >= 30
    fenced = {doc for doc in found if re.search(r"^```(bash|sh|console)", (ROOT / doc).read_text(), re.M)}
    assert fenced and all(found[doc] for doc in fenced)


# --- controls: the checks fail where the docs drift --------------------------------------------------------------

CONTROL = """
```bash
learned-metrics meta-eval correlations --human examples/meta_eval/human.jsonl \\
    --metric examples/meta_eval/metric_good.jsonl --resample-count 10   # misspelled
```
"""


@pytest.mark.parametrize(("snippet", "message"), [
    (CONTROL, "has no option --resample-count"),
    ("```console\n$ learned-metrics meta-eval auc --input examples/meta_eval/faithfullness.jsonl\n```\n",
     "input 'examples/meta_eval/faithfullness.jsonl' is neither shipped"),
    ("```bash\nlearned-metrics score faithfulness ... --mc-sample 15\n```\n", "has no option --mc-sample"),
    ("```bash\npython data_prep/build_anli_augmented.py --source anli --output x --phrase dialogue\n```\n",
     "build_anli_augmented.py has no option --phrase"),  # a prefix argparse would take
    ("```bash\npython train.py experiment=nli_demo trainer.max_epoch=1\n```\n", "max_epoch"),
    ("```bash\npython train.py experiment=nli_dmeo\n```\n", "nli_dmeo"),
    ("```bash\nlearned-metrics meta-eval benchmark --metric examples/benchmarks/true --threshold-protocol tune\n```\n",
     "invalid choice: 'tune'"),
    ("```bash\nmake demo-coherence\n```\n", "no Makefile target"),
    ("```sh\nlearned-metric score coherence --help\n```\n", "no check knows the program 'learned-metric'"),
    ("```bash\nwandb sweep conf/sweep/missing.yml\n```\n", "input 'conf/sweep/missing.yml'"),
])
def test_a_drifted_example_fails(snippet, message, workdir):
    commands = extract_commands(snippet)
    assert commands
    with pytest.raises(DocDrift, match=re.escape(message)):
        check_doc(commands, Context(run=False))


def test_a_shown_error_must_be_the_error_the_command_gives(workdir, capsys):
    snippet = ("```console\n$ learned-metrics meta-eval shuffle-test --input examples/meta_eval/shuffle.jsonl"
               " --resamples 10\nlearned-metrics meta-eval: error: something else\n```\n")
    with pytest.raises(DocDrift, match="the doc shows"):
        check_doc(extract_commands(snippet), Context(capsys=capsys))


def test_the_shell_reader():
    assert split_shell("for s in a b; do x --i $s.jsonl --o out/$s; done  # c") == [
        ["x", "--i", "a.jsonl", "--o", "out/a"], ["x", "--i", "b.jsonl", "--o", "out/b"]]
    assert split_shell("cat p.jsonl | lm score - > s.jsonl") == [["cat", "p.jsonl"], ["lm", "score", "-"]]
    commands = extract_commands("```console\n$ a \\\n   --b c   # note\nout\n```\n```json\n$ no\n```\n")
    assert [c.argv for c in commands] == [["a", "--b", "c"]]
    assert peel(["accelerate", "launch", "--num_processes", "4", "-m", "learned_metrics.cli", "score"]) == [
        "learned-metrics", "score"]


# --- training for real -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_readme_override_example_trains(workdir, tiny_roberta, ccl_data_dir):
    """README's "any override, e.g. a local model on CPU with CSV logs" line, run with the tiny model and set
    substituted for ``model.name_or_path`` and ``data.path`` and a tmp run folder; the rest as written."""
    from conftest import compose_train_config

    from learned_metrics.train.run import train

    example = next(c for c in all_commands()["README.md"]
                   if c.argv[:2] == ["python", "train.py"] and any(a.startswith("model.name_or_path=") for a in c.argv))
    substitutes = {"model.name_or_path": str(tiny_roberta), "data.path": str(ccl_data_dir)}
    overrides = [f"{k}={substitutes[k]}" if k in substitutes else f"{k}={v}"
                 for k, v in (a.split("=", 1) for a in example.argv[2:])]
    assert set(substitutes) <= {o.split("=")[0] for o in overrides}
    cfg = compose_train_config([*overrides, f"paths.output_dir={workdir / 'run'}",
                                f"paths.checkpoints_dir={workdir}", "trainer.limit_train_batches=2",
                                "trainer.limit_val_batches=2"])
    metrics = train(cfg)
    assert {"val/loss", "val/f1"} <= set(metrics)
    assert (workdir / "run" / "export" / "learned_metric.json").is_file()
