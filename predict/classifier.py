"""Classification with a trained classifier: the labels of new samples (a `.ts` file in the UEA format, with or
without class labels, or a list of `[T_i, C]` arrays).

Each sample is read as the training loader reads it (data_provider/uea.py: unequal dimensions subsampled,
missing values interpolated), standardised with the TRAIN statistics of the card (`normalise_sample`), padded to
the training --seq_len with its padding mask (`pad_batch`) and classified by the experiment's own step
(`ClassificationStep`): label = class_names[argmax logits], probabilities = softmax(logits).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from data_provider.uea import check_sample, interpolate_missing, normalise_sample, pad_batch, read_ts_samples
from exp.exp_classification import ClassificationStep
from predict.forecaster import Scored
from predict.trained import TrainedModel
from utils.classification_metrics import cal_accuracy
from utils.errors import UserInputError

__all__ = ["Classifier"]


class Classifier(TrainedModel):
    """`classify(path or samples)` of a classification checkpoint."""

    method = "classify"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.step = ClassificationStep(self.model, self.args, self.device)
        self.class_names = list(self.data["class_names"])

    def _samples(self, source: str | os.PathLike | list[np.ndarray]) -> tuple[list[np.ndarray], list[str] | None, str]:
        if isinstance(source, (str, os.PathLike)):
            path = Path(source)
            if not path.is_file():
                raise UserInputError(f"input file {path} not found")
            samples, labels = read_ts_samples(path)
            return samples, labels, str(path)
        samples = []
        for index, sample in enumerate(source):
            array = np.asarray(sample, dtype=np.float64)
            if array.ndim != 2:
                raise UserInputError(f"sample {index} has shape {array.shape}; each sample is [steps, dimensions]")
            array = np.stack([interpolate_missing(array[:, c]) for c in range(array.shape[1])], axis=1)
            check_sample(array, Path("the samples"), index)
            samples.append(array)
        return samples, None, "the samples"

    def _check(self, samples: list[np.ndarray], name: str) -> None:
        data, max_len = self.data, self.args.seq_len
        if not samples:
            raise UserInputError(f"{name} holds no samples")
        for index, sample in enumerate(samples):
            if sample.shape[1] != data["n_channels"]:
                raise UserInputError(f"{name}: sample {index} (from 0) has {sample.shape[1]} dimensions; the model "
                                     f"was trained on {data['n_channels']}")
            if len(sample) > max_len:
                raise UserInputError(f"{name}: sample {index} (from 0) has {len(sample)} steps; the model reads at "
                                     f"most {max_len} (the longest training series): shorten it")

    @torch.no_grad()
    def classify(self, source: str | os.PathLike | list[np.ndarray]) -> Scored:
        """One row per sample: `sample` (position), `label` (predicted class), `prob_<class>` for every class, and
        `true_label` when the file holds labels; metrics then hold the accuracy."""
        samples, labels, name = self._samples(source)
        self._check(samples, name)
        data = self.data
        mean, std = np.asarray(data["feature_mean"]), np.asarray(data["feature_std"])
        series = [torch.from_numpy(normalise_sample(s, mean, std, data["per_sample_norm"])).float() for s in samples]
        probs = []
        batch = max(1, self.args.batch_size)
        for chunk in range(0, len(series), batch):
            x, padding = pad_batch(series[chunk:chunk + batch], self.args.seq_len)
            labels_unused = torch.zeros(len(x), 1, dtype=torch.long)
            logits, _ = self.step.predict((x, labels_unused, padding))
            probs.append(torch.softmax(logits.float(), dim=1).cpu().numpy())
        prob = self._finite(np.concatenate(probs), "class probabilities", name)  # [N, K]
        predicted = [self.class_names[i] for i in prob.argmax(axis=1)]
        frame = pd.DataFrame({"sample": np.arange(len(prob)), "label": predicted,
                              **{f"prob_{c}": prob[:, k] for k, c in enumerate(self.class_names)}})
        if labels is None:
            return Scored(frame, None)
        frame["true_label"] = labels
        correct = cal_accuracy(np.asarray(predicted, dtype=object), np.asarray(labels, dtype=object))
        return Scored(frame, {"accuracy": correct, "samples": len(labels)})
