"""`benchmarks/row_seed_gap.py`: two rows whose seeds are spread over synthetic comparison folders (committed
copies only), Welch's interval and the reference against the t-interval of the mean, each held against the
formula written out here; and its one-line errors. No training."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.row_seed_gap import main  # noqa: E402

A = [0.30, 0.32]            # row "Fast", seeds 1 and 2
B = [0.40, 0.41, 0.43]      # row "Slow", seeds 1, 2 (one folder) and 3 (another)


def write_folder(folder: Path, runs: list[tuple[str, int, float]]) -> Path:
    """A comparison folder's committed records: one ETTh1-96 run per (row, seed, mse)."""
    folder.mkdir()
    results, manifest = [], []
    for row, seed, mse in runs:
        setting = f"long_term_forecast_ETTh1_96_96_{row}_s{seed}"
        results.append({"setting": setting, "model": row, "pred_len": 96, "mse": mse, "mae": mse + 0.1, "seed": seed})
        manifest.append({"row": row, "dataset": "ETTh1", "pred_len": 96, "seed": seed, "status": "ok",
                         "settings": [setting], "argv": [], "seconds": 1.0, "error": None})
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (folder / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    return folder


@pytest.fixture
def folders(tmp_path):
    first = write_folder(tmp_path / "first", [("Fast", 1, A[0]), ("Fast", 2, A[1]), ("Slow", 1, B[0]),
                                              ("Slow", 2, B[1])])
    second = write_folder(tmp_path / "second", [("Slow", 3, B[2]), ("Other", 3, 0.1)])
    reference = tmp_path / "reference.csv"
    reference.write_text("dataset,pred_len,model,mse,mae\nETTh1,96,Slow,0.415,0.5\n")
    return first, second, reference


def welch_interval(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """(low, high, p) of mean(a) − mean(b) by Welch's formula: se² = va/na + vb/nb, Welch–Satterthwaite df."""
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    qa, qb = va / len(a), vb / len(b)
    se = math.sqrt(qa + qb)
    df = (qa + qb) ** 2 / (qa ** 2 / (len(a) - 1) + qb ** 2 / (len(b) - 1))
    t = stats.t.ppf(0.975, df)
    p = 2 * stats.t.sf(abs((ma - mb) / se), df)
    return ma - mb - t * se, ma - mb + t * se, p


def test_welch_gap_and_reference_interval_over_two_folders(folders, capsys):
    first, second, reference = folders
    assert main([str(first), str(second), "--rows", "Fast", "Slow", "--reference", str(reference)]) == 0
    out = capsys.readouterr().out
    mb = sum(B) / 3
    low, high, p = welch_interval(A, B)
    gap = f"{100 * (sum(A) / 2 - mb) / mb:+.2f} % [{100 * low / mb:+.2f}, {100 * high / mb:+.2f}] %, p = {p:.3g}"
    assert f"| ETTh1 | 96 | Fast | 1, 2 | 0.3100 ± 0.0141 | 0.4100 ± 0.0141 | {gap} |" in out
    # The reference (0.415) against Slow's t-interval of the mean, mean ± t(0.975, 2) sd / sqrt(3).
    sd = math.sqrt(sum((x - mb) ** 2 for x in B) / 2)
    half = stats.t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert f"| ETTh1 | 96 | Slow | 1, 2, 3 | {mb:.4f} ± {sd:.4f} |" in out
    assert f"0.415: inside [{mb - half:.4f}, {mb + half:.4f}] |" in out
    fast_half = stats.t.ppf(0.975, 1) * math.sqrt(2 * 0.01 ** 2) / math.sqrt(2)  # two seeds: t(0.975, 1) is 12.7
    assert f"0.415: inside [{0.31 - fast_half:.4f}, {0.31 + fast_half:.4f}] |" in out
    assert "Other" not in out


def test_one_run_in_two_folders_is_a_one_line_error(folders, tmp_path, capsys):
    first, _, _ = folders
    again = write_folder(tmp_path / "again", [("Fast", 2, 0.5)])
    assert main([str(first), str(again), "--rows", "Fast", "Slow"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "seed 2" in err and "name one of them only" in err


@pytest.mark.parametrize("rows", [["Fast", "Fast"], ["Fast", "Missing"]])
def test_rows_that_cannot_be_compared_are_one_line_errors(folders, rows, capsys):
    first, second, _ = folders
    assert main([str(first), str(second), "--rows", *rows]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
