"""Classification heads of TimesNet, PatchTST, iTransformer and DLinear: TSLib's parameter counts at its
JapaneseVowels script block (docs tslib_models/classification_JapaneseVowels.csv: enc_in 12, seq_len 29,
9 classes), TSLib's parameter names, output shape, a backward pass, and what the padding mask does."""

from __future__ import annotations

import csv
import importlib

import pytest
import torch

from exp.arguments import build_parser
from exp.model_registry import MODEL_REGISTRY
from tests.models.tslib_reference import TSLIB_MODELS_CSV
from utils.errors import UserInputError

CLASSIFICATION_CSV = TSLIB_MODELS_CSV.parent / "tslib_models" / "classification_JapaneseVowels.csv"
BLOCK_FLAGS = ("e_layers", "d_layers", "d_model", "d_ff", "n_heads", "factor")
# Architecture flags of `other_block_flags` (the rest there are run options: patience, GPU, checkpoints; and
# iTransformer's enc_in, which the experiment sets from the data).
ARCHITECTURE_FLAGS = ("top_k", "expand", "d_conv", "tv_dt", "tv_B", "tv_C", "use_D", "num_kernels", "dropout")


def tslib_classification_blocks() -> list[tuple[str, dict, int]]:
    """(model, block flags, TSLib's trainable parameters) for every CSV row whose model serves
    classification here. enc_in, seq_len and num_class come from the data (12, 29, 9), as in the run."""
    if not CLASSIFICATION_CSV.is_file():
        return []
    blocks = []
    with CLASSIFICATION_CSV.open() as handle:
        for row in csv.DictReader(handle):
            if row["model"] not in MODEL_REGISTRY:
                continue
            flags = {name: int(row[name]) for name in BLOCK_FLAGS}
            for item in filter(None, row["other_block_flags"].split(";")):
                key, value = item.split("=")
                if key in ARCHITECTURE_FLAGS:
                    flags[key] = float(value) if "." in value else int(value)
            blocks.append((row["model"], flags, int(row["params_trainable"])))
    return blocks

# (model, block flags, TSLib's trainable parameter count, the classification head's parameters)
BLOCKS = [
    ("TimesNet", dict(e_layers=2, d_model=16, d_ff=32, top_k=3), 591161, {"projection.weight": (9, 16 * 29)}),
    ("PatchTST", dict(e_layers=3, d_model=128, d_ff=256, top_k=3), 441225, {"projection.weight": (9, 128 * 3 * 12)}),
    ("iTransformer", dict(e_layers=3, d_model=128, d_ff=256, top_k=3), 415369, {"projection.weight": (9, 128 * 12)}),
    ("DLinear", dict(e_layers=3, d_model=128, d_ff=256, top_k=3), 4881,
     {"projection.weight": (9, 12 * 29), "Linear_Seasonal.weight": (29, 29)}),
]


def classification_configs(model: str, seq_len: int = 29, enc_in: int = 12, num_class: int = 9, **flags):
    """The run.py namespace of a JapaneseVowels block after the experiment has read the data."""
    args = build_parser().parse_args(["--task_name", "classification", "--is_training", "1", "--model_id",
                                      "JapaneseVowels", "--model", model, "--data", "UEA"])
    for key, value in flags.items():
        setattr(args, key, value)
    args.seq_len, args.pred_len, args.enc_in, args.num_class = seq_len, 0, enc_in, num_class
    return args


def build(model: str, **flags) -> torch.nn.Module:
    return importlib.import_module(f"models.{model}").Model(classification_configs(model, **flags))


def test_the_tslib_classification_table_is_present():
    assert CLASSIFICATION_CSV.is_file(), f"{CLASSIFICATION_CSV} is missing: the tests need ../shared beside the repo"
    assert {b[0] for b in BLOCKS} <= {b[0] for b in tslib_classification_blocks()}


@pytest.mark.parametrize("model,flags,params", tslib_classification_blocks(),
                         ids=[b[0] for b in tslib_classification_blocks()])
def test_parameter_count_matches_tslib_at_its_japanese_vowels_block(model, flags, params):
    net = build(model, **flags)
    assert sum(p.numel() for p in net.parameters() if p.requires_grad) == params


@pytest.mark.parametrize("model,flags,params,head", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_parameter_count_and_head_match_tslib(model, flags, params, head):
    torch.manual_seed(0)
    net = build(model, **flags)
    assert sum(p.numel() for p in net.parameters() if p.requires_grad) == params
    shapes = {name: tuple(p.shape) for name, p in net.named_parameters()}
    assert all(shapes[name] == shape for name, shape in head.items())
    assert "head.linear.weight" not in shapes and "predict_linear.weight" not in shapes
    x, mask = torch.randn(3, 29, 12), torch.ones(3, 29)
    logits = net(x, mask, None, None)
    assert logits.shape == (3, 9)
    logits.sum().backward()
    assert all(p.grad is not None for name, p in net.named_parameters() if name.startswith("projection"))


def test_timesnet_zeroes_padded_steps_before_the_projection():
    torch.manual_seed(0)
    net = build("TimesNet", e_layers=1, d_model=8, d_ff=8, top_k=2, dropout=0.0).eval()
    x = torch.randn(2, 29, 12)
    mask = torch.ones(2, 29)
    mask[:, 20:] = 0
    with torch.no_grad():
        full, masked = net(x, torch.ones(2, 29), None, None), net(x, mask, None, None)
        # Dropping the padded steps' features by hand gives the masked logits.
        weight = net.projection.weight.reshape(9, 29, 8)
        tokens = net.enc_embedding(x, None)
        for block in net.model:
            tokens = net.layer_norm(block(tokens))
        features = torch.nn.functional.gelu(tokens)[:, :20]
        expected = torch.einsum("btd,ktd->bk", features, weight[:, :20]) + net.projection.bias
    torch.testing.assert_close(masked, expected)
    assert not torch.allclose(full, masked)


@pytest.mark.parametrize("model", [b[0] for b in BLOCKS])
def test_num_class_must_come_from_the_data(model):
    args = classification_configs(model, e_layers=1, d_model=16, d_ff=16)
    del args.num_class
    with pytest.raises(UserInputError, match="num_class"):
        importlib.import_module(f"models.{model}").Model(args)


def test_basic_motions_shapes_build_without_c_out():
    # BasicMotions: 6 dimensions < the default --c_out 7, which classification never reads.
    for model in ("TimesNet", "PatchTST", "iTransformer", "DLinear"):
        net = build(model, seq_len=100, enc_in=6, num_class=4, e_layers=1, d_model=16, d_ff=16, top_k=3)
        assert net(torch.randn(2, 100, 6), torch.ones(2, 100), None, None).shape == (2, 4)
