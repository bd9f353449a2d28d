"""Tiny randomly initialised foundation models saved as their packages' release folders (config + weights), so
the tests load them through the same code as real weights. Each builder needs its package (tests skip without)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def tiny_fracast(folder: Path) -> Path:
    """Fracast-0's architecture at width 8, context 64, 3 dilation stages: config.json + model.safetensors."""
    from fracast._core.model import build_from_cfg
    from fracast.inference import _PACKAGE_WEIGHTS_DIR
    from safetensors.torch import save_file

    cfg = json.loads((_PACKAGE_WEIGHTS_DIR / "config.json").read_text())
    cfg["model"].update(d_model=8, W=64, level_widths=[64], n_stages=3, head_d_ff=16)
    core, head = build_from_cfg(cfg)
    state = {f"core.{k}": v.contiguous() for k, v in core.state_dict().items()}
    state.update({f"head.{k}": v.contiguous() for k, v in head.state_dict().items()})
    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def tiny_chronos_bolt(folder: Path) -> Path:
    """A one-layer Chronos-Bolt (T5, width 16, context 64, native horizon 16) saved by transformers."""
    from chronos.chronos_bolt import ChronosBoltModelForForecasting
    from transformers import T5Config

    config = T5Config(d_model=16, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2, d_kv=8, vocab_size=2,
                      decoder_start_token_id=0, pad_token_id=0, is_encoder_decoder=True,
                      chronos_config=dict(context_length=64, prediction_length=16, input_patch_size=8,
                                          input_patch_stride=8, quantiles=QUANTILES, use_reg_token=True),
                      chronos_pipeline_class="ChronosBoltPipeline", architectures=["ChronosBoltModelForForecasting"])
    ChronosBoltModelForForecasting(config).save_pretrained(folder)
    return folder


def tiny_chronos2(folder: Path) -> Path:
    """A one-layer Chronos-2 (width 16, context 64, patches of 8) saved by transformers."""
    from chronos.chronos2.config import Chronos2CoreConfig
    from chronos.chronos2.model import Chronos2Model

    config = Chronos2CoreConfig(d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                                chronos_config=dict(context_length=64, output_patch_size=8, input_patch_size=8,
                                                    input_patch_stride=8, quantiles=QUANTILES, use_reg_token=True,
                                                    max_output_patches=2),
                                chronos_pipeline_class="Chronos2Pipeline", architectures=["Chronos2Model"])
    Chronos2Model(config).save_pretrained(folder)
    return folder


def tiny_timesfm_definition():
    """TimesFM 2.5's definition at width 16 and one layer (patch lengths and quantile heads kept)."""
    from timesfm.timesfm_2p5.timesfm_2p5_torch import TimesFM_2p5_200M_torch_module

    base = TimesFM_2p5_200M_torch_module.config
    width = 16
    layer = dataclasses.replace(base.stacked_transformers.transformer, model_dims=width, hidden_dims=width, num_heads=2)
    return dataclasses.replace(
        base,
        tokenizer=dataclasses.replace(base.tokenizer, hidden_dims=width, output_dims=width),
        stacked_transformers=dataclasses.replace(base.stacked_transformers, num_layers=1, transformer=layer),
        output_projection_point=dataclasses.replace(base.output_projection_point, input_dims=width, hidden_dims=width),
        output_projection_quantiles=dataclasses.replace(base.output_projection_quantiles, input_dims=width,
                                                        hidden_dims=width))


def tiny_timesfm(folder: Path) -> Path:
    """model.safetensors of TimesFM 2.5's module built from the definition currently set on its class (the test
    sets `tiny_timesfm_definition()` there, since the package hard-codes the 200M one)."""
    from safetensors.torch import save_file
    from timesfm.timesfm_2p5.timesfm_2p5_torch import TimesFM_2p5_200M_torch_module

    folder.mkdir(parents=True, exist_ok=True)
    save_file(TimesFM_2p5_200M_torch_module().state_dict(), str(folder / "model.safetensors"))
    return folder


def tiny_tirex(folder: Path) -> Path:
    """A one-block TiRex (sLSTM width 16, patches of 8, training context 64) as a Lightning-style model.ckpt."""
    from tirex.models.tirex import TiRexZero

    hyper = {"model_config": dict(input_patch_size=8, output_patch_size=8, quantiles=QUANTILES,
                                  block_kwargs=dict(num_blocks=1, embedding_dim=16, num_heads=2), input_ff_dim=16),
             "train_ctx_len": 64}
    model = TiRexZero(backend="torch", **hyper)
    # tirex-ts allocates the sLSTM kernels with torch.empty and leaves them for the checkpoint to fill: whatever the
    # allocator hands back (NaN on a busy heap) would be saved. Every parameter gets a seeded draw instead.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.1 * torch.randn_like(parameter))
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"hyper_parameters": hyper, "state_dict": model.state_dict()}, folder / "model.ckpt")
    return folder
