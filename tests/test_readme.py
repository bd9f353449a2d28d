"""Every command of the README's code blocks runs here, each in the cheapest form that still exercises it: a
command the README shows must never fail on a fresh clone because a flag, a file or a module moved.

make targets run as `make -n` (what they would run); `fetch` fetches from the mirror; `run.py` is parsed,
validated and its model built; scripts pass `bash -n`; `compare` runs with `--dry-run`; `compare tune` is parsed
and planned; `predict` and `explain` run for real on checkpoints saved from untrained tiny models."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.predict.checkpoints import checkpoint_folder, toy_argv, working_directory, write_hourly_csv

REPO = Path(__file__).resolve().parents[1]
KINDS = ("make", "fetch", "run.py", "script", "compare tune", "compare", "predict", "explain")


def readme_commands() -> list[str]:
    """The commands of the README's ```bash blocks, continuation lines joined and comments dropped."""
    text = (REPO / "README.md").read_text()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for command in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#.*$", "", command).strip()
            if command and not command.startswith("#"):
                commands.append(" ".join(command.split()))
    return commands


def kind(command: str) -> str:
    words = shlex.split(command)
    if words[0] == "make":
        return "make"
    if words[0] == "bash" and words[1].startswith("scripts/"):
        return "script"
    module = words[words.index("-m") + 1] if "-m" in words else None
    if "run.py" in words:
        return "run.py"
    if module == "compare":
        return "compare tune" if words[words.index("-m") + 2] == "tune" else "compare"
    names = {"data_provider.fetch": "fetch", "predict": "predict", "explain": "explain"}
    if module in names:
        return names[module]
    raise AssertionError(f"README command of no known kind (add a check to tests/test_readme.py): {command}")


def commands_of(wanted: str) -> list[str]:
    found = [c for c in readme_commands() if kind(c) == wanted]
    assert found, f"the README shows no {wanted} command any more: drop its check"
    return found


def python(words: list[str]) -> list[str]:
    """`python -u run.py ...` / `python -m x ...` with this interpreter."""
    return [sys.executable, *words[1:]]


# The repository on the path, as for a user inside the clone, when a command runs in a scratch folder.
IN_CLONE = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture
def dataset(tmp_path, data_mirror) -> Path:
    """./dataset as the README's fetch command fills it (ETTh1 copied from the mirror)."""
    root = tmp_path / "dataset"
    (command,) = commands_of("fetch")
    words = shlex.split(command)
    words[words.index("--root") + 1] = str(root)
    done = subprocess.run(python(words), cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "TSLIB_DATA_MIRROR": str(data_mirror)})
    assert done.returncode == 0, done.stderr
    assert (root / "ETT-small" / "ETTh1.csv").is_file()
    return root


def test_every_readme_command_has_a_check():
    assert {kind(c) for c in readme_commands()} == set(KINDS)


@pytest.mark.parametrize("command", commands_of("make"))
def test_make_targets_resolve(command):
    done = subprocess.run(["make", "-n", *shlex.split(command)[1:]], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", commands_of("script"))
def test_scripts_exist_and_parse(command):
    script = REPO / shlex.split(command)[1]
    assert script.is_file(), script
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


@pytest.mark.parametrize("command", commands_of("run.py"))
def test_each_run_py_command_validates_and_builds_its_model(dataset, command):
    from exp.arguments import build_parser, validate_args
    from exp.model_registry import MODEL_REGISTRY
    from models.foundation import foundation_class

    words = shlex.split(command.replace("./dataset", str(dataset)))
    args = build_parser().parse_args(words[words.index("run.py") + 1:])
    validate_args(args)
    assert (Path(args.root_path) / args.data_path).is_file()
    # The zero-shot command's model is a pretrained one (its weights ship in its package).
    build = foundation_class(args.model) if args.task_name == "zero_shot_forecast" else MODEL_REGISTRY[args.model]
    assert sum(p.numel() for p in build(args).parameters()) > 0


def test_the_compare_commands_plan(dataset):
    for command in commands_of("compare"):
        words = shlex.split(command)
        done = subprocess.run([*python(words), "--dry-run", "--root", str(dataset)], cwd=dataset.parent,
                              capture_output=True, text=True, env=IN_CLONE)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "runs planned" in done.stdout + done.stderr


def test_the_tune_command_plans(dataset):
    from compare.recipes.tables import RECIPES
    from compare.tune import equal_budget as tune

    (command,) = commands_of("compare tune")
    words = shlex.split(command)
    args = tune.build_parser().parse_args([*words[words.index("tune") + 1:], "--root", str(dataset)])
    budget, planned = tune._plan(args, RECIPES)
    assert budget.trials == args.trials and {cell.run.row.name for cell in planned} == set(args.models)
    assert args.final_epochs is not None  # without it, each recipe's epochs (CAPS: 100) retrain the choice


def test_the_predict_command_writes_its_forecast(tmp_path):
    (command,) = commands_of("predict")
    root = tmp_path / "toy"
    root.mkdir()
    write_hourly_csv(root / "toy.csv")
    folder = checkpoint_folder(toy_argv(root))
    write_hourly_csv(tmp_path / "new.csv", rows=60, seed=1)
    words = shlex.split(command.replace("checkpoints/<setting>", str(folder)))
    with working_directory(tmp_path):
        done = subprocess.run(python(words), capture_output=True, text=True, env=IN_CLONE)
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / "predictions" / folder.name
    assert (out / "new_forecast.csv").is_file() and (out / "new_forecast.png").is_file()


def test_the_explain_command_writes_its_figures(dataset):
    tmp_path = dataset.parent
    from exp.arguments import build_parser
    from exp.checkpointing import LAST_FILE, LAST_FORMAT, run_fingerprint
    from utils.tools import atomic_torch_save

    (command,) = commands_of("explain")
    ett = dataset / "ETT-small"
    argv = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "readme", "--model", "CAPS",
            "--data", "ETTh1", "--root_path", str(ett), "--data_path", "ETTh1.csv", "--features", "M",
            "--seq_len", "24", "--label_len", "12", "--pred_len", "24", "--enc_in", "7", "--dec_in", "7",
            "--c_out", "7", "--d_model", "8", "--n_heads", "2", "--e_layers", "1", "--num_workers", "0",
            "--caps_impl", "chunked",  # a tiny untrained CAPS: no native-kernel build in a fresh environment
            "--checkpoints", str(tmp_path / "checkpoints")]
    folder = checkpoint_folder(argv)
    # A finished run's last.pth (the flags explain rebuilds the model from), as exp's mark_complete writes it.
    args = build_parser().parse_args(argv)
    atomic_torch_save({"format": LAST_FORMAT, "args": run_fingerprint(args), "complete": True}, folder / LAST_FILE)
    words = shlex.split(command.replace("checkpoints/<setting>", str(folder)).replace("./dataset/ETT-small/",
                                                                                         f"{ett}/"))
    with working_directory(tmp_path):
        done = subprocess.run(python(words), capture_output=True, text=True, env=IN_CLONE)
    assert done.returncode == 0, done.stderr[-2000:]
    assert any(tmp_path.rglob("*.png")), "explain wrote no figure"


def test_the_readme_stays_a_manual():
    """A manual a newcomer reads through: at most 200 lines (findings live in docs/results/)."""
    assert (REPO / "README.md").read_text().count("\n") <= 200
