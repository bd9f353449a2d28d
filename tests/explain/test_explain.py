"""`python -m explain` on a tiny CAPS checkpoint saved the way exp saves one (checkpoint.pth plus the
flags in last.pth): the per-path outputs add up to each layer's output, the path weights reproduce each
path's output, the command writes its files, and bad input ends in one `error:` line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from einops import rearrange

from data_provider.data_factory import build_dataset
from exp.arguments import build_parser, make_setting
from exp.checkpointing import BEST_FILE, LAST_FILE, LAST_FORMAT, run_fingerprint
from exp.saved_run_flags import run_arguments
from exp.train_step import model_inputs
from explain.checkpoint import load_caps
from explain.cli import main
from explain.paths import WEIGHT_FILES, capture_layers, look_at_layer, path_matrices
from layers.CAPS_Attention import path_weights
from models.CAPS import Model
from tests.numerics import assert_close_to_scale
from utils.record_paths import absolute_paths, record_path
from utils.tools import atomic_torch_save

LAYERS, HEADS, STEPS = 2, 2, 24 + 12


def write_csv(path: Path, rows: int = 200) -> None:
    """Hourly `date` and three noisy sines (the last named OT)."""
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    pd.DataFrame({
        "date": pd.date_range("2021-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
        "x0": np.sin(t / 5) + 0.1 * rng.normal(size=rows),
        "x1": np.sin(t / 9) + 0.1 * rng.normal(size=rows),
        "OT": np.cos(t / 7) + 0.1 * rng.normal(size=rows),
    }).to_csv(path, index=False)


def run_argv(root: Path, *extra: str, model: str = "CAPS") -> list[str]:
    return ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "toy", "--model", model,
            "--data", "custom", "--root_path", str(root), "--data_path", "toy.csv", "--features", "M",
            "--seq_len", "24", "--label_len", "12", "--pred_len", "12", "--enc_in", "3", "--dec_in", "3",
            "--c_out", "3", "--d_model", "16", "--n_heads", str(HEADS), "--e_layers", str(LAYERS),
            "--checkpoints", str(root / "checkpoints"), *extra]


def save_run(root: Path, args, state: dict) -> Path:
    """checkpoint.pth and a finished run's last.pth (exp's `mark_complete` record), as exp writes them."""
    folder = Path(args.checkpoints) / make_setting(args, 0)
    atomic_torch_save(state, folder / BEST_FILE)
    atomic_torch_save({"format": LAST_FORMAT, "args": run_fingerprint(args), "complete": True}, folder / LAST_FILE)
    return folder


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("explain")
    write_csv(root / "toy.csv")
    return root


@pytest.fixture(scope="module")
def run_folder(root) -> Path:
    """A tiny CAPS (chunked kernel: no native build needed) with weights drawn large enough that every path,
    gate and clock differs from its initial value."""
    args = build_parser().parse_args(run_argv(root, "--caps_impl", "chunked"))
    torch.manual_seed(0)
    model = Model(args)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".attn." in name:
                param.normal_(0.0, 0.3)
    return save_run(root, args, model.state_dict())


def window_looks(run_folder: Path, root: Path, window: int = 3):
    args = run_arguments(run_folder, ["--root_path", str(root)])
    model = load_caps(run_folder / BEST_FILE, args, torch.float64)
    batch = tuple(torch.as_tensor(item)[None] for item in build_dataset(args, "test")[window])
    inputs = (t.double() for t in model_inputs(batch, args.label_len, args.pred_len, torch.device("cpu"))[:4])
    _, calls = capture_layers(model, *inputs)
    return [look_at_layer(*call) for call in calls]


def test_flags_come_from_last_pth_and_the_command_line_overrides_them(run_folder, root):
    args = run_arguments(run_folder, ["--root_path", str(root), "--caps_impl", "naive"])
    assert (args.model, args.d_model, args.e_layers, args.caps_impl, args.is_training) == ("CAPS", 16, 2, "naive", 0)
    assert run_arguments(run_folder, ["--root_path", str(root)]).caps_impl == "chunked"


def test_path_outputs_add_up_to_each_layers_output(run_folder, root):
    looks = window_looks(run_folder, root)
    assert len(looks) == LAYERS
    for look in looks:
        assert look.total.dtype == torch.float64 and tuple(look.outputs) == (1, 2, 3)
        assert_close_to_scale(sum(look.outputs.values()), look.total, 1e-12, scale_floor=1.0)
        # The layer's own forward: c_proj of the summed heads (dropout is off in eval mode).
        summed = rearrange(sum(look.outputs.values()), "b t h e -> b t (h e)")
        assert_close_to_scale(look.layer.c_proj(summed), look.layer_output, 1e-12, scale_floor=1.0)


def test_path_weights_applied_to_the_values_give_each_paths_output(run_folder, root):
    for look in window_looks(run_folder, root):
        for path, output in look.outputs.items():
            for row in range(output.shape[0]):
                weights, scores = path_matrices(look, path, row)  # [H, T, T]
                assert weights.shape == (HEADS, STEPS, STEPS)
                assert torch.all(weights.triu(1) == 0) and torch.all(scores.triu(1) == 0)
                v = look.inputs["v"][row]  # [T, H, Ev]
                assert_close_to_scale(torch.einsum("hti,ihv->thv", scores, v), output[row], 1e-12, scale_floor=1.0)


def test_path_weights_are_the_papers_weights(run_folder, root):
    """G and the clock average are distributions over i <= t; A is 1 on the diagonal and decays with distance."""
    inputs = window_looks(run_folder, root)[0].inputs
    p, g, clock = inputs["p"], inputs["g"], inputs["clock"]
    ones = torch.ones(1, dtype=torch.float64)
    riemann, decay, average = (path_weights(p, g, clock, (path,)) for path in (1, 2, 3))  # [Ct, H, T, T, *]
    assert_close_to_scale(riemann.sum(3), ones.expand_as(riemann.sum(3)), 1e-12, scale_floor=1.0)
    assert_close_to_scale(average.sum(3), ones.expand_as(average.sum(3)), 1e-12, scale_floor=1.0)
    assert_close_to_scale(decay.diagonal(dim1=2, dim2=3), ones.expand_as(decay.diagonal(dim1=2, dim2=3)), 1e-12, scale_floor=1.0)
    assert torch.all(decay[:, :, 1:, 0] <= decay[:, :, :-1, 0])


def test_the_command_writes_one_png_pdf_and_npz_per_quantity(run_folder, root, tmp_path):
    out = tmp_path / "look"
    assert main(["--checkpoint", str(run_folder), "--window", "2", "--channel", "1", "--out", str(out),
                 "--root_path", str(root)]) == 0
    stems = ["contributions", "clock", *WEIGHT_FILES.values(), "forecast"]
    assert sorted(f.name for f in out.iterdir()) == sorted(
        [f"{s}.{ext}" for s in stems for ext in ("npz", "png", "pdf")] + ["explain.json"])
    # A record: the checkpoint and the flags' paths relative to the repository (utils/record_paths.py).
    summary = json.loads((out / "explain.json").read_text())
    assert absolute_paths(json.dumps(summary)) == []
    assert summary["checkpoint"] == record_path(str((run_folder / "checkpoint.pth").resolve()))
    contributions = np.load(out / "contributions.npz")
    clock = np.load(out / "clock.npz")
    assert clock["channel"].shape == clock["mean"].shape == (LAYERS, HEADS, STEPS)
    assert np.all(clock["channel"] > 0)
    for path, stem in WEIGHT_FILES.items():
        arrays = np.load(out / f"{stem}.npz")
        assert arrays["channel"].shape == arrays["mean"].shape == (LAYERS, HEADS, STEPS, STEPS)
        # The saved scores applied to the saved values give the saved contribution of the path.
        outputs = np.einsum("lhti,lihv->lhtv", arrays["scores_channel"], arrays["values_channel"])
        np.testing.assert_allclose(np.linalg.norm(outputs, axis=-1), contributions[f"o{path}_channel"],
                                   rtol=1e-9, atol=1e-12)


def one_error_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize(("extra", "expected"), [
    (["--window", "100000"], "--window 100000 is out of range"),
    (["--channel", "3"], "--channel 3 is out of range"),
    (["--caps_numerics", "official"], "--caps_numerics official"),
], ids=["window", "channel", "official-numerics"])
def test_bad_input_is_one_error_line(capsys, run_folder, root, tmp_path, extra, expected):
    line = one_error_line(capsys, ["--checkpoint", str(run_folder), "--out", str(tmp_path), "--root_path",
                                   str(root), *extra])
    assert expected in line


def test_a_missing_checkpoint_is_one_error_line(capsys, tmp_path):
    assert "not found" in one_error_line(capsys, ["--checkpoint", str(tmp_path / "nothing")])


def test_a_non_caps_checkpoint_is_one_error_line(capsys, root, tmp_path):
    args = build_parser().parse_args(run_argv(root, "--checkpoints", str(tmp_path), "--model_id", "other"))
    folder = save_run(root, args, {"Linear_Seasonal.weight": torch.zeros(12, 24)})
    assert "holds no CAPS attention weights" in one_error_line(capsys, ["--checkpoint", str(folder)])
    dlinear = build_parser().parse_args(run_argv(root, "--checkpoints", str(tmp_path), model="DLinear"))
    folder = save_run(root, dlinear, {"Linear_Seasonal.weight": torch.zeros(12, 24)})
    assert "--model DLinear" in one_error_line(capsys, ["--checkpoint", str(folder / BEST_FILE)])


def test_without_out_the_files_go_beside_the_settings_test_figures(run_folder, root, tmp_path, monkeypatch):
    """The default folder is ./test_results/<setting>/explain/window<I>_channel<C> (git-ignored), never the
    package folder explain/."""
    monkeypatch.chdir(tmp_path)
    assert main(["--checkpoint", str(run_folder), "--window", "1", "--channel", "0", "--root_path", str(root)]) == 0
    folder = tmp_path / "test_results" / run_folder.name / "explain" / "window1_channel0"
    assert (folder / "explain.json").is_file() and (folder / "contributions.png").is_file()
