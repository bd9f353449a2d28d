"""Our models' trainable parameters carry TSLib's names and shapes (the shared layers keep TSLib's
attribute names: `tokenConv`, `conv1`/`conv2`, `inner_attention`, ...), so a TSLib checkpoint's
parameters map one to one onto ours. Reference: TSLib's module trees at the ETTh1 pred_len 96 block.
"""

from __future__ import annotations

import pytest

from compare.grid.efficiency import build_model
from exp.model_registry import MODEL_REGISTRY
from tests.models.tslib_reference import (
    NO_ETTH1_BLOCK,
    NOT_IN_TSLIB,
    model_params,
    tslib_configs,
    tslib_parameter_shapes,
)

# Every registered model that TSLib also ships with an ETTh1 block.
MODELS = model_params(sorted(set(MODEL_REGISTRY) - NOT_IN_TSLIB - set(NO_ETTH1_BLOCK)))


@pytest.mark.parametrize("model_name", MODELS)
def test_parameter_names_and_shapes_equal_tslib(make_configs, model_name):
    expected = tslib_parameter_shapes(model_name)
    model = build_model(tslib_configs(make_configs, model_name))
    ours = {(name, tuple(p.shape)) for name, p in model.named_parameters() if p.requires_grad}
    assert sorted(ours - expected) == [] and sorted(expected - ours) == []
