"""`python -m compare --data_path <ILI-like csv> --name ILI --models ... --epochs 1` end to end on a generated weekly
CSV the recipes never saw: two models really train one epoch at the horizons the file holds, and every table
(markdown, CSV, LaTeX), figure title and file name, model_id and compare.json says ILI, never the ETTh1 whose
recipe the runs borrow (named once, in the report's line on the data)."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import matplotlib.axes
import matplotlib.figure

from compare.run import runner
from tests.compare.own_csv import write_dated_csv


def test_a_comparison_on_the_users_own_csv_says_its_name(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    titles: list[str] = []
    set_title, suptitle = matplotlib.axes.Axes.set_title, matplotlib.figure.Figure.suptitle
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title",
                        lambda ax, label, *a, **k: titles.append(str(label)) or set_title(ax, label, *a, **k))
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle",
                        lambda fig, text, *a, **k: titles.append(str(text)) or suptitle(fig, text, *a, **k))
    # 1000 weekly rows split 700/100/200: of the default horizons only 96 fits the validation split.
    path = write_dated_csv(tmp_path / "data" / "national_illness.csv", rows=1000, freq="W-SUN", variates=7)
    out = tmp_path / "out"
    argv = ["--data_path", str(path), "--name", "ILI", "--models", "DLinear", "PatchTST", "--epochs", "1",
            "--num_workers", "0", "--no-probe", "--no-timing", "--out", str(out),
            "--extra=--e_layers 1 --d_model 16 --d_ff 32 --batch_size 64"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv)
    log = buffer.getvalue()
    assert code == 0, log
    assert "ILI: H = 192 336 720 left out" in log

    records = [json.loads(line) for line in (out / "runs" / "results.jsonl").read_text().splitlines()]
    assert [(r["model"], r["model_id"], r["pred_len"], r["data"], r["data_path"]) for r in records] == [
        ("DLinear", "ILI_96_96", 96, "custom", "national_illness.csv"),
        ("PatchTST", "ILI_96_96", 96, "custom", "national_illness.csv")]
    assert all((r["config"]["enc_in"], r["config"]["freq"], r["seasonal_naive"]["period"]) == (7, "w", 52)
               for r in records)

    md = (out / "table.md").read_text().splitlines()
    assert "| ILI | 96 |" in "\n".join(md)
    [own_line] = [line for line in md if "ETTh1" in line]
    assert own_line.startswith("**Own data ILI:** `../data/national_illness.csv` (relative to the output folder); "
                               "each model runs its ETTh1 recipe") and "seasonal naive period 52" in own_line
    with (out / "table.csv").open() as f:
        table = list(csv.DictReader(f))
    assert {r["dataset"] for r in table} == {"ILI"} and {r["model"] for r in table} == {"DLinear", "PatchTST"}
    tex = (out / "table.tex").read_text()
    assert "ILI" in tex and "ETTh1" not in tex and "ETTh1" not in (out / "table.csv").read_text()
    assert "## ILI (L = 96, 7 variates)" in (out / "efficiency.md").read_text()
    assert (out / "forecast_ILI_96.png").is_file() and (out / "forecast_ILI_96.pdf").is_file()
    assert "ILI" in titles and any(t.startswith("ILI, H = 96") for t in titles)
    assert not [t for t in titles if "ETTh1" in t]
    config = json.loads((out / "compare.json").read_text())
    assert config["data"] == ["ILI"] and config["own_data"]["ILI"]["data_path"] == "../data/national_illness.csv"
