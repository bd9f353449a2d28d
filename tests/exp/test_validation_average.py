"""`--vali_loss`: the mean over every validation element (default) or TSLib's unweighted mean of per-batch
losses, checked by hand and through the experiment's `vali` on a split whose last batch is short."""

from __future__ import annotations

import pytest
import torch

from exp.arguments import build_parser, validate_args
from exp.distributed import DistContext
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.trainer import Trainer
from exp.validation_average import ValidationAverage
from utils.errors import UserInputError

ONE_PROCESS = DistContext()


def test_the_two_averages_by_hand():
    # Batches of 4 elements with squared-error sums 8 and 4, and a short batch of 1 element with 3.
    batches = [(8.0, 4), (4.0, 4), (3.0, 1)]
    samples, per_batch = ValidationAverage("samples"), ValidationAverage("batches")
    for total, n in batches:
        samples.add(total, n)
        per_batch.add(total, n)
    assert samples.result(ONE_PROCESS) == pytest.approx(15.0 / 9.0)
    assert per_batch.result(ONE_PROCESS) == pytest.approx((2.0 + 1.0 + 3.0) / 3.0)


def test_an_empty_batch_counts_only_for_samples():
    average = ValidationAverage("batches")
    average.add(0.0, 0)
    average.add(2.0, 2)
    assert average.result(ONE_PROCESS) == 1.0
    with pytest.raises(ValueError, match="--vali_loss"):
        ValidationAverage("median")


def test_vali_loss_batches_is_rejected_where_validation_is_not_a_mean_squared_error(make_configs):
    validate_args(make_configs(vali_loss="batches"))
    with pytest.raises(UserInputError, match="^--vali_loss batches applies to long_term_forecast and imputation"):
        validate_args(make_configs(vali_loss="batches", task_name="classification", data="UEA"))


@pytest.mark.parametrize("how", ["samples", "batches"])
def test_experiment_vali_uses_the_chosen_average(in_tmp, toy, how):
    args = build_parser().parse_args(toy(in_tmp, "--vali_loss", how, "--batch_size", "16", "--model", "DLinear"))
    exp = Exp_Long_Term_Forecast(args)
    data = exp._load_datasets()
    Trainer(exp, "vali_average", data)
    vali_data, vali_loader = data["val"]
    sums, counts = [], []
    torch.manual_seed(5)  # under `batches` the validation order is TSLib's shuffle, drawn from this stream
    with torch.no_grad():
        exp.model.eval()
        for batch in vali_loader:
            out, y = exp.step.targets(*exp._predict(batch, exp.eval_runner))
            sums.append(float(((out.double() - y.double()) ** 2).sum()))
            counts.append(y.numel())
    assert counts[-1] < counts[0]  # the split ends with a short batch, where the two averages differ
    assert vali_loader.sampler.shuffle == (how == "batches")
    by_samples = sum(sums) / sum(counts)
    by_batches = sum(s / n for s, n in zip(sums, counts, strict=True)) / len(sums)
    assert abs(by_samples - by_batches) > 1e-6 * by_samples
    expected = by_samples if how == "samples" else by_batches
    torch.manual_seed(5)
    assert exp.vali(vali_data, vali_loader) == pytest.approx(expected, rel=1e-5)
