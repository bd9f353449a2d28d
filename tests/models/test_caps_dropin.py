"""Drop-in check: models/CAPS.py + layers/CAPS_Attention.py + the folder layers/caps/ copied into a bare
`models/` + `layers/` layout import and run with stock-TSLib flags only, in a fresh interpreter without the
repo on sys.path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The long-term-forecast flags of a stock TSLib run.py: its parser defaults, with the ETTh1 data flags
# and d_model = d_ff = 128 (as TSLib's iTransformer_ETTh2 script; keeps the test fast). Deliberately
# no CAPS flag, so every CAPS option must fall back to its default.
STOCK_FLAGS = dict(
    task_name="long_term_forecast", is_training=1, model_id="ETTh1_96_96", model="CAPS", data="ETTh1",
    root_path="./dataset/ETT-small/", data_path="ETTh1.csv", features="M", target="OT", freq="h",
    checkpoints="./checkpoints/", seq_len=96, label_len=48, pred_len=96, seasonal_patterns="Monthly",
    inverse=False, expand=2, d_conv=4, top_k=5, num_kernels=6, enc_in=7, dec_in=7, c_out=7, d_model=128,
    n_heads=8, e_layers=2, d_layers=1, d_ff=128, moving_avg=25, factor=1, distil=True, dropout=0.1,
    embed="timeF", activation="gelu", channel_independence=1, decomp_method="moving_avg", use_norm=1,
    down_sampling_layers=0, down_sampling_window=1, down_sampling_method=None, seg_len=96,
    num_workers=10, itr=1, train_epochs=10, batch_size=32, patience=3, learning_rate=0.0001, des="Exp",
    loss="MSE", lradj="type1", use_amp=False, use_gpu=False, gpu=0, use_multi_gpu=False, devices="0,1,2,3",
    p_hidden_dims=[128, 128], p_hidden_layers=2, use_dtw=False, augmentation_ratio=0, seed=2021,
)

CHILD = textwrap.dedent("""
    import json, sys, types
    from pathlib import Path

    drop_dir, repo = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    flags = json.loads(sys.argv[3])
    # Keep stdlib/site-packages only (a .pth of an editable install could point at the repo).
    sys.path[:] = [str(drop_dir)] + [p for p in sys.path if p and not Path(p).resolve().is_relative_to(repo)]
    import torch

    before = set(sys.modules)
    from models.CAPS import Model
    imported = sorted({name.split(".")[0] for name in set(sys.modules) - before})

    torch.manual_seed(0)
    configs = types.SimpleNamespace(**flags)
    model = Model(configs)
    B, L, Ll, H, C = 2, configs.seq_len, configs.label_len, configs.pred_len, configs.enc_in
    x = torch.randn(B, L, C)
    x_mark, y_mark = torch.rand(B, L, 4) - 0.5, torch.rand(B, Ll + H, 4) - 0.5
    x_dec = torch.cat([x[:, -Ll:], torch.zeros(B, H, C)], dim=1)
    out_train = model(x, x_mark, x_dec, y_mark)
    out_train.square().mean().backward()
    model.eval()
    with torch.no_grad():
        out_eval = model(x, x_mark, x_dec, y_mark)
        out_nomarks = model(x, None, x_dec, None)
    repo_modules = sorted(
        name for name, mod in list(sys.modules.items())
        if getattr(mod, "__file__", None) and Path(mod.__file__).resolve().is_relative_to(repo)
    )
    print(json.dumps({
        "imported": imported,
        "stdlib": sorted(sys.stdlib_module_names),
        "model_file": sys.modules["models.CAPS"].__file__,
        "layer_file": sys.modules["layers.CAPS_Attention"].__file__,
        "repo_modules": repo_modules,
        "types": [type(t).__name__ for t in (out_train, out_eval, out_nomarks)],
        "shapes": [list(t.shape) for t in (out_train, out_eval, out_nomarks)],
        "finite": all(bool(torch.isfinite(t).all()) for t in (out_train, out_eval, out_nomarks)),
        "params": sum(p.numel() for p in model.parameters()),
    }))
""")


def test_caps_drops_into_a_stock_tslib_layout(tmp_path):
    for package, source in (("models", "CAPS.py"), ("layers", "CAPS_Attention.py")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        shutil.copy(REPO / package / source, tmp_path / package / source)
    shutil.copytree(REPO / "layers" / "caps", tmp_path / "layers" / "caps", ignore=shutil.ignore_patterns("__pycache__"))
    assert not any(key.startswith(("caps_", "time_emb", "random_channel", "number_of")) for key in STOCK_FLAGS)

    # The native CPU kernel comes with layers/caps/ but is not built here: a build from the copy's source
    # path takes 30 s or more and replaces the repository's cached build (tests/layers/test_caps_cpu_kernel.py).
    env = {**os.environ, "CAPS_NATIVE_KERNEL": "0"}
    result = subprocess.run(
        [sys.executable, "-I", "-c", CHILD, str(tmp_path), str(REPO), json.dumps(STOCK_FLAGS)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False, env=env,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])

    allowed = set(report["stdlib"]) | {"torch", "einops", "models", "layers"}
    assert set(report["imported"]) <= allowed, sorted(set(report["imported"]) - allowed)
    assert Path(report["model_file"]).resolve() == (tmp_path / "models" / "CAPS.py").resolve()
    assert Path(report["layer_file"]).resolve() == (tmp_path / "layers" / "CAPS_Attention.py").resolve()
    assert report["repo_modules"] == []
    assert report["types"] == ["Tensor"] * 3
    assert report["shapes"] == [[2, STOCK_FLAGS["pred_len"], STOCK_FLAGS["c_out"]]] * 3
    assert report["finite"]
    # --d_model 128 is the channel-token width, d_emb = 16 (7 + 4 channels), D = 144, 8 heads of
    # width 18, T = 192, 2 layers; CAPS options at their defaults (learned RoPE: 9 per layer).
    width = 128 + 16
    layer = 6 * width**2 + width * 8 + 9 + 2 * width + 8 * width**2
    expected = 96 * 96 + 11 * 128 + 7 * 16 + 192 * width + 7 * width + 2 * layer
    assert report["params"] == expected
