"""exp/resolved_args.py: the arguments are resolved in one step, which run.py, the comparison plan and every
experiment go through; resolved arguments pass through unchanged (no data file is read twice)."""

from __future__ import annotations

import ast

from exp.arguments import build_parser
from exp.resolved_args import ResolvedArgs, resolve_args
from exp.task_lengths import resolve_task_lengths
from tests.data_provider.uea_files import toy_dataset
from tests.exp.test_exp_classification import toy_argv
from tests.exp.test_flag_defaults import REPO, library_files


def _read_again(args):
    raise AssertionError("resolved arguments were resolved again (the TRAIN and TEST files read twice)")


def test_resolved_arguments_pass_through_unchanged(tmp_path, monkeypatch):
    toy_dataset(tmp_path / "Toy")
    args = build_parser().parse_args(toy_argv(tmp_path / "Toy"))
    resolved = resolve_args(args)
    assert isinstance(resolved, ResolvedArgs) and not isinstance(args, ResolvedArgs)
    assert vars(resolved) == vars(resolve_task_lengths(args)) and resolved.seq_len == 20 and args.seq_len == 96
    monkeypatch.setattr("exp.resolved_args.resolve_task_lengths", _read_again)
    assert resolve_args(resolved) is resolved


def test_the_task_lengths_are_resolved_from_one_place():
    calls = [f"{path.relative_to(REPO).as_posix()}:{node.lineno}" for path in library_files()
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "resolve_task_lengths"]
    assert [call.split(":")[0] for call in calls] == ["exp/resolved_args.py"], calls
