"""Anomaly detection with a trained reconstruction model: per-row scores of a new table and the labels of the
threshold chosen when the model was tested (saved in its card).

The table is cut into windows of seq_len rows (back to back, the last one ending at the last row, as the test's
non-overlapping `thre` windows), scaled with the training series' scaler, and reconstructed by the experiment's
own step (`ReconstructionStep`); each row's score is the experiment's energy

    score_t = mean_c (x_tc − x̂_tc)²        (standardised units)      anomaly_t = score_t > threshold

taken from the first window holding the row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from exp.exp_anomaly_detection import ReconstructionStep
from exp.model_card import recreate_hint
from predict.frames import Table, as_table
from predict.trained import TrainedModel, covering_windows
from utils.errors import UserInputError

__all__ = ["Detector"]


class Detector(TrainedModel):
    """`detect(frame)` of an anomaly-detection checkpoint."""

    method = "detect"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.step = ReconstructionStep(self.model, self.args, self.device)

    @property
    def threshold(self) -> float:
        value = self.data.get("threshold")
        if value is None:
            raise UserInputError(f"the model card in {self.folder} holds no anomaly threshold (the run was not "
                                 f"tested); {recreate_hint()}")
        return float(value)

    @torch.no_grad()
    def scores(self, frame: pd.DataFrame | Table) -> np.ndarray:
        """Per-row reconstruction energy `[N]` (float32, standardised units) of the table."""
        table = as_table(frame)
        columns, L = self.data["input_columns"], self.args.seq_len
        table.require_columns(columns, None)
        table.require_rows(L, f"the model reconstructs windows of --seq_len {L} rows")
        values = table.numbers(columns, 0, len(table.frame))
        x = self._scale(values, self.data["scaler"]["mean"], self.data["scaler"]["scale"])
        starts = covering_windows(len(x), L)
        energy = np.full(len(x), np.nan, dtype=np.float32)
        batch = max(1, self.args.batch_size)
        for chunk in range(0, len(starts), batch):
            group = starts[chunk:chunk + batch]
            windows = torch.from_numpy(np.stack([x[s:s + L] for s in group]))
            out, seen = self.step.predict((windows, None))
            window_energy = torch.mean((seen - out.float()) ** 2, dim=-1).cpu().numpy()  # [B, L]
            for s, window in zip(group, window_energy, strict=True):
                rows = np.isnan(energy[s:s + L])
                energy[s:s + L][rows] = window[rows]
        return self._finite(energy, "anomaly scores", table.name)

    def detect(self, frame: pd.DataFrame | Table) -> pd.DataFrame:
        """One row per input row: `row` (position), `score` and `anomaly` (1 where score > the card's threshold)."""
        threshold = self.threshold
        energy = self.scores(frame)
        return pd.DataFrame({"row": np.arange(len(energy)), "score": energy.astype(np.float64),
                             "anomaly": (energy > threshold).astype(np.int64)})
