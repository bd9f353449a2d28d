"""The long-term forecasting benchmarks the comparison runs, built from data_provider/registry.py (the one home of
where each file lies, how `run.py` reads it and how many variates it holds); here only what the scripts add: the
table name, the scripts' folder and file names, the horizons and notes."""

from __future__ import annotations

from compare.recipes.recipe_book import Dataset
from data_provider.registry import DATASETS as FILES

__all__ = ["DATASETS", "ILI_HORIZONS", "PEMS_HORIZONS"]

# The official caps.sh loops PEMS horizons in this order; the paper reports 12-96.
PEMS_HORIZONS = (96, 48, 24, 12)
ILI_HORIZONS = (24, 36, 48, 60)


def _benchmark(file: str, folder: str, name: str | None = None, **scripts) -> Dataset:
    """The registry's entry `file` (its --root_path, --data_path, --data and variates) as the table dataset `name`
    (default: the registry's name) whose scripts go to scripts/long_term_forecast/<folder>/."""
    info = FILES[file]
    return Dataset(name or info.name, info.root_dir, info.file_name, info.data_flag, info.variates, fetch=info.name,
                   folder=folder, **scripts)


def _pems(name: str) -> Dataset:
    return _benchmark(name, "PEMS_script", horizons=PEMS_HORIZONS,
                      notes=("PEMS horizons in the official loop order; the paper reports 12-96.",))


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    _benchmark("ETTh1", "ETT_script"),
    _benchmark("ETTh2", "ETT_script"),
    _benchmark("ETTm1", "ETT_script"),
    _benchmark("ETTm2", "ETT_script"),
    _benchmark("weather", "Weather_script", "Weather", tslib_id="weather", tslib_file="{model}.sh"),
    # The official iTransformer and TimeMixer scripts label Solar runs solar_96_<H>.
    _benchmark("Solar", "Solar_script", tslib_id="solar"),
    _benchmark("electricity", "ECL_script", "ECL", tslib_file="{model}.sh"),
    _pems("PEMS03"),
    _pems("PEMS04"),
    _pems("PEMS08"),
    _benchmark("traffic", "Traffic_script", "Traffic", tslib_id="traffic", tslib_file="{model}.sh"),
    _benchmark("exchange_rate", "Exchange_script", "Exchange", tslib_file="{model}.sh"),
    # TSLib's ILI scripts read 36 weeks and forecast 24-60 (model_id ili_36_<H>).
    _benchmark("illness", "ILI_script", "ILI", tslib_id="ili", tslib_file="{model}.sh", horizons=ILI_HORIZONS),
)}
