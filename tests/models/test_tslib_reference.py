"""Every registered model that TSLib also ships has TSLib's architecture at TSLib's ETTh1 script block:
the same trainable parameter count and the same forward FLOPs for one sample (`tslib_reference`).

FLOPs are compared where TSLib's do not depend on the data (TimesNet's FFT-chosen periods do: its
parameters are still pinned).
"""

from __future__ import annotations

import pytest

from compare.grid.efficiency import build_model, count_parameters, example_inputs, forward_flops
from exp.model_registry import MODEL_REGISTRY
from tests.models.tslib_reference import (
    NO_ETTH1_BLOCK,
    NOT_IN_TSLIB,
    model_params,
    tslib_configs,
    tslib_flops,
    tslib_params,
    tslib_row,
)

MODELS = model_params(sorted(set(MODEL_REGISTRY) - NOT_IN_TSLIB - set(NO_ETTH1_BLOCK)))


@pytest.mark.parametrize("model_name", MODELS)
def test_parameters_and_flops_equal_tslib(make_configs, model_name):
    configs = tslib_configs(make_configs, model_name)
    model = build_model(configs)
    assert count_parameters(model) == tslib_params(model_name)
    if tslib_row(model_name)["flops_data_dependent"] == "True":
        return
    assert forward_flops(model, example_inputs(configs, 1)) == tslib_flops(model_name)
