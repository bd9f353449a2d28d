"""run.py on a CUDA device: both AMP paths (fp16 with GradScaler, bf16 without) and clipping after
unscaling train to finite metrics and write the TSLib files. Skipped without a GPU (CI has none)."""

from __future__ import annotations

import pytest
import torch

import run

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (none visible to torch)")


@pytest.mark.parametrize("model", ["CAPS", "PatchTST", "TimesNet"])
@pytest.mark.parametrize("amp", [[], ["--use_amp", "--amp_dtype", "fp16"], ["--use_amp", "--amp_dtype", "bf16"]],
                         ids=["fp32", "fp16", "bf16"])
def test_cuda_run_trains_to_finite_metrics(in_tmp, toy, results, model: str, amp: list[str]) -> None:
    argv = toy(in_tmp, "--train_epochs", "2", "--max_grad_norm", "1", *amp, model=model)
    torch.cuda.reset_peak_memory_stats()
    assert run.main(argv) == 0
    assert torch.cuda.max_memory_allocated() > 0, "the run did not use the GPU"
    (line,) = results(in_tmp)
    assert all(torch.isfinite(torch.tensor(line[key])) for key in ("mse", "mae")), line
    assert line["epochs_run"] == 2
    assert list(in_tmp.glob("checkpoints/*/checkpoint.pth")), "no checkpoint written"
