"""Data side of CAPS-TSLib: benchmark files (registry, fetch), window datasets and loaders.

`data_factory.data_provider(args, flag)` is the entry point the experiment uses; `python -m
data_provider.fetch NAME` puts files under ``./dataset/``. Submodules are not imported here so the
fetch command starts without importing torch.
"""
