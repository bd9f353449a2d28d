"""Issue 6 §4: every kind of bad input, through `run.main`, ends with exit code 2, exactly one `error:` line
on stderr naming the problem and the fix (no traceback), and nothing written to the working folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import run


def set_cell(row: int, column: str, value: object):
    def edit(path: Path) -> None:
        frame = pd.read_csv(path, dtype=object)
        frame.loc[row, column] = value
        frame.to_csv(path, index=False)
    return edit


def overwrite(text: str):
    def edit(path: Path) -> None:
        path.write_text(text)
    return edit


# The end of the line for a value a float32 model cannot square (data_provider/float32_range.py).
SQUARE = ("whose square overflows float32 (the models, their normalisation and the losses square the values, so "
          "|x| must be at most 1.845e+19; 1 such values); rescale the column (e.g. other units) or fix the file")
# (flags to change, edit of toy.csv, exact stderr line; {csv} stands for the data file's path)
MATRIX = {
    "missing-file": (
        ("--data_path", "nope.csv"), None,
        "error: data file {root}/nope.csv not found; check --root_path and --data_path"),
    "target-not-a-column": (
        ("--features", "MS", "--target", "load"), None,
        "error: --target 'load' is not a column of {csv}; columns: x0, x1, OT"),
    "nan-value": (
        (), set_cell(7, "x1", ""),
        "error: {csv}: line 9, column 'x1' is missing or NaN (1 such values in total); "
        "pass --fillna ffill|interpolate to fill them"),
    "non-numeric-value": (
        (), set_cell(4, "x0", "n/a?"),
        "error: {csv}: line 6, column 'x0' has the non-numeric value 'n/a?'; fix the file or pass "
        "--fillna ffill|interpolate to treat such values as missing"),
    "split-too-short-train": (
        ("--seq_len", "200", "--label_len", "12"), None,
        "error: --seq_len 200 + --pred_len 12 = 212 is longer than the train split of {csv} (210 rows); "
        "the sum must be at most 210"),
    "split-too-short-val": (
        ("--pred_len", "40"), None,
        "error: --pred_len 40 is longer than the val split of {csv} (30 rows); use --pred_len 30 or less"),
    "enc_in-mismatch": (
        ("--enc_in", "7"), None,
        "error: --enc_in 7 does not match the data: --features M on toy.csv (3 channels) needs "
        "--enc_in 3 --dec_in 3 --c_out 3"),
    "c_out-mismatch": (
        ("--c_out", "1"), None,
        "error: --c_out 1 does not match the data: --features M on toy.csv (3 channels) needs "
        "--enc_in 3 --dec_in 3 --c_out 3"),
    "unknown-model": (
        ("--model", "Informer2"), None,
        "error: --model 'Informer2' is not supported; valid choices: {models}; did you mean Informer or iTransformer?"),
    "unknown-data": (
        ("--data", "ETTh3"), None,
        "error: --data 'ETTh3' is not supported; valid choices: ETTh1, ETTh2, ETTm1, ETTm2, custom, Solar, PEMS, m4, "
        "short_term_csv, tsf, PSM, MSL, SMAP, SMD, SWAT, anomaly_csv, Yahoo, MITDB, UEA; did you mean ETTh2 or ETTh1?"),
    "unknown-task": (
        ("--task_name", "zero_shot"), None,
        "error: --task_name 'zero_shot' is not supported; valid choices: long_term_forecast, "
        "short_term_forecast, imputation, anomaly_detection, classification, zero_shot_forecast; did you mean zero_shot_forecast?"),
    "unknown-lradj": (
        ("--lradj", "type9"), None,
        "error: --lradj 'type9' is not supported; valid choices: type1, type2, type3, cosine, constant, onecycle; "
        "did you mean type3 or type2?"),
    "unknown-freq": (
        ("--freq", "fortnight"), None,
        "error: --freq 'fortnight' is not a known frequency; use one of s, t (or min), h, d, b, w, m, a, "
        "optionally with a multiple such as 15min, 10min, 30s or 2h"),
    "heads-not-dividing-d_model": (
        ("--n_heads", "3"), None,
        "error: --model iTransformer: --d_model 16 is not divisible by --n_heads 3; "
        "choose --d_model as a multiple of --n_heads"),
    "empty-csv": (
        (), overwrite(""),
        "error: data file {csv} is empty"),
    # Issue 49: names that would leave the output folders, values that overflow float32, NaN flags.
    "des-leaves-the-output-folder": (
        ("--des", "../../../../X"), None,
        "error: --des '../../../../X' cannot name an output folder (it becomes part of the setting string): it "
        "contains the path separator '/'; use letters, digits, '_', '-' and '.' only"),
    "model_id-with-a-separator": (
        ("--model_id", "a/b"), None,
        "error: --model_id 'a/b' cannot name an output folder (it becomes part of the setting string): it "
        "contains the path separator '/'; use letters, digits, '_', '-' and '.' only"),
    "setting-too-long": (
        ("--model_id", "m" * 250), None,
        "error: the setting string long_term_forecast_mmmmmmmmmmmmmmmmmmmmm... cannot name an output folder: it "
        "is 367 bytes long; a file name holds at most 255; shorten --model_id or --des"),
    "inf-value": (
        (), set_cell(7, "x1", "inf"),
        "error: {csv}: line 9, column 'x1' holds inf, which is not a finite number (1 such values); fix the file"),
    "value-beyond-float32": (
        (), set_cell(3, "OT", "1e40"),
        "error: {csv}: line 5, column 'OT' holds 1e+40, " + SQUARE),
    "value-beyond-float64": (
        (), set_cell(3, "x0", "-1e400"),
        "error: {csv}: line 5, column 'x0' holds -inf, which is not a finite number (1 such values); fix the file"),
    # Issue 65: 3e38 is a float32 number, but the scaler let it squeeze its column flat (the reported MSE improved,
    # 0.541 against 0.606 clean); a float32 model squaring it overflows.
    "value-whose-square-overflows-float32": (
        (), set_cell(40, "x1", "3e38"),
        "error: {csv}: line 42, column 'x1' holds 3e+38, " + SQUARE),
    "negative-value-whose-square-overflows-float32": (
        (), set_cell(12, "OT", "-1.9e19"),
        "error: {csv}: line 14, column 'OT' holds -1.9e+19, " + SQUARE),
    "learning_rate-nan": (("--learning_rate", "nan"), None, "error: --learning_rate nan is not a finite number"),
    "weight_decay-nan": (("--weight_decay", "nan"), None, "error: --weight_decay nan is not a finite number"),
    "max_grad_norm-nan": (("--max_grad_norm", "nan"), None, "error: --max_grad_norm nan is not a finite number"),
    "dropout-inf": (("--dropout", "inf"), None, "error: --dropout inf is not a finite number"),
    "seed-negative": (
        ("--seed", "-1"), None,
        "error: --seed -1 must lie in [0, 4294967295] (run ii of --itr 1 uses --seed + ii, and numpy seeds stop "
        "at 2**32 - 1)"),
    "embed-unknown": (
        ("--embed", "timef"), None,
        "error: --embed 'timef' is not supported; valid choices: timeF, fixed, learned; did you mean timeF?"),
    "header-only-csv": (
        (), overwrite("date,x0,x1,OT\n"),
        "error: data file {csv} has no data rows (only a header)"),
}


@pytest.mark.parametrize("case", list(MATRIX), ids=list(MATRIX))
def test_bad_input_is_one_error_line_exit_2_and_no_output(in_tmp, toy, capsys, case):
    from exp.model_registry import MODEL_REGISTRY

    flags, edit, expected = MATRIX[case]
    if edit is not None:
        edit(in_tmp / "toy.csv")
    argv = toy(in_tmp, "--train_epochs", "1")
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    assert err.rstrip("\n") == expected.format(root=in_tmp, csv=in_tmp / "toy.csv", models=", ".join(MODEL_REGISTRY))
    assert sorted(p.name for p in in_tmp.iterdir()) == ["toy.csv"]


def test_unsorted_and_duplicated_timestamps_warn_with_counts(in_tmp, toy, capsys):
    frame = pd.read_csv(in_tmp / "toy.csv")
    frame.loc[10, "date"] = frame.loc[9, "date"]  # one duplicate
    frame.loc[[20, 21], "date"] = frame.loc[[21, 20], "date"].to_numpy()  # one step backwards
    frame.to_csv(in_tmp / "toy.csv", index=False)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="DLinear")) == 0
    out = capsys.readouterr().out
    csv = in_tmp / "toy.csv"
    assert f"{csv}: 1 duplicated timestamp(s); rows are kept as they are\n" in out
    assert f"{csv}: timestamps go backwards 1 time(s); rows are kept in file order\n" in out


@pytest.mark.parametrize(("flags", "expected"), [
    (["--lr", "0.001"], "error: unrecognized arguments: --lr 0.001; did you mean --learning_rate or --lradj?; "
                        "see run.py --help"),
    (["--learning_rat", "0.001"], "error: unrecognized arguments: --learning_rat 0.001; did you mean "
                                  "--learning_rate?; see run.py --help"),
    (["--optimizer", "adma"], "error: argument --optimizer: invalid choice: 'adma' (choose from 'adam', 'adamw'); "
                              "did you mean adam or adamw?; see run.py --help"),
], ids=["abbreviation-is-not-a-flag", "misspelt-flag", "misspelt-choice"])
def test_parser_errors_are_one_line_with_a_suggestion(in_tmp, toy, capsys, flags, expected):
    with pytest.raises(SystemExit) as stop:
        run.main(toy(in_tmp, "--train_epochs", "1") + flags)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.rstrip("\n") == expected and err.count("\n") == 1
    assert sorted(p.name for p in in_tmp.iterdir()) == ["toy.csv"]
