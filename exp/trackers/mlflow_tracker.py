"""MLflow: a local SQLite store, `<logger_dir>/mlflow/mlflow.db`, with artifacts beside it in
`<logger_dir>/mlflow/artifacts/`; one experiment per group, one MLflow run per run. `mlflow ui
--backend-store-uri sqlite:///<logger_dir>/mlflow/mlflow.db` browses it. (MLflow's file store is in
maintenance mode and refuses to start by default, hence SQLite.)

Per-batch values are buffered and written with `log_batch` (one SQLite transaction per `FLUSH_EVERY` values,
and at every epoch end), since one transaction per value costs ~25 ms.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: MLflow's limits: parameters per log_batch call and characters per parameter value
PARAMS_PER_CALL = 100
PARAM_CHARS = 6000
FLUSH_EVERY = 500
_STATUS = {"finished": "FINISHED", "failed": "FAILED", "killed": "KILLED"}


def quiet_mlflow() -> None:
    """MLflow's INFO lines (creating its tables, ...) stay out of the run's log unless MLFLOW_LOGGING_LEVEL says
    otherwise; read when mlflow is first imported."""
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")


def tracking_uri(root: Path) -> str:
    """The SQLite URI of the store under `root` (the --logger_dir)."""
    return f"sqlite:///{(root / 'mlflow' / 'mlflow.db').resolve()}"


def experiment_id(root: Path, group: str) -> str:
    """The id of experiment `group` in the store under `root`, created (with the store) when missing; its
    artifacts go to `<root>/mlflow/artifacts/<group>/`. Concurrent runs may race to create it: the loser
    reads the winner's."""
    quiet_mlflow()
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    (root / "mlflow").mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=tracking_uri(root))
    found = client.get_experiment_by_name(group)
    if found is not None:
        return found.experiment_id
    artifacts = (root / "mlflow" / "artifacts" / group).resolve().as_uri()
    try:
        return client.create_experiment(group, artifact_location=artifacts)
    except MlflowException:
        found = client.get_experiment_by_name(group)
        if found is None:
            raise
        return found.experiment_id


class MlflowTracker:
    """Parameters = the configuration, metrics per key with their own steps, figures and PDFs as artifacts."""

    def __init__(self, root: Path, group: str, name: str, config: Mapping[str, Any]) -> None:
        quiet_mlflow()
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=tracking_uri(root))
        run = self.client.create_run(experiment_id(root, group), run_name=name, tags={"setting": name})
        self.run_id = run.info.run_id
        params = [Param(key, str(value)[:PARAM_CHARS]) for key, value in sorted(config.items())]
        for start in range(0, len(params), PARAMS_PER_CALL):
            self.client.log_batch(self.run_id, params=params[start : start + PARAMS_PER_CALL])
        self._pending: list = []

    def scalars(self, values: Mapping[str, float], axis: str, x: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self._pending += [Metric(key, value, now, x) for key, value in values.items()]
        if axis == "epoch" or len(self._pending) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        # MLflow takes at most 1000 metrics per call.
        while self._pending:
            self.client.log_batch(self.run_id, metrics=self._pending[:1000])
            self._pending = self._pending[1000:]

    def figure(self, name: str, figure: Any, file: Path | None) -> None:
        self.client.log_figure(self.run_id, figure, f"{name}.png")
        if file is not None:
            self.client.log_artifact(self.run_id, str(file), artifact_path="test_results")

    def summary(self, values: Mapping[str, float]) -> None:
        self.scalars(values, "epoch", 0)

    def close(self, status: str) -> None:
        self._flush()
        self.client.set_terminated(self.run_id, status=_STATUS[status])
