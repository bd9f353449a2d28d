"""Where each long-term forecasting benchmark lives under ``./dataset/`` and how to verify it.

Checksums come from ``shared/datasets/SOURCES.md`` / ``SHA256SUMS``: sha256 where known, md5 where
only md5 is published, None otherwise (fetch then verifies the file against a ``SHA256SUMS`` in the
mirror, or refuses it unless told ``--accept-unverified``). `url` is a
public source when one is known; Hugging Face URLs point at TSLib's mirror ``thuml/Time-Series-Library``
and assume its folders match ``./dataset/`` (the sha256 check guards against a wrong file). Datasets
without a URL (PEMS) must be copied from a mirror or placed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from utils.errors import UserInputError

__all__ = [
    "ANOMALY_CSV_DATASETS",
    "ANOMALY_DATASETS",
    "DATASETS",
    "DATASET_GROUPS",
    "TSLIB_DRIVE_URL",
    "AnomalyCSVInfo",
    "AnomalyDatasetInfo",
    "DatasetInfo",
    "PackageSeries",
    "SHORT_TERM_SETS",
    "ShortTermSetInfo",
    "UEA_DATASETS",
    "UEADatasetInfo",
    "anomaly_csv_file",
    "anomaly_files",
    "expand_names",
    "find_by_path",
    "lookup",
]

#: The dataset folder linked from TSLib's README (a Google Drive folder: browser download only).
TSLIB_DRIVE_URL = "https://drive.google.com/drive/folders/13Cg1KYOlzM5C7K8gK8NfC-F3EYxkM3D2"

_HF = "https://huggingface.co/datasets/thuml/Time-Series-Library/resolve/main/"
_ETT_GITHUB = "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/"
_LSTNET_GITHUB = "https://github.com/laiguokun/multivariate-time-series-data/raw/master/"


@dataclass(frozen=True)
class PackageSeries:
    """One series of a file that fetch assembles from an installed package's files (a long CSV, data_provider/
    short_term_files.py): its `series_id` there, the package file ``<package>/<path inside it>`` and that
    file's sha256, and the columns holding its time stamps and its values (copied as text)."""

    series_id: str
    package_file: str
    sha256: str
    time_column: str
    value_column: str


@dataclass(frozen=True)
class DatasetInfo:
    """One benchmark file: `relpath` under the dataset root, the `--data` value that reads it,
    checksums of the final file (`archive_md5` checks a downloaded archive before extraction),
    and its size as rows × columns (columns include `date` where the file has one; for PEMS,
    time steps × sensors of the [T, N, F] array). `package_file`: the file is a copy of one an installed
    Python package ships, ``<package>/<path inside it>`` (fetch copies it from there when no mirror has it);
    `assembled_from`: the file is a long CSV fetch writes from those package files' series."""

    name: str
    relpath: str
    data_flag: str
    rows: int | None
    cols: int | None
    sha256: str | None = None
    md5: str | None = None
    url: str | None = None
    archive_md5: str | None = None
    package_file: str | None = None
    assembled_from: tuple[PackageSeries, ...] = ()

    @property
    def root_dir(self) -> str:
        """The `--root_path` TSLib scripts pass, e.g. ``./dataset/ETT-small/``."""
        return f"./dataset/{PurePosixPath(self.relpath).parent}/"

    @property
    def file_name(self) -> str:
        """The `--data_path` value, e.g. ``ETTh1.csv``."""
        return PurePosixPath(self.relpath).name

    @property
    def variates(self) -> int | None:
        """The series a run reads (`--enc_in`): a CSV's columns less its date column, every column of the other
        files (Solar's text file, PEMS's sensors); None where the width is not registered."""
        if self.cols is None:
            return None
        return self.cols - 1 if self.relpath.endswith(".csv") else self.cols


def _ett(name: str, rows: int, sha256: str, md5: str) -> DatasetInfo:
    relpath = f"ETT-small/{name}.csv"
    return DatasetInfo(name, relpath, name, rows, 8, sha256, md5, _ETT_GITHUB + relpath)


def _pems(number: str, steps: int, nodes: int) -> DatasetInfo:
    return DatasetInfo(f"PEMS{number}", f"PEMS/PEMS{number}.npz", "PEMS", steps, nodes)


#: Where the M4 competition publishes its data (per-group CSVs under Dataset/Train and Dataset/Test).
_M4_GITHUB = "https://github.com/Mcompetitions/M4-methods/raw/master/Dataset/"
#: Series per group and horizon, for the sizes of the per-group CSVs (data_provider/m4.py has the same).
_M4_GROUPS = {"Yearly": (23000, 6), "Quarterly": (24000, 8), "Monthly": (48000, 18), "Weekly": (359, 13),
              "Daily": (4227, 14), "Hourly": (414, 48)}


def _m4(name: str, file: str, rows: int, cols: int | None, url: str | None) -> DatasetInfo:
    """An M4 file under ``m4/`` (rows: series; cols: CSV columns, None where ragged rows set the width).
    No checksum is registered for any of them (none is published), so fetch accepts them only against a
    ``SHA256SUMS`` in the mirror or with ``--accept-unverified``."""
    return DatasetInfo(name, f"m4/{file}", "m4", rows, cols, url=url)


def _m4_files() -> tuple[DatasetInfo, ...]:
    """M4-info.csv (TSLib's Hugging Face mirror), the twelve per-group CSVs (the M4 competition's repository;
    the training ones are as wide as their longest series) and the Naive2 forecasts (published only as a
    .rar of the competition's submissions: placed by hand or copied from a mirror)."""
    groups = [_m4(f"M4-{group}-{split}", f"{group}-{split}.csv", rows, None if split == "train" else horizon + 1,
                  f"{_M4_GITHUB}{split.capitalize()}/{group}-{split}.csv")
              for group, (rows, horizon) in _M4_GROUPS.items() for split in ("train", "test")]
    return (_m4("M4-info", "M4-info.csv", 100000, 6, _HF + "m4/M4-info.csv"), *groups,
            _m4("M4-Naive2", "submission-Naive2.csv", 100000, 49, None))


DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        _ett("ETTh1", 17420, "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066",
             "8381763947c85f4be6ac456c508460d6"),
        _ett("ETTh2", 17420, "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b",
             "51a229a3fc13579dd939364fefe9c7ab"),
        _ett("ETTm1", 69680, "6ce1759b1a18e3328421d5d75fadcb316c449fcd7cec32820c8dafda71986c9e",
             "82d6bd89109c63d075d99c1077b33f38"),
        _ett("ETTm2", 69680, "db973ca252c6410a30d0469b13d696cf919648d0f3fd588c60f03fdbdbadd1fd",
             "7687e47825335860bf58bccb31be0c56"),
        DatasetInfo("weather", "weather/weather.csv", "custom", 52696, 22,
                    "34ee981d07313e51da2a50bb600072c8ae4a69cb4b0651f4cb93a069d7a2ba63",
                    "2e79e5e4c921d3542684c4a34c6748b4", _HF + "weather/weather.csv"),
        DatasetInfo("electricity", "electricity/electricity.csv", "custom", 26304, 322,
                    md5="a1973ba4f4bed84136013ffa1ca27dc8", url=_HF + "electricity/electricity.csv"),
        DatasetInfo("traffic", "traffic/traffic.csv", "custom", 17544, 863, url=_HF + "traffic/traffic.csv"),
        DatasetInfo("exchange_rate", "exchange_rate/exchange_rate.csv", "custom", 7588, 9,
                    url=_HF + "exchange_rate/exchange_rate.csv"),
        DatasetInfo("illness", "illness/national_illness.csv", "custom", 966, 8,
                    url=_HF + "illness/national_illness.csv"),
        DatasetInfo("Solar", "Solar/solar_AL.txt", "Solar", 52560, 137,
                    url=_LSTNET_GITHUB + "solar-energy/solar_AL.txt.gz",
                    archive_md5="41ef7fdc958c2ca3fac9cd06d6227073"),
        _pems("03", 26208, 358),
        _pems("04", 16992, 307),
        _pems("07", 28224, 883),
        _pems("08", 17856, 170),
        *_m4_files(),
        # Labelled series sktime ships (sktime/datasets/data/), in the custom anomaly format (ANOMALY_CSV_DATASETS).
        DatasetInfo("Yahoo", "Yahoo/yahoo.csv", "Yahoo", 1000, 2,
                    "b37cb4846fc442c15bdcc73864034e46a19b9ac062edabf7e158732ae0a3789f",
                    package_file="sktime/datasets/data/yahoo/yahoo.csv"),
        DatasetInfo("MITDB", "MITDB/mitdb.csv", "MITDB", 7500, 2,
                    "d4f2539a5e85e1ac1e7f8bba152b5e60a02356282463a8a1c97848ad3e1bb386",
                    package_file="sktime/datasets/data/mitdb/mitdb.csv"),
        # sktime's monthly univariate series as one long CSV (SHORT_TERM_SETS); rows: 144 + 36 + 192.
        DatasetInfo("sktime_monthly", "sktime_monthly/sktime_monthly.csv", "short_term_csv", 372, 3,
                    "f4fe53cbb602a80eb011f59bcb8771cd71c7cac12e68dbadafd181ec371a16c0", assembled_from=(
                        PackageSeries("Airline", "sktime/datasets/data/Airline/Airline.csv",
                                      "28af0eb869db6d9fbd31d5af03993a0cbf36c0857c3eb046a068c094b60da851",
                                      "Date", "Passengers"),
                        PackageSeries("ShampooSales", "sktime/datasets/data/ShampooSales/ShampooSales.csv",
                                      "dbf2adba68e2f6bae7956ca65771d7dee20cb58b6eb8261c2513d536ac690774",
                                      "Time", "Sales"),
                        PackageSeries("Seatbelts_KSI", "sktime/datasets/data/seatbelts/seatbelts.csv",
                                      "a1cf71093fd69545babe0ded15362835b0f67df3cb75b5f7f98a342a850fb365",
                                      "", "KSI"))),
    )
}

#: Names that stand for several files (`python -m data_provider.fetch m4`).
DATASET_GROUPS: dict[str, tuple[str, ...]] = {"m4": tuple(info.name for info in _m4_files())}

# Names people use for the same files (TSLib scripts say ECL and ILI; Solar-Energy papers say solar).
_ALIASES = {"ecl": "electricity", "ili": "illness", "exchange": "exchange_rate", "solar_al": "Solar"}


def lookup(name: str) -> DatasetInfo:
    """The registry entry for `name` (case-insensitive; aliases ECL, ILI, exchange).

    Raises UserInputError listing the known names.
    """
    by_lower = {key.lower(): key for key in DATASETS}
    key = by_lower.get(name.lower()) or _ALIASES.get(name.lower())
    if key is None:
        raise UserInputError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}, or 'all'")
    return DATASETS[key]


def find_by_path(path: str | Path) -> tuple[DatasetInfo, Path] | None:
    """Match a data file path to a registry entry by its trailing ``<folder>/<file>`` (or the file
    name alone). Returns the entry and the dataset root the path implies, or None when unknown."""
    path = Path(path)
    for info in DATASETS.values():
        relparts = PurePosixPath(info.relpath).parts
        if path.parts[-len(relparts):] == relparts:
            return info, Path(*path.parts[:-len(relparts)]) if len(path.parts) > len(relparts) else Path(".")
    for info in DATASETS.values():
        if path.name == info.file_name:
            return info, Path("dataset")
    return None


@dataclass(frozen=True)
class AnomalyDatasetInfo:
    """One anomaly-detection benchmark of TSLib: the `--data` key, the folder under the dataset root
    (TSLib's scripts pass ``--root_path ./dataset/<folder>``), its files in the published format, and
    the channel count the scripts pass as --enc_in/--c_out."""

    name: str
    folder: str
    files: tuple[str, ...]
    channels: int


#: The anomaly benchmarks (TSLib's Google Drive folder, `TSLIB_DRIVE_URL`; none can be fetched here).
#: Mirror layout (``$TSLIB_DATA_MIRROR`` or ``./dataset``), one folder per benchmark:
#:
#:     PSM/train.csv, PSM/test.csv       first column timestamp_(min), then 25 features (NaN allowed)
#:     PSM/test_label.csv                timestamp_(min), label
#:     MSL/MSL_train.npy, MSL_test.npy   float [T, 55]; MSL_test_label.npy 0/1 [T]
#:     SMAP/SMAP_train.npy, ...          float [T, 25]; SMAP_test_label.npy 0/1 [T]
#:     SMD/SMD_train.npy, ...            float [T, 38]; SMD_test_label.npy 0/1 [T]
#:     SWaT/swat_train2.csv, swat2.csv   51 features then the label as the last column (header row)
ANOMALY_DATASETS: dict[str, AnomalyDatasetInfo] = {
    info.name: info
    for info in (
        AnomalyDatasetInfo("PSM", "PSM", ("train.csv", "test.csv", "test_label.csv"), 25),
        AnomalyDatasetInfo("MSL", "MSL", ("MSL_train.npy", "MSL_test.npy", "MSL_test_label.npy"), 55),
        AnomalyDatasetInfo("SMAP", "SMAP", ("SMAP_train.npy", "SMAP_test.npy", "SMAP_test_label.npy"), 25),
        AnomalyDatasetInfo("SMD", "SMD", ("SMD_train.npy", "SMD_test.npy", "SMD_test_label.npy"), 38),
        AnomalyDatasetInfo("SWAT", "SWaT", ("swat_train2.csv", "swat2.csv"), 51),
    )
}


def anomaly_files(name: str, root_path: str | Path) -> list[Path]:
    """The files of anomaly benchmark `name` under `root_path` (its folder, as --root_path), in the
    order of `AnomalyDatasetInfo.files` (a labelled series of `ANOMALY_CSV_DATASETS`: its one file,
    `anomaly_csv_file`); a one-line UserInputError says where to put or how to fetch missing ones."""
    if name in ANOMALY_CSV_DATASETS:
        return [anomaly_csv_file(name, root_path)]
    info = ANOMALY_DATASETS[name]
    paths = [Path(root_path) / file for file in info.files]
    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise UserInputError(
            f"--data {name}: {', '.join(missing)} not found in --root_path {root_path}; {name} cannot be "
            f"downloaded automatically: copy {', '.join(info.files)} from TSLib's dataset folder "
            f"({TSLIB_DRIVE_URL}, folder {info.folder}/) into ./dataset/{info.folder}/ and pass "
            f"--root_path ./dataset/{info.folder}")
    return paths


class RegisteredFile:
    """Where a set registered in DATASETS (by its `name`) lies under the dataset root."""

    name: str

    @property
    def relpath(self) -> str:
        return DATASETS[self.name].relpath

    @property
    def folder(self) -> str:
        """The folder under the dataset root (``--root_path ./dataset/<folder>``)."""
        return str(PurePosixPath(self.relpath).parent)

    @property
    def file(self) -> str:
        return PurePosixPath(self.relpath).name


@dataclass(frozen=True)
class AnomalyCSVInfo(RegisteredFile):
    """A labelled series registered in the custom anomaly format (`--data <name>`, data_provider/anomaly_csv.py):
    its file under the dataset root (`DATASETS[name].relpath`: fetched by ``python -m data_provider.fetch <name>``),
    the fixed share of rows that trains (the first int(train_ratio · rows)), its channels, rows and anomalous rows."""

    name: str
    train_ratio: float
    channels: int
    rows: int
    anomalies: int


#: Both sets are one univariate series with a `label` column (sktime's copies; every anomaly lies in the test
#: rows of the split): Yahoo, 1000 steps, 7 single-step anomalies (steps 431–846), the first 40% train;
#: MITDB (an ECG record of the MIT-BIH arrhythmia database), 7500 steps, one anomalous segment of 352 steps
#: (6936–7287), the first half trains.
ANOMALY_CSV_DATASETS: dict[str, AnomalyCSVInfo] = {
    info.name: info
    for info in (
        AnomalyCSVInfo("Yahoo", 0.4, 1, 1000, 7),
        AnomalyCSVInfo("MITDB", 0.5, 1, 7500, 352),
    )
}


def anomaly_csv_file(name: str, root_path: str | Path) -> Path:
    """The file of registered set `name` in `root_path` (its folder, as --root_path); one line with the fetch
    command when it is missing."""
    info = ANOMALY_CSV_DATASETS[name]
    path = Path(root_path) / info.file
    if not path.is_file():
        raise UserInputError(f"--data {name}: {info.file} not found in --root_path {root_path}; fetch it with "
                             f"`python -m data_provider.fetch {name} --root ./dataset` and pass --root_path "
                             f"./dataset/{info.folder}")
    return path


@dataclass(frozen=True)
class ShortTermSetInfo(RegisteredFile):
    """A real short-term forecasting set in a custom format (data_provider/short_term_files.py): its file under the
    dataset root (`DATASETS[name].relpath`), the `--data` format, its horizon (--pred_len), seasonality
    (--seasonality) and the length of each series."""

    name: str
    data: str
    horizon: int
    seasonality: int
    lengths: dict[str, int]


#: sktime_monthly: the three monthly series sktime ships that are positive, not intermittent and at least 3 years
#: long: Airline (Box & Jenkins' international airline passengers, 1949–1960), ShampooSales (three years of
#: shampoo sales) and Seatbelts_KSI (UK drivers killed or seriously injured, 1969–1984; `seatbelts.csv`'s KSI).
#: Horizon 12 (one year) and seasonality 12; the last 12 values of each series are its test values.
SHORT_TERM_SETS: dict[str, ShortTermSetInfo] = {
    "sktime_monthly": ShortTermSetInfo("sktime_monthly", "short_term_csv", 12, 12,
                                       {"Airline": 144, "ShampooSales": 36, "Seatbelts_KSI": 192}),
}


def expand_names(names: list[str]) -> list[str]:
    """Replace each group name (case-insensitive, e.g. ``m4``) by the names of its files."""
    return [member for name in names for member in DATASET_GROUPS.get(name.lower(), (name,))]


@dataclass(frozen=True)
class UEADatasetInfo:
    """One UEA classification dataset (`--data UEA`): `<name>/<name>_TRAIN.ts` and `_TEST.ts` under the
    dataset root, sample counts, dimensions, longest series, classes, and the files' sha256 where known
    (None otherwise)."""

    name: str
    n_train: int | None = None
    n_test: int | None = None
    dimensions: int | None = None
    max_len: int | None = None
    classes: int | None = None
    train_sha256: str | None = None
    test_sha256: str | None = None

    @property
    def root_dir(self) -> str:
        """The `--root_path` TSLib scripts pass, e.g. ``./dataset/JapaneseVowels/``."""
        return f"./dataset/{self.name}/"


#: The UEA datasets of TSLib's classification scripts: first the ten its per-model scripts run (TimesNet.sh,
#: DLinear.sh ...), then the other 20 of the 30 MambaSL.sh runs, in its order. Counts and checksums are those of
#: the copies sktime ships (sktime/datasets/data/<name>/, JapaneseVowels and BasicMotions), the only ones at hand.
UEA_DATASETS: dict[str, UEADatasetInfo] = {
    info.name: info
    for info in (
        UEADatasetInfo("EthanolConcentration"),
        UEADatasetInfo("FaceDetection"),
        UEADatasetInfo("Handwriting"),
        UEADatasetInfo("Heartbeat"),
        UEADatasetInfo("JapaneseVowels", 270, 370, 12, 29, 9,
                       "68a430eabd919cc77f40b1f5f3bc0dcafacc1486bca9260785aeb7d262cc78cd",
                       "b3d41d6a0ca3bcad3afb9ca7d4365382aa51341e2e58bae2a574babdda5b9462"),
        UEADatasetInfo("PEMS-SF"),
        UEADatasetInfo("SelfRegulationSCP1"),
        UEADatasetInfo("SelfRegulationSCP2"),
        UEADatasetInfo("SpokenArabicDigits"),
        UEADatasetInfo("UWaveGestureLibrary"),
        UEADatasetInfo("ArticularyWordRecognition"),
        UEADatasetInfo("AtrialFibrillation"),
        UEADatasetInfo("BasicMotions", 40, 40, 6, 100, 4,
                       "8dc43cc6306cb679c888c01e26f91772ac4441a916da43bac8b79734a538b9d6",
                       "79213102bc6fca1a398ad98ce1185dff0208fa3d1465e687f48288946b0ff8dc"),
        UEADatasetInfo("CharacterTrajectories"),
        UEADatasetInfo("Cricket"),
        UEADatasetInfo("DuckDuckGeese"),
        UEADatasetInfo("EigenWorms"),
        UEADatasetInfo("Epilepsy"),
        UEADatasetInfo("ERing"),
        UEADatasetInfo("FingerMovements"),
        UEADatasetInfo("HandMovementDirection"),
        UEADatasetInfo("InsectWingbeat"),
        UEADatasetInfo("Libras"),
        UEADatasetInfo("LSST"),
        UEADatasetInfo("MotorImagery"),
        UEADatasetInfo("NATOPS"),
        UEADatasetInfo("PenDigits"),
        UEADatasetInfo("PhonemeSpectra"),
        UEADatasetInfo("RacketSports"),
        UEADatasetInfo("StandWalkJump"),
    )
}
