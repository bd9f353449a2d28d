"""Write the TSLib-style `.sh` scripts from the recipe table: `python -m compare.scripts [--check]`.

Every script under `scripts/` is generated from `compare/recipes/tables.py`: `scripts/long_term_forecast/**` from
`RECIPES` and `scripts/<task>/**` of TSLib's other tasks from `TASK_RECIPES`. Each has a header naming its
source, the recipe's comments, `export` lines, `model_name=...`, the dataset fetch lines and one plain
`python -u run.py \\` block per horizon (mask rate, M4 pattern, UEA set ...) with one `--flag value` line each,
the form users read and edit.
`--check` writes nothing and exits 1 listing stale, missing and extra scripts.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from compare.recipes.tables import RECIPES, TASK_RECIPES, RecipeBook, TaskBook
from utils.record_paths import REPO_ROOT

__all__ = ["HEADER", "check_scripts", "main", "render_scripts", "write_scripts"]

SCRIPTS_ROOT = "scripts"
COMMAND = "python -m compare.scripts"
HEADER = (
    f"# Generated from compare/recipes/tables.py by `{COMMAND}`: change the recipe there and regenerate.",
    "# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.",
)


def _files(book: RecipeBook) -> dict[str, tuple[str, list[str]]]:
    """Script path -> (row, its datasets in block order)."""
    files: dict[str, tuple[str, list[str]]] = {}
    for row in book.rows:
        for dataset in book.row_datasets(row):
            path = book.script(row, dataset)
            owner, datasets = files.setdefault(path, (row, []))
            if owner != row:
                raise ValueError(f"{path} would hold both {owner} and {row}; give one of them its own file")
            datasets.append(dataset)
    return files


def _block(flags: dict, model: str) -> list[str]:
    """One `python -u run.py` command, one flag per continued line; `--model` reads $model_name."""
    lines = ["python -u run.py \\"]
    for flag, value in flags.items():
        if value is None:
            lines.append(f"  --{flag} \\")
        elif flag == "model" and value == model:
            lines.append(f"  --{flag} $model_name \\")
        elif isinstance(value, tuple):
            lines.append(f"  --{flag} {' '.join(shlex.quote(str(v)) for v in value)} \\")
        else:
            lines.append(f"  --{flag} {shlex.quote(str(value))} \\")
    lines[-1] = lines[-1][: -len(" \\")]
    return lines


def _render(book: RecipeBook, row: str, datasets: list[str]) -> str:
    model = book.row_model(row)
    recipe = book.models[model]
    variant = book.variants.get(row)
    first = book.flags(row, datasets[0], book.horizons(row, datasets[0])[0])
    lines = [*HEADER, "#"]
    if variant:
        lines += [line.format(**first) for line in variant.comments]
        lines.append(f"Datasets: {', '.join(datasets)}; every other flag as the {model} scripts.")
        lines.append(f"model_id carries the suffix {variant.suffix} so results do not overwrite the {model} runs.")
    else:
        data = book.datasets[datasets[0]]
        horizons = " ".join(map(str, book.horizons(row, data.name)))
        lines.append(f"{row} on {data.name} ({data.channels} variates), horizons {horizons} (L = {first['seq_len']}).")
    if not variant or variant.base_comments:
        lines += [line.format(**first) for line in recipe.comments]
    lines = [line if line.startswith("#") else f"# {line}" for line in lines]
    lines += ["", *[f"export {k}={shlex.quote(v)}" for k, v in book.env.items()], "", f"model_name={model}"]
    if recipe.fetch:
        lines.append("")
        lines += [f"python -m data_provider.fetch {shlex.quote(book.datasets[d].fetch)} --root ./dataset || exit 1"
                  for d in datasets]
    for dataset in datasets:
        data = book.datasets[dataset]
        horizons = book.horizons(row, dataset)
        flags = book.flags(row, dataset, horizons[0])
        summary = recipe.summary.format(name=dataset, source=recipe.sources.get(dataset, ""), **flags)
        lines += ["", *[f"# {line}" for line in (summary, *data.notes)]]
        for k, horizon in enumerate(horizons):
            if k:
                lines.append("")
            lines += _block(book.flags(row, dataset, horizon), model)
    return "\n".join(lines) + "\n"


def _task_files(tasks: TaskBook) -> dict[str, tuple[str, str, list[str]]]:
    """Script path -> (task, model, its datasets in block order)."""
    files: dict[str, tuple[str, str, list[str]]] = {}
    for task in tasks.recipes:
        for model in tasks.models(task):
            for dataset in tasks.model_datasets(task, model):
                path = tasks.script(task, model, dataset)
                owner = files.setdefault(path, (task, model, []))
                if owner[:2] != (task, model):
                    raise ValueError(f"{path} would hold both {owner[1]} and {model}")
                owner[2].append(dataset)
    return files


def _render_task(tasks: TaskBook, task: str, model: str, datasets: list[str]) -> str:
    recipe = tasks.recipe(task, model)
    names = ", ".join(datasets)
    lines = [*HEADER, "#", f"# {model} on {task}: {names}.", *[f"# {line}" for line in recipe.comments]]
    lines += ["", *[f"export {k}={shlex.quote(v)}" for k, v in tasks.env.items()], "", f"model_name={model}"]
    fetches = list(dict.fromkeys(tasks.datasets[task][d].fetch for d in datasets if tasks.datasets[task][d].fetch))
    if recipe.fetch and fetches:
        lines.append("")
        lines += [f"python -m data_provider.fetch {shlex.quote(name)} --root ./dataset || exit 1" for name in fetches]
    for dataset in datasets:
        own = recipe.file and not recipe.tslib_file
        source = "the flags above" if own else f"TSLib's {tasks.script(task, model, dataset)}"
        note = recipe.notes.get(dataset)
        lines += ["", f"# {dataset}: {source}" + (f"; {note}." if note else ".")]
        for block in range(tasks.blocks(task, model, dataset)):
            if block:
                lines.append("")
            lines += _block(tasks.flags(task, model, dataset, block), model)
    return "\n".join(lines) + "\n"


def render_scripts(book: RecipeBook = RECIPES, tasks: TaskBook = TASK_RECIPES) -> dict[str, str]:
    """Every generated script: path relative to the repository root -> text."""
    rendered = {path: _render(book, row, datasets) for path, (row, datasets) in _files(book).items()}
    for path, (task, model, datasets) in _task_files(tasks).items():
        if path in rendered:
            raise ValueError(f"{path} is generated twice")
        rendered[path] = _render_task(tasks, task, model, datasets)
    return dict(sorted(rendered.items()))


def _existing(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in (root / SCRIPTS_ROOT).rglob("*.sh")}


def check_scripts(root: Path = REPO_ROOT, book: RecipeBook = RECIPES) -> list[str]:
    """Problems of the scripts under `root/scripts`: stale, missing, or not generated (extra)."""
    expected = render_scripts(book)
    problems = []
    for path, text in expected.items():
        file = root / path
        if not file.is_file():
            problems.append(f"missing: {path}")
        elif file.read_text() != text:
            problems.append(f"stale: {path}")
    problems += [f"extra (not from the recipe table): {path}" for path in sorted(_existing(root) - set(expected))]
    return problems


def write_scripts(root: Path = REPO_ROOT, book: RecipeBook = RECIPES) -> tuple[list[str], list[str]]:
    """Write every generated script under `root`; returns (paths written or changed, extra scripts left)."""
    expected = render_scripts(book)
    changed = []
    for path, text in expected.items():
        file = root / path
        if not file.is_file() or file.read_text() != text:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text)
            changed.append(path)
    return changed, sorted(_existing(root) - set(expected))


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, verify) the scripts; 1 when --check finds a problem or extras remain."""
    p = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 listing stale/missing/extra scripts")
    p.add_argument("--root", default=str(REPO_ROOT), help="repository root holding scripts/")
    args = p.parse_args(argv)
    root = Path(args.root)
    if args.check:
        problems = check_scripts(root)
        for line in problems:
            print(line)
        if problems:
            print(f"run `{COMMAND}` to regenerate (and delete or add recipes for extra scripts)")
            return 1
        print(f"{len(render_scripts())} scripts under {SCRIPTS_ROOT}/ match compare/recipes/tables.py")
        return 0
    changed, extra = write_scripts(root)
    print(f"wrote {len(changed)} of {len(render_scripts())} scripts" + "".join(f"\n  {p}" for p in changed))
    for path in extra:
        print(f"extra (not from the recipe table; delete it or add its recipe): {path}")
    return 1 if extra else 0

