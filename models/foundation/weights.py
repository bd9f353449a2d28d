"""Where a zero-shot foundation model's weights come from, and its package, both checked before anything runs.

Weights come from a local folder (`--pretrained_path DIR`) or from the Hugging Face hub cache
(`HF_HUB_CACHE`, default `~/.cache/huggingface/hub`), read offline: nothing is ever downloaded. Each
problem is one `UserInputError` line naming the model, what is missing and the fix.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from utils.errors import UserInputError

#: the optional extra that installs every foundation-model package (pyproject.toml, requirements-zero-shot.txt)
EXTRA_HINT = "pip install -r requirements-zero-shot.txt"


def import_package(model: str, module: str, pip_name: str) -> ModuleType:
    """Import `module` (the package of foundation model `model`) on first use; one line when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise UserInputError(
            f"--model {model} needs the package {pip_name} (import {module} failed: {err}); install it with "
            f"`pip install {pip_name}` or `{EXTRA_HINT}`") from None


def resolve_weights(model: str, pretrained_path: str | None, repo_id: str, required: tuple[str, ...]) -> Path:
    """The folder holding `model`'s weights: `pretrained_path` when given, else the cached snapshot of `repo_id`.

    required: file names that must be in the folder (e.g. ``("config.json",)``). Raises a one-line
    UserInputError when the folder or a file is missing; never touches the network.
    """
    if pretrained_path:
        folder = Path(pretrained_path).expanduser()
        if not folder.is_dir():
            raise UserInputError(f"--pretrained_path {pretrained_path} is not a folder: point it at the folder holding "
                                 f"{model}'s weights ({', '.join(required)})")
    else:
        folder = _cached_snapshot(model, repo_id)
    missing = [name for name in required if not (folder / name).is_file()]
    if missing:
        raise UserInputError(f"--model {model}: {folder} lacks {', '.join(missing)}; pass --pretrained_path with the "
                             f"folder of a full copy of {repo_id}")
    return folder


def _cached_snapshot(model: str, repo_id: str) -> Path:
    """The hub cache's snapshot of `repo_id`, looked up offline; one line when it is not cached."""
    hub = import_package(model, "huggingface_hub", "huggingface_hub")
    constants = import_package(model, "huggingface_hub.constants", "huggingface_hub")
    try:
        return Path(hub.snapshot_download(repo_id, local_files_only=True))
    except OSError:  # LocalEntryNotFoundError is an OSError: the snapshot is not cached
        raise UserInputError(
            f"--model {model}: no weights for {repo_id} in the Hugging Face cache ({constants.HF_HUB_CACHE}) and "
            f"no --pretrained_path; on a machine with hub access run `hf download {repo_id} --local-dir DIR`, copy "
            "DIR here and pass --pretrained_path DIR") from None
