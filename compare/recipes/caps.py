"""The CAPS recipe (the paper and the official caps.sh) and its variants: each a named flag set over it
(the paper's ablations, the hazards of issue 19, the official code's arithmetic and loop)."""

from __future__ import annotations

from compare.recipes.recipe_book import PER_DATASET, Flags, ModelRecipe, Variant

__all__ = ["CAPS", "CAPS_DATASETS", "CAPS_SETTINGS", "TABLE2", "TABLE3", "VARIANTS"]

# CAPS per dataset, as the official caps.sh:
#   dataset: (batch_size, grad_accum, random_channel_dropout, weight_decay)
CAPS_SETTINGS: dict[str, tuple[int, int, int, float]] = {
    "ETTh1":   (32,  1, 1, 0.1),
    "ETTh2":   (32,  1, 1, 0.1),
    "ETTm1":   (32,  1, 1, 0),
    "ETTm2":   (32,  1, 1, 0),
    "Weather": (32,  1, 1, 0.1),
    "Solar":   (8,   4, 0, 0),
    "ECL":     (2,  16, 0, 0),
    "PEMS03":  (8,   4, 0, 0),
    "PEMS04":  (8,   4, 0, 0),
    "PEMS08":  (8,   4, 0, 0),
}

CAPS = ModelRecipe(
    "CAPS",
    {
        "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}",
        "data_path": "{data_path}", "model_id": "{model_id}", "model": "{model}", "data": "{data}",
        "features": "M", "seq_len": 96, "label_len": 0, "pred_len": "{pred_len}", "enc_in": "{channels}",
        "dec_in": "{channels}", "c_out": "{channels}", "d_model": 0, "n_heads": 4, "e_layers": 3, "dropout": 0,
        "time_emb_dim": 4, "random_channel_dropout": PER_DATASET, "batch_size": PER_DATASET,
        "grad_accum": PER_DATASET, "learning_rate": 0.0005, "optimizer": "adamw", "weight_decay": PER_DATASET,
        "lradj": "onecycle", "pct_start": 0, "max_grad_norm": 1, "train_epochs": 100, "patience": 12,
        "use_amp": None, "amp_dtype": "bf16", "seed": 2026, "des": "Exp", "itr": 1,
    },
    {name: {"random_channel_dropout": dropout, "batch_size": batch, "grad_accum": accum, "weight_decay": decay}
     for name, (batch, accum, dropout, decay) in CAPS_SETTINGS.items()},
    comments=(
        "CAPS recipe (the paper and the official caps.sh): AdamW, OneCycle",
        "stepped per optimiser step with no warm-up (pct_start {pct_start}) and no momentum cycling, {amp_dtype} "
        "autocast on",
        "CUDA (ignored on CPU), gradient clipping at norm {max_grad_norm} after unscaling, correct gradient "
        "accumulation",
        "(the effective batch is batch_size x grad_accum), {train_epochs} epochs, patience {patience}, seed {seed}.",
        "Widths follow the official rule (--d_model {d_model}); --time_emb_dim {time_emb_dim} uses the 4 hourly "
        "time features.",
    ),
    summary="{name}: batch {batch_size} x accumulation {grad_accum}, channel dropout {random_channel_dropout}, "
            "weight decay {weight_decay}, lr {learning_rate}.",
    tslib_names=False,
    fetch=True,
    variant_slot="random_channel_dropout",
)

TABLE2 = ("Weather", "Solar", "ECL", "ETTh1", "ETTh2", "ETTm1", "ETTm2")  # the paper's attention ablation
TABLE3 = ("Weather", "ETTh1", "ETTh2", "ETTm1", "ETTm2")  # the paper's path ablation
_SOFTMAX: Flags = {"caps_attn": "softmax", "caps_impl": "naive"}

CAPS_DATASETS = tuple(CAPS_SETTINGS)

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("LinAttn+RoPE", "CAPS", {"caps_paths": "none", "learning_rate": 0.0006}, "_LinAttnRoPE",
            ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04", "PEMS08"),
            "LinAttn_RoPE.sh",
            ("LinAttn+RoPE baseline (Tables 1-2): plain causal linear attention q.k with RoPE, no paths;",
             "lr {learning_rate} as the official caps_baseline.sh.")),
    # The cited linear attention (issue 19 hazards): phi = elu + 1 and the normaliser, RoPE on the numerator.
    Variant("LinAttn+RoPE (normalised)", "CAPS", {"caps_paths": "none", "caps_attn": "normalised",
                                                 "learning_rate": 0.0006}, "_LinAttnRoPENorm",
            ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04", "PEMS08"),
            "LinAttn_RoPE_normalised.sh",
            ("LinAttn+RoPE as Katharopoulos et al.'s linear attention, which the paper cites: phi(x) = elu(x) + 1",
             "features and the causal normaliser, RoPE on the numerator (layers/CAPS_Attention.md, Hazards);",
             "lr {learning_rate} as the LinAttn+RoPE row.")),
    Variant("Attn+RoPE", "CAPS", {**_SOFTMAX, "caps_paths": "none"}, "_AttnRoPE", TABLE2, "Attn_RoPE.sh",
            ("Attn+RoPE (Table 2): causal softmax attention with RoPE, no paths (quadratic: --caps_impl {caps_impl}).",)),
    Variant("Pure Softmax", "CAPS", {**_SOFTMAX, "caps_paths": "none", "caps_rope": "none"}, "_PureSoftmax", TABLE2,
            "Pure_Softmax.sh",
            ("Pure Softmax (Table 2): causal softmax attention, no RoPE, no paths (quadratic: --caps_impl {caps_impl}).",)),
    Variant("CAPS (Softmax)", "CAPS", {**_SOFTMAX, "caps_paths": "123"}, "_CAPSSoftmax", TABLE2, "CAPS_Softmax.sh",
            ("CAPS (Softmax) (Table 2): the three-path scores inside a causal softmax (quadratic: --caps_impl {caps_impl}).",)),
    Variant("CAPS w/o Path1", "CAPS", {"caps_paths": "23"}, "_woPath1", TABLE3, "CAPS_wo_Path1.sh",
            ("CAPS w/o Path 1, Riemann softmax (Table 3).",)),
    Variant("CAPS w/o Path2", "CAPS", {"caps_paths": "13"}, "_woPath2", TABLE3, "CAPS_wo_Path2.sh",
            ("CAPS w/o Path 2, prefix product (Table 3).",)),
    Variant("CAPS w/o Path3", "CAPS", {"caps_paths": "12"}, "_woPath3", TABLE3, "CAPS_wo_Path3.sh",
            ("CAPS w/o Path 3, Clock baseline (Table 3).",)),
    # The time-mark hazard (issue 19): TSLib's timeF marks as given instead of the per-window normalisation.
    Variant("CAPS (raw marks)", "CAPS", {"caps_mark_norm": "raw"}, "_RawMarks", CAPS_DATASETS, "CAPS_raw_marks.sh",
            ("CAPS with --caps_mark_norm {caps_mark_norm}: the time marks as TSLib gives them (within [-0.5, 0.5])",
             "instead of normalised per window, where near-constant marks reach 1e3 (layers/CAPS_Attention.md).")),
    # The official code's arithmetic, then its arithmetic and its training loop (issue: where the paper's
    # numbers come from): CAPS, CAPS (official numerics) and CAPS (official) separate the two.
    Variant("CAPS (official numerics)", "CAPS", {"caps_numerics": "official"}, "_OfficialNumerics", CAPS_DATASETS,
            "CAPS_official_numerics.sh",
            ("CAPS with the official code's arithmetic (--caps_numerics {caps_numerics}; README, CAPS) and our loop.",)),
    Variant("CAPS (official)", "CAPS", {"train_loop": "official", "caps_numerics": "official"}, "_Official",
            CAPS_DATASETS, "CAPS_official.sh",
            ("CAPS as the official code trains it: --caps_numerics {caps_numerics} and --train_loop {train_loop}",
             "(docs/tslib_differences.md): AdamW, OneCycle stepped per micro-batch with its default momentum",
             "cycling (beta1 0.85-0.95), clipping at norm {max_grad_norm} before AMP unscaling, a GradScaler under",
             "{amp_dtype} autocast (CUDA), only the last micro-batch of each accumulation group applied;",
             "{train_epochs} epochs, patience {patience}, seed {seed}, lr {learning_rate}."),
            base_comments=False),
)}
