"""Zero-shot foundation models (`--task_name zero_shot_forecast`), imported on first use.

They live apart from `models/*.py` (the trainable models every contract test builds) because they need an
optional package and pretrained weights. TSLib's names are kept; `Fracast` is not in TSLib.
"""

from __future__ import annotations

import importlib

from utils.errors import UserInputError

# --model name -> (module, class)
FOUNDATION_WRAPPERS: dict[str, tuple[str, str]] = {
    "Chronos": ("models.foundation.chronos_model", "ChronosForecaster"),
    "Chronos2": ("models.foundation.chronos_model", "Chronos2Forecaster"),
    "TimesFM": ("models.foundation.timesfm_model", "TimesFMForecaster"),
    "TiRex": ("models.foundation.tirex_model", "TiRexForecaster"),
    "Fracast": ("models.foundation.fracast_model", "FracastForecaster"),
}
# TSLib's foundation models that are not wrapped here, and why.
NOT_WRAPPED: dict[str, str] = {
    "Moirai": "its package uni2ts (with gluonts, lightning, hydra, jax) is not wrapped yet",
    "Sundial": "TSLib runs the model code stored in its hub repository (transformers' trust_remote_code)",
    "TimeMoE": "TSLib runs the model code stored in its hub repository (transformers' trust_remote_code)",
}
FOUNDATION_NAMES = tuple(FOUNDATION_WRAPPERS)
#: --model name -> the look-back (--seq_len) a comparison row gives it: the whole context its default weights read
#: (Fracast-0 2 048, Chronos-T5 512); for models whose context is longer (Chronos-2, TimesFM 2.5) or unbounded
#: (TiRex), 2 048, the longest of the others, so the rows read the same history where they can.
LOOKBACK: dict[str, int] = {"Chronos": 512, "Chronos2": 2048, "TimesFM": 2048, "TiRex": 2048, "Fracast": 2048}


def foundation_class(name: str) -> type:
    """The wrapper class of zero-shot model `name` (a one-line error for any other name)."""
    if name in NOT_WRAPPED:
        raise UserInputError(f"--model {name} (a TSLib zero-shot model) is not wrapped here: {NOT_WRAPPED[name]}; "
                             f"zero-shot models here: {', '.join(FOUNDATION_NAMES)}")
    if name not in FOUNDATION_WRAPPERS:
        raise UserInputError(f"--model {name!r} is not a zero-shot foundation model; --task_name zero_shot_forecast "
                             f"takes one of {', '.join(FOUNDATION_NAMES)} (trained models: --task_name "
                             "long_term_forecast)")
    module, cls = FOUNDATION_WRAPPERS[name]
    return getattr(importlib.import_module(module), cls)
