"""`python -m compare --task classification` end to end: two models really train one epoch on small generated
UEA files (named JapaneseVowels, as the recipe table's dataset), the report holds their accuracies, and a
second invocation runs nothing."""

from __future__ import annotations

import contextlib
import csv
import io
import json

from compare.run import runner
from tests.data_provider.uea_files import toy_dataset


def test_a_tiny_classification_comparison(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    toy_dataset(tmp_path / "data" / "JapaneseVowels", name="JapaneseVowels", n_train=12, n_test=6)
    out = tmp_path / "out"
    argv = ["--task", "classification", "--data", "JapaneseVowels", "--models", "DLinear", "iTransformer",
            "--root", str(tmp_path / "data"), "--out", str(out), "--epochs", "1", "--num_workers", "0",
            "--extra=--d_model 8 --d_ff 16 --e_layers 1 --n_heads 2 --batch_size 4"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv)
    log = buffer.getvalue()
    assert code == 0, log
    records = [json.loads(line) for line in (out / "runs" / "results.jsonl").read_text().splitlines()]
    assert [(r["model"], r["task_name"], r["n_test"]) for r in records] == [("DLinear", "classification", 6),
                                                                            ("iTransformer", "classification", 6)]
    with (out / "table.csv").open() as f:
        table = {r["model"]: r for r in csv.DictReader(f)}
    assert {m: float(table[m]["accuracy"]) for m in table} == {r["model"]: r["accuracy"] for r in records}
    assert (out / "accuracy_by_dataset.png").is_file()
    text = (out / "table.md").read_text()
    assert "| Dataset | Block | DLinear Acc | DLinear Macro F1 | iTransformer Acc | iTransformer Macro F1 |" in text

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert runner.main(argv) == 0
    assert "2 runs planned, 2 already finished, 0 to run" in buffer.getvalue()
