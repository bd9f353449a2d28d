"""Small UEA `.ts` files written in the archive's published format, and the folder of the real ones sktime
ships (JapaneseVowels, BasicMotions)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def sktime_data_folder(name: str) -> Path:
    """`<sktime>/datasets/data/<name>/` holding `<name>_TRAIN.ts` and `<name>_TEST.ts`."""
    import sktime

    return Path(os.path.dirname(sktime.__file__)) / "datasets" / "data" / name


def _fmt(value: float) -> str:
    return "?" if np.isnan(value) else repr(float(value))


def write_ts(path: Path, samples: list[np.ndarray], labels: list[str], classes: list[str], name: str = "Toy") -> Path:
    """One `.ts` file: `samples` are `[T_i, C]` arrays (NaN is written as `?`), one line per sample with the
    dimensions separated by `:` and the label last."""
    equal = len({len(s) for s in samples}) == 1
    missing = any(np.isnan(s).any() for s in samples)
    header = [
        f"@problemName {name}", "@timeStamps false", f"@missing {str(missing).lower()}", "@univariate false",
        f"@dimensions {samples[0].shape[1]}", f"@equalLength {str(equal).lower()}",
        f"@classLabel true {' '.join(classes)}", "@data",
    ]
    lines = [":".join(",".join(_fmt(v) for v in s[:, c]) for c in range(s.shape[1])) + f":{label}"
             for s, label in zip(samples, labels, strict=True)]
    path.write_text("\n".join(header + lines) + "\n")
    return path


def toy_dataset(folder: Path, name: str = "Toy", n_train: int = 24, n_test: int = 12, channels: int = 3,
                seed: int = 0) -> tuple[list[np.ndarray], list[str], list[np.ndarray], list[str]]:
    """`<name>_TRAIN.ts` / `<name>_TEST.ts` in `folder`: variable lengths 10..20, three classes whose
    series are sines of different frequencies. Returns (train samples, labels, test samples, labels)."""
    rng = np.random.default_rng(seed)
    classes = ["a", "b", "c"]

    def make(n: int) -> tuple[list[np.ndarray], list[str]]:
        samples, labels = [], []
        for i in range(n):
            k = i % 3
            t = np.arange(rng.integers(10, 21))[:, None]
            samples.append(np.sin(t * (0.3 + 0.6 * k) + np.arange(channels)) + 0.1 * rng.normal(size=(len(t), channels)))
            labels.append(classes[k])
        return samples, labels

    train, train_labels = make(n_train)
    test, test_labels = make(n_test)
    folder.mkdir(parents=True, exist_ok=True)
    write_ts(folder / f"{name}_TRAIN.ts", train, train_labels, classes, name)
    write_ts(folder / f"{name}_TEST.ts", test, test_labels, classes, name)
    return train, train_labels, test, test_labels
