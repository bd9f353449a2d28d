"""A model-specific flag the chosen model does not read is named in one warning line, not ignored silently."""

from __future__ import annotations

import logging

import pytest
import torch.nn as nn

from exp.model_flags import (
    ReadRecorder,
    build_model_warning_ignored_flags,
    flags_read,
    ignored_model_flags,
    model_flag_defaults,
)
from exp.model_registry import MODEL_REGISTRY
from utils.train_split import needs_train_split, synthetic_train_split, with_train_split


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_recorder_records_reads_and_keeps_values(make_configs):
    recorder = ReadRecorder(make_configs(model="DLinear", moving_avg=13))
    assert recorder.moving_avg == 13 and recorder.enc_in == 7
    assert {"moving_avg", "enc_in"} <= recorder.names_read
    assert "top_k" not in recorder.names_read


def test_flag_of_another_model_is_one_warning_line(make_configs, caplog):
    configs = make_configs(model="PatchTST", down_sampling_layers=3, seq_len=32, pred_len=8)
    with caplog.at_level(logging.WARNING):
        model = build_model_warning_ignored_flags(MODEL_REGISTRY["PatchTST"], configs)
    assert isinstance(model, nn.Module)
    (line,) = _warnings(caplog)
    assert "PatchTST" in line and "--down_sampling_layers 3" in line and "\n" not in line


def test_flags_the_model_reads_do_not_warn(make_configs, caplog):
    configs = make_configs(model="TimeMixer", down_sampling_layers=2, down_sampling_window=2,
                           down_sampling_method="avg", d_model=8, d_ff=8, seq_len=32, pred_len=8)
    with caplog.at_level(logging.WARNING):
        build_model_warning_ignored_flags(MODEL_REGISTRY["TimeMixer"], configs)
    assert _warnings(caplog) == []


def test_defaults_and_shared_flags_do_not_warn(make_configs, caplog):
    # enc_in/dec_in/c_out/embed are read by the data pipeline whatever the model; defaults say nothing.
    configs = make_configs(model="DLinear", enc_in=3, dec_in=3, c_out=3, embed="fixed", seq_len=16, pred_len=4)
    with caplog.at_level(logging.WARNING):
        build_model_warning_ignored_flags(MODEL_REGISTRY["DLinear"], configs)
    assert _warnings(caplog) == []
    assert "enc_in" not in model_flag_defaults() and "down_sampling_layers" in model_flag_defaults()


def test_list_flag_is_shown_as_typed(make_configs, caplog):
    configs = make_configs(model="DLinear", p_hidden_dims=[64, 64], seq_len=16, pred_len=4)
    with caplog.at_level(logging.WARNING):
        build_model_warning_ignored_flags(MODEL_REGISTRY["DLinear"], configs)
    assert "--p_hidden_dims 64 64" in _warnings(caplog)[0]


def test_tslib_layout_flags_warn_only_where_no_model_reads_them(make_configs, caplog):
    small = dict(seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, n_heads=2, e_layers=2, d_layers=1)
    cases = [("Informer", dict(attn_output_layout="tslib", prob_eval_sampling="global"), []),
             ("FEDformer", dict(attn_output_layout="tslib"), []),
             ("FEDformer", dict(prob_eval_sampling="global"), ["--prob_eval_sampling global"]),
             ("Transformer", dict(attn_output_layout="tslib"), ["--attn_output_layout tslib"])]
    for model, flags, named in cases:
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            build_model_warning_ignored_flags(MODEL_REGISTRY[model], make_configs(model=model, **small, **flags))
        lines = _warnings(caplog)
        assert len(lines) == len(named) and all(flag in line for flag, line in zip(named, lines, strict=True))


def test_olinears_embed_size_given_to_dlinear_is_one_warning_line(make_configs, caplog):
    configs = make_configs(model="DLinear", embed_size=32, seq_len=16, pred_len=4)
    with caplog.at_level(logging.WARNING):
        build_model_warning_ignored_flags(MODEL_REGISTRY["DLinear"], configs)
    assert _warnings(caplog) == ["DLinear ignores --embed_size 32 (flags of other models; drop them)"]


def _changed(value: object) -> object:
    """A value other than `value` of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [*value, 1]
    return f"{value}_other" if value is not None else "other"


def _names_read(make_configs, name: str) -> frozenset[str]:
    from tests.models.test_task_contract import primary_configs

    recorder = ReadRecorder(primary_configs(make_configs, name))
    MODEL_REGISTRY[name](recorder)
    return recorder.names_read


@pytest.mark.parametrize("name", [m for m in MODEL_REGISTRY if m != "Mamba"])
def test_every_model_flag_a_model_does_not_read_is_named(make_configs, name):
    # Every model-specific flag × every model: set away from its default, a flag the model's constructor
    # never read is named in the warning; one it read is not (Mamba needs CUDA to be built).
    read = _names_read(make_configs, name)
    for flag, default in model_flag_defaults().items():
        named = ignored_model_flags(make_configs(**{flag: _changed(default)}), read)
        assert any(entry.startswith(f"--{flag} ") for entry in named) == (flag not in read), (name, flag)


def test_a_flag_read_only_by_a_shared_check_is_not_read(make_configs, caplog):
    # Every forecasting model checks 0 <= dropout < 1 (layers.config_checks.peek); DLinear has no dropout.
    configs = make_configs(model="DLinear", dropout=0.3, seq_len=16, pred_len=4)
    assert "dropout" not in flags_read(configs) and "names_read" not in flags_read(configs)
    with caplog.at_level(logging.WARNING):
        build_model_warning_ignored_flags(MODEL_REGISTRY["DLinear"], configs)
    assert _warnings(caplog) == ["DLinear ignores --dropout 0.3 (flags of other models; drop them)"]
    assert "dropout" in flags_read(make_configs(model="PatchTST", seq_len=16, pred_len=4))


@pytest.mark.parametrize("name", ["DLinear", "PatchTST", "TimeMixer", "Koopa", "OLinear", "CAPS"])
def test_flags_read_on_the_meta_device_match_a_real_build(make_configs, name):
    # Reference: the model built for real on the CPU (Koopa and OLinear from the same synthetic split).
    from tests.models.test_model_contract import tiny_configs

    configs = tiny_configs(make_configs, name, "M")
    if needs_train_split(MODEL_REGISTRY[name]) and getattr(configs, "train_split", None) is None:
        configs = with_train_split(configs, synthetic_train_split(rows=2048, channels=configs.enc_in))
    recorder = ReadRecorder(configs)
    MODEL_REGISTRY[name](recorder)
    assert flags_read(configs) == recorder.names_read
