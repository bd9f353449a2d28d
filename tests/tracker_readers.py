"""Read tracked runs back through each tracker's own reader (no mocks): TensorBoard's EventAccumulator, MLflow's
MlflowClient, and W&B's own reader of its offline `.wandb` run files (`wandb.sdk.internal.datastore`, the
LevelDB-log reader `wandb sync` used, with W&B's `Record` protobuf).

Each returns {run name: Tracked}: curves as {key: [(x, value), ...]} in logging order, the summary
(`final/...`), the configuration as the tracker holds it, the group, and image names."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Tracked:
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    group: str = ""
    images: list[str] = field(default_factory=list)
    status: str = ""


def tensorboard_runs(root: Path) -> dict[str, Tracked]:
    """Every run folder under `<root>/tensorboard/<group>/<run>/`."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    runs = {}
    for folder in sorted(p for p in (root / "tensorboard").glob("*/*") if p.is_dir()):
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "images": 0, "tensors": 0})
        acc.Reload()
        tracked = Tracked(group=folder.parent.name, images=sorted(acc.Tags()["images"]))
        for tag in acc.Tags()["scalars"]:
            points = [(event.step, event.value) for event in acc.Scalars(tag)]
            if tag.startswith("final/"):
                tracked.summary[tag] = points[-1][1]
            else:
                tracked.curves[tag] = points
        text = acc.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
        rows = [line.split(" | ") for line in text.splitlines()[2:]]
        tracked.config = {row[0].strip("| "): row[1].strip("| ") for row in rows}
        tracked.status = acc.Tensors("status/text_summary")[0].tensor_proto.string_val[0].decode()
        runs[folder.name] = tracked
    return runs


def mlflow_runs(root: Path) -> dict[str, Tracked]:
    """Every run of every experiment in `<root>/mlflow/mlflow.db`."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{(root / 'mlflow' / 'mlflow.db').resolve()}")
    runs = {}
    for experiment in client.search_experiments():
        for run in client.search_runs([experiment.experiment_id]):
            tracked = Tracked(group=experiment.name, config=dict(run.data.params), status=run.info.status)
            for key in run.data.metrics:
                history = sorted(client.get_metric_history(run.info.run_id, key), key=lambda m: (m.timestamp, m.step))
                points = [(m.step, m.value) for m in history]
                if key.startswith("final/"):
                    tracked.summary[key] = points[-1][1]
                else:
                    tracked.curves[key] = points
            tracked.images = sorted(a.path for a in _artifacts(client, run.info.run_id))
            runs[run.info.run_name] = tracked
    return runs


def _artifacts(client, run_id: str, path: str | None = None) -> list:
    found = []
    for item in client.list_artifacts(run_id, path):
        found += _artifacts(client, run_id, item.path) if item.is_dir else [item]
    return found


def wandb_runs(root: Path) -> dict[str, Tracked]:
    """Every offline run under `<root>/wandb/wandb/offline-run-*/run-*.wandb`."""
    from wandb.proto import wandb_internal_pb2
    from wandb.sdk.internal import datastore

    runs = {}
    for path in sorted((root / "wandb" / "wandb").glob("offline-run-*/run-*.wandb")):
        store = datastore.DataStore()
        store.open_for_scan(str(path))
        tracked, name = Tracked(), None
        while (data := store.scan_data()) is not None:
            record = wandb_internal_pb2.Record()
            record.ParseFromString(data)
            kind = record.WhichOneof("record_type")
            if kind == "run":
                name, tracked.group = record.run.display_name, record.run.run_group
                tracked.config = {item.key: json.loads(item.value_json) for item in record.run.config.update}
            elif kind == "history":
                row = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
                for axis in ("batch", "epoch"):
                    if axis in row:
                        for key, value in row.items():
                            if key.startswith(f"{axis}/"):
                                tracked.curves.setdefault(key, []).append((row[axis], value))
                # An image is logged as nested keys: <name>/_type = "image-file", <name>/path, ...
                tracked.images += [key.removesuffix("/_type") for key, value in row.items()
                                   if key.endswith("/_type") and value == "image-file"]
            elif kind == "summary":
                for item in record.summary.update:
                    key = item.key or "/".join(item.nested_key)
                    if key.startswith("final/"):
                        tracked.summary[key] = json.loads(item.value_json)
            elif kind == "exit":
                tracked.status = "finished" if record.exit.exit_code == 0 else "failed"
        runs[name] = tracked
    return runs
