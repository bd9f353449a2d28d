"""The long-term forecasting benchmarks: where each file lies, how `run.py` reads it, its horizons and
where its scripts go."""

from __future__ import annotations

from compare.recipes.recipe_book import Dataset

__all__ = ["DATASETS", "ILI_HORIZONS", "PEMS_HORIZONS"]

# The official caps.sh loops PEMS horizons in this order; the paper reports 12-96.
PEMS_HORIZONS = (96, 48, 24, 12)
ILI_HORIZONS = (24, 36, 48, 60)


def _ett(name: str) -> Dataset:
    return Dataset(name, "./dataset/ETT-small/", f"{name}.csv", name, 7, fetch=name, folder="ETT_script")


def _pems(name: str, channels: int) -> Dataset:
    return Dataset(name, "./dataset/PEMS/", f"{name}.npz", "PEMS", channels, fetch=name, folder="PEMS_script",
                   horizons=PEMS_HORIZONS,
                   notes=("PEMS horizons in the official loop order; the paper reports 12-96.",))


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    _ett("ETTh1"),
    _ett("ETTh2"),
    _ett("ETTm1"),
    _ett("ETTm2"),
    Dataset("Weather", "./dataset/weather/", "weather.csv", "custom", 21, fetch="weather", folder="Weather_script",
            tslib_id="weather", tslib_file="{model}.sh"),
    # The official iTransformer and TimeMixer scripts label Solar runs solar_96_<H>.
    Dataset("Solar", "./dataset/Solar/", "solar_AL.txt", "Solar", 137, fetch="Solar", folder="Solar_script",
            tslib_id="solar"),
    Dataset("ECL", "./dataset/electricity/", "electricity.csv", "custom", 321, fetch="electricity",
            folder="ECL_script", tslib_file="{model}.sh"),
    _pems("PEMS03", 358),
    _pems("PEMS04", 307),
    _pems("PEMS08", 170),
    Dataset("Traffic", "./dataset/traffic/", "traffic.csv", "custom", 862, fetch="traffic", folder="Traffic_script",
            tslib_id="traffic", tslib_file="{model}.sh"),
    Dataset("Exchange", "./dataset/exchange_rate/", "exchange_rate.csv", "custom", 8, fetch="exchange_rate",
            folder="Exchange_script", tslib_file="{model}.sh"),
    # TSLib's ILI scripts read 36 weeks and forecast 24-60 (model_id ili_36_<H>).
    Dataset("ILI", "./dataset/illness/", "national_illness.csv", "custom", 7, fetch="illness", folder="ILI_script",
            tslib_id="ili", tslib_file="{model}.sh", horizons=ILI_HORIZONS),
)}
