"""The CAPS model's own options (`models/CAPS.py`; the attention's are `layers/caps/options.py`): each choice
list, default and help line once. This file imports no torch: run.py's parser builds the flags from it without
importing the model.
"""

from __future__ import annotations

from layers.caps.options import CAPSOption

DIRECTION_CHOICES = ("auto", "causal", "bidirectional")
# Time-mark normalisation (`normalise_marks`); auto follows --caps_numerics (paper: window, official: official).
MARK_NORM_CHOICES = ("auto", "window", "official", "shift", "raw", "floored")
# Survivor rescale of the random-ratio channel dropout (`random_ratio_channel_dropout`); auto follows --caps_numerics.
DROPOUT_RESCALE_CHOICES = ("auto", "paper", "official")
# The model's own options (the attention's are CAPS_OPTIONS, beside the layer); run.py's flags come from both.
CAPS_MODEL_OPTIONS: dict[str, CAPSOption] = {
    "caps_checkpoint_rows": CAPSOption(0, None, "CAPS: recompute the blocks in backward over groups of this many "
                                       "channel sequences (activation checkpointing; 0 = off): less memory, more time"),
    "time_emb_dim": CAPSOption(4, None, "CAPS: number of time-feature channels used (0 disables them)"),
    "random_channel_dropout": CAPSOption(1, None, "CAPS: random-ratio channel dropout in training (1 on, 0 off)"),
    "number_of_targets": CAPSOption(0, None, "CAPS: decode only the last k channels; 0 = the last --c_out "
                                    "channels (all with --c_out = --enc_in, the target with --features MS --c_out 1)"),
    "caps_direction": CAPSOption("auto", DIRECTION_CHOICES, "CAPS: causal blocks, or bidirectional (each attention "
                                 "layer averages the causal kernel over the window and over the time-reversed "
                                 "window); auto = causal for forecasting, bidirectional for imputation, anomaly "
                                 "detection and classification"),
    "caps_mark_norm": CAPSOption("auto", MARK_NORM_CHOICES, "CAPS: time marks m over the window, (m - m_L) / s with "
                                 "s = the window std of m (1 below 1e-6; window), std + 1e-8 (official), 1 (shift), "
                                 "max(std, 0.1) (floored), or m as TSLib gives it (raw); auto = --caps_numerics"),
    "caps_dropout_rescale": CAPSOption("auto", DROPOUT_RESCALE_CHOICES, "CAPS: channel-dropout survivors x 1/(1 - r) "
                                       "(paper) or x 1/(kept fraction) (official); auto = --caps_numerics"),
}
