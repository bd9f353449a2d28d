"""Train/eval samplers: `--rng_stream tslib` draws from the global torch RNG exactly what TSLib's DataLoaders
draw (checked against torch's own shuffled and unshuffled loaders), and a resumed epoch replays its order."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from exp.arguments import build_parser
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.samplers import TSLIB_EVAL_DRAWS, GlobalStreamSampler, ResumableSampler, ShardSampler


def order(loader: DataLoader) -> list[int]:
    return [i for batch in loader for i in batch.tolist()]


@pytest.mark.parametrize("n_train, n_eval, batch", [(100, 50, 32), (8449, 2785, 32), (7, 3, 4)])
def test_tslib_stream_draws_what_tslib_loaders_draw(n_train, n_eval, batch):
    # TSLib: shuffled train and val loaders, unshuffled test loader, all on the global generator.
    torch.manual_seed(2021)
    tslib_orders = [order(DataLoader(range(n_train), batch_size=batch, shuffle=True)) for _ in range(2)]
    order(DataLoader(range(n_eval), batch_size=batch, shuffle=True))
    order(DataLoader(range(n_eval), batch_size=batch, shuffle=False))
    tslib_next = torch.rand(5)

    torch.manual_seed(2021)
    private = torch.Generator().manual_seed(0)  # our loaders' own generator (workers' base seed)
    train = DataLoader(range(n_train), batch_size=batch, sampler=GlobalStreamSampler(n_train), generator=private)
    ours = [order(train) for _ in range(2)]
    for split in ("val", "test"):
        sampler = ShardSampler(n_eval, global_draws=TSLIB_EVAL_DRAWS[split])
        assert order(DataLoader(range(n_eval), batch_size=batch, sampler=sampler, generator=private)) == \
            list(range(n_eval))
    assert ours == tslib_orders
    assert torch.equal(torch.rand(5), tslib_next)


@pytest.mark.parametrize("n_eval, batch", [(2785, 128), (7, 4)])
def test_shuffled_validation_replays_tslibs_validation_order(n_eval, batch):
    """--vali_loss batches: the validation order is the one TSLib's shuffled val loader reads."""
    torch.manual_seed(2021)
    order(DataLoader(range(10), batch_size=4, shuffle=True))  # an epoch of training before validation
    tslib_val = order(DataLoader(range(n_eval), batch_size=batch, shuffle=True))
    tslib_next = torch.rand(3)

    torch.manual_seed(2021)
    private = torch.Generator().manual_seed(0)  # our loaders' own generator (workers' base seed)
    order(DataLoader(range(10), batch_size=4, sampler=GlobalStreamSampler(10), generator=private))
    val = ShardSampler(n_eval, global_draws=TSLIB_EVAL_DRAWS["val"], shuffle=True)
    ours = order(DataLoader(range(n_eval), batch_size=batch, sampler=val, generator=private))
    assert ours == tslib_val and sorted(ours) == list(range(n_eval)) and ours != list(range(n_eval))
    assert torch.equal(torch.rand(3), tslib_next)
    with pytest.raises(ValueError, match="one process, two draws"):
        ShardSampler(n_eval, global_draws=TSLIB_EVAL_DRAWS["test"], shuffle=True)


def test_resumed_epoch_replays_its_order_without_drawing():
    torch.manual_seed(3)
    sampler = GlobalStreamSampler(40)
    full = list(sampler)
    state = sampler.state_dict()
    rng = torch.get_rng_state()

    resumed = GlobalStreamSampler(40)
    resumed.load_state_dict(state)
    resumed.skip(8)
    assert list(resumed) == full[8:]
    assert torch.equal(torch.get_rng_state(), rng)  # nothing drawn
    assert list(resumed) != full  # the next epoch draws a fresh order


def test_epoch_stream_is_a_function_of_seed_and_epoch():
    def epoch_order(seed: int, epoch: int) -> list[int]:
        sampler = ResumableSampler(torch.utils.data.DistributedSampler(range(30), num_replicas=1, rank=0,
                                                                       shuffle=True, seed=seed))
        sampler.set_epoch(epoch)
        return list(sampler)

    rng = torch.get_rng_state()
    assert epoch_order(1, 2) == epoch_order(1, 2) != epoch_order(1, 3)
    assert torch.equal(torch.get_rng_state(), rng)


@pytest.mark.parametrize("stream, train_sampler, eval_draws",
                         [("tslib", GlobalStreamSampler, (2, 1)), ("epoch", ResumableSampler, (0, 0))])
def test_rng_stream_flag_selects_the_samplers(in_tmp, toy, toy_csv, stream, train_sampler, eval_draws):
    toy_csv(in_tmp / "toy.csv")
    args = build_parser().parse_args(toy(in_tmp, "--rng_stream", stream))
    exp = Exp_Long_Term_Forecast(args)
    assert isinstance(exp._get_data("train")[1].sampler, train_sampler)
    assert tuple(exp._get_data(split)[1].sampler.global_draws for split in ("val", "test")) == eval_draws
