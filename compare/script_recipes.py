"""Read the `run.py` recipes out of our `scripts/**/*.sh` files, so the comparison runner and the
scripts share one source of truth.

Our scripts have a strict shape (bash, but only this subset): comments, `export X=Y`, `name=value`
assignments, `$name` / `${name}` references, `python -m data_provider.fetch NAME --root ./dataset
|| exit 1` lines, and one `python -u run.py \\` block per horizon whose `--flag value \\` lines
continue it. Lines are joined and tokenised as bash would (backslash-newline continuation, `shlex`
quoting, expansion outside single quotes); anything else is rejected with the file and line, so a
script the parser accepts runs the same settings under bash.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from exp.arguments import build_parser
from utils.errors import UserInputError

__all__ = [
    "DATASET_ALIASES",
    "Recipe",
    "dataset_keys",
    "find_recipe",
    "flag_value",
    "load_recipes",
    "merge_flags",
    "parse_run_args",
    "parse_script",
    "script_stem_key",
]

DEFAULT_SCRIPTS = Path("scripts") / "long_term_forecast"

# Names under which the same dataset appears in scripts (model_id, file name) and in the paper.
DATASET_ALIASES: dict[str, tuple[str, ...]] = {
    "ecl": ("electricity",),
    "electricity": ("ecl",),
    "solar": ("solar_al",),
    "solar_al": ("solar",),
    "exchange": ("exchange_rate",),
    "exchange_rate": ("exchange",),
}

_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True)
class Recipe:
    """One `python -u run.py` block of a script: its run.py arguments after variable expansion."""

    script: Path
    line: int  # 1-based line of the `python -u run.py` command
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, compare=False)  # the script's exports
    fetch: tuple[str, ...] = ()  # dataset names the script fetches before its runs

    @property
    def where(self) -> str:
        return f"{self.script}:{self.line}"

    def flag(self, name: str) -> str | None:
        """The value of `--name` (the last one, as argparse takes), or None when absent."""
        return flag_value(self.argv, name)

    @property
    def model(self) -> str:
        return self.flag("model") or ""

    @property
    def pred_len(self) -> int | None:
        value = self.flag("pred_len")
        return int(value) if value is not None and value.lstrip("-").isdigit() else None


def flag_value(argv: Sequence[str], name: str) -> str | None:
    """Last value given to `--name` in `argv` (`--name value` or `--name=value`), else None."""
    found = None
    for i, token in enumerate(argv):
        if token == f"--{name}" and i + 1 < len(argv):
            found = argv[i + 1]
        elif token.startswith(f"--{name}="):
            found = token.split("=", 1)[1]
    return found


def _expand(text: str, variables: dict[str, str], where: str) -> str:
    """Substitute `$name` / `${name}` outside single quotes, as bash does before word splitting."""
    out, i, quote = [], 0, None
    while i < len(text):
        ch = text[i]
        if ch == "'" and quote != '"':
            quote = None if quote == "'" else "'"
        elif ch == '"' and quote != "'":
            quote = None if quote == '"' else '"'
        elif ch == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
            continue
        elif ch == "$" and quote != "'":
            match = _VAR.match(text, i)
            if match is None:
                raise UserInputError(f"{where}: unsupported '$' expression in {text.strip()!r}; "
                                     "recipe scripts may only use $name or ${name}")
            name = match.group(1) or match.group(2)
            if name not in variables:
                raise UserInputError(f"{where}: ${name} is used before it is assigned; "
                                     f"add `{name}=...` above this line")
            out.append(variables[name])
            i = match.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _logical_lines(path: Path) -> list[tuple[int, str]]:
    """Join backslash-newline continuations; returns (first line number, joined text) pairs."""
    lines = path.read_text().splitlines()
    joined: list[tuple[int, str]] = []
    start, parts = 0, []
    for number, raw in enumerate(lines, start=1):
        if not parts:
            start = number
        if raw.rstrip() != raw and raw.rstrip().endswith("\\") and not raw.lstrip().startswith("#"):
            # bash reads "\ " as an escaped space and ends the command at the newline.
            raise UserInputError(f"{path}:{number}: whitespace after the continuation backslash; "
                                 "bash would end the command here; delete the trailing spaces")
        if raw.endswith("\\") and not raw.lstrip().startswith("#"):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        joined.append((start, " ".join(parts)))
        parts = []
    if parts:
        raise UserInputError(f"{path}:{start}: the file ends inside a continued command; "
                             "remove the last line's trailing backslash")
    return joined


def parse_script(path: str | Path) -> list[Recipe]:
    """Every `run.py` block of one script, with `$variables` expanded, in file order.

    Raises UserInputError naming the file and line for any construct outside the recipe subset.
    """
    path = Path(path)
    variables: dict[str, str] = {}
    env: dict[str, str] = {}
    fetch: list[str] = []
    blocks: list[tuple[int, list[str]]] = []
    for number, text in _logical_lines(path):
        where = f"{path}:{number}"
        stripped = text.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("#!"):
            continue
        assign = _ASSIGN.match(stripped)
        if assign:
            name, rhs = assign.groups()
            words = shlex.split(_expand(rhs, variables, where), comments=True)
            if len(words) > 1:
                raise UserInputError(f"{where}: {name}= takes one word, got {len(words)}; quote the value")
            variables[name] = words[0] if words else ""
            if stripped.startswith("export"):
                env[name] = variables[name]
            continue
        try:
            words = shlex.split(_expand(stripped, variables, where), comments=True)
        except ValueError as err:
            raise UserInputError(f"{where}: cannot tokenise the line ({err}); check its quotes") from None
        if words[:3] == ["python", "-m", "data_provider.fetch"]:
            if words[-3:] != ["||", "exit", "1"]:
                raise UserInputError(f"{where}: a fetch line must end with `|| exit 1` so a missing "
                                     "dataset stops the script")
            fetch.extend(_fetch_names(words[3:-3]))
            continue
        run_at = _run_py_index(words)
        if run_at is None:
            raise UserInputError(f"{where}: unsupported line {stripped[:60]!r}; recipe scripts may contain "
                                 "comments, assignments, fetch lines and `python -u run.py` blocks only")
        blocks.append((number, words[run_at + 1 :]))
    return [Recipe(path, number, tuple(argv), dict(env), tuple(fetch)) for number, argv in blocks]


def _fetch_names(words: list[str]) -> list[str]:
    """Dataset names among the fetch arguments (every `--option` takes one value)."""
    names, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("--"):
            skip = "=" not in word
        else:
            names.append(word)
    return names


def _run_py_index(words: list[str]) -> int | None:
    """Index of `run.py` in `python [-u] run.py ...`, else None."""
    if not words or words[0] not in ("python", "python3"):
        return None
    for i, word in enumerate(words[1:], start=1):
        if word.endswith("run.py"):
            return i
        if word != "-u":
            return None
    return None


def load_recipes(root: str | Path = DEFAULT_SCRIPTS) -> list[Recipe]:
    """Every recipe in `root/**/*.sh`, sorted by path then line."""
    root = Path(root)
    if not root.is_dir():
        raise UserInputError(f"scripts folder {root} does not exist; run from the repository root "
                             "or pass --scripts DIR")
    recipes: list[Recipe] = []
    for script in sorted(root.rglob("*.sh")):
        recipes.extend(parse_script(script))
    return recipes


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def dataset_keys(name: str) -> set[str]:
    """Normalised names a dataset is known by (its own name plus aliases)."""
    key = _norm(name)
    return {key, *DATASET_ALIASES.get(key, ())}


def script_stem_key(row: str) -> str:
    """The script-file stem a model row name maps to: `LinAttn+RoPE` -> `linattn_rope`."""
    return _norm(row)


def _recipe_datasets(recipe: Recipe) -> set[str]:
    names = set()
    model_id = recipe.flag("model_id")
    if model_id:
        names.add(_norm(model_id.split("_")[0]))
    data_path = recipe.flag("data_path")
    if data_path:
        names.add(_norm(Path(data_path).stem))
    data = recipe.flag("data")
    if data:
        names.add(_norm(data))
    return names


def _stem_score(recipe: Recipe, row: str, dataset: str) -> int:
    """2: the file is `<row>_<dataset>.sh`; 1: `<row>.sh`; 0: neither."""
    stem, key = _norm(recipe.script.stem), script_stem_key(row)
    if stem == key:
        return 1
    if any(stem == f"{key}_{d}" for d in dataset_keys(dataset)):
        return 2
    return 0


def find_recipe(recipes: Iterable[Recipe], row: str, dataset: str, pred_len: int) -> Recipe:
    """The one recipe for model row `row` on `dataset` at horizon `pred_len`.

    A block qualifies when its dataset (first `--model_id` token, `--data_path` stem or `--data`)
    and `--pred_len` match and either its `--model` is `row` or its file is named after `row`
    (`<row>_<dataset>.sh` or `<row>.sh`, so `LinAttn+RoPE` finds `LinAttn_RoPE.sh`). Blocks in a
    file named after the row win over blocks found by `--model` alone (so the CAPS row reads
    CAPS_ETTh1.sh, not an ablation script that also runs `--model CAPS`).
    """
    wanted = dataset_keys(dataset)
    scored: list[tuple[int, Recipe]] = []
    for recipe in recipes:
        if recipe.pred_len != pred_len or not (_recipe_datasets(recipe) & wanted):
            continue
        score = _stem_score(recipe, row, dataset)
        if score or recipe.model == row:
            scored.append((score, recipe))
    if not scored:
        raise UserInputError(
            f"no script block runs {row} on {dataset} with --pred_len {pred_len}; add one to "
            f"scripts/long_term_forecast/<Data>_script/{re.sub(r'[^A-Za-z0-9]+', '_', row)}_{dataset}.sh "
            "(or define the row with --variant NAME=BASE:FLAGS)")
    best = max(score for score, _ in scored)
    winners = [recipe for score, recipe in scored if score == best]
    if len(winners) > 1:
        places = ", ".join(r.where for r in winners)
        raise UserInputError(f"{row} on {dataset} at --pred_len {pred_len} is ambiguous: blocks at {places}; "
                             "keep one, or name the script after the row")
    return winners[0]


def _raise_user_error(message: str) -> None:
    raise UserInputError(message)


def parse_run_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse run.py arguments with run.py's parser, raising UserInputError instead of exiting."""
    parser = build_parser()
    parser.exit_on_error = False
    # argparse reports every other problem through parser.error, which would exit the process.
    parser.error = _raise_user_error  # type: ignore[method-assign]
    try:
        return parser.parse_args(list(argv))
    except argparse.ArgumentError as err:
        raise UserInputError(str(err)) from None


def _split_flags(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[tuple[str, list[str]]]:
    """Group `argv` into (flag, values) pairs using each option's arity from `parser`."""
    arity = {opt: action.nargs for action in parser._actions for opt in action.option_strings}
    groups: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--"):
            raise UserInputError(f"unexpected argument {token!r}: run.py flags look like --name value")
        if "=" in token:
            flag, value = token.split("=", 1)
            groups.append((flag, [value]))
            i += 1
            continue
        if token not in arity:
            raise UserInputError(f"unknown run.py flag {token}; see `python run.py --help`")
        nargs = arity[token]
        if nargs == 0:
            groups.append((token, []))
            i += 1
        elif nargs in ("+", "*"):
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                j += 1
            groups.append((token, list(argv[i + 1 : j])))
            i = j
        else:
            count = 1 if nargs is None or nargs == "?" else int(nargs)
            groups.append((token, list(argv[i + 1 : i + 1 + count])))
            i += 1 + count
    return groups


def merge_flags(base: Sequence[str], overrides: Sequence[str]) -> list[str]:
    """`base` with every flag in `overrides` replacing the same flag (kept at its first position);
    new flags are appended. Switch flags (`--use_amp`) can be added but not removed."""
    parser = build_parser()
    merged = _split_flags(base, parser)
    for flag, values in _split_flags(overrides, parser):
        positions = [i for i, (f, _) in enumerate(merged) if f == flag]
        if positions:
            merged[positions[0]] = (flag, values)
            merged = [g for i, g in enumerate(merged) if i not in positions[1:]]
        else:
            merged.append((flag, values))
    return [token for flag, values in merged for token in (flag, *values)]
