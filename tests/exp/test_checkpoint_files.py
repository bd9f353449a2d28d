"""Issue 49 §7: any unreadable checkpoint file (random bytes, a truncated real checkpoint, an empty file) is
one UserInputError naming the file and the fix; never an IndexError or KeyError from inside torch.load."""

from __future__ import annotations

import io
import random

import pytest
import torch
import torch.nn as nn

from exp.checkpointing import load_checkpoint
from utils.errors import UserInputError

RANDOM_FILES = 300


def assert_one_line_error(path) -> None:
    with pytest.raises(UserInputError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"checkpoint {path} is truncated or corrupt (")
    assert message.endswith("delete it and train again (without --resume when it is last.pth)")


def test_random_bytes_are_a_one_line_error(tmp_path):
    rng = random.Random(49)
    path = tmp_path / "last.pth"
    for _ in range(RANDOM_FILES):
        path.write_bytes(rng.randbytes(rng.randint(0, 4096)))
        assert_one_line_error(path)


def test_truncated_real_checkpoints_are_a_one_line_error(tmp_path):
    buffer = io.BytesIO()
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8))
    torch.save({"format": 2, "model": model.state_dict(), "progress": {"epoch": 1}}, buffer)
    data = buffer.getvalue()
    path = tmp_path / "checkpoint.pth"
    for end in sorted({0, 1, 2, 4, 30, len(data) // 2, len(data) - 22, len(data) - 1,
                       *random.Random(7).sample(range(len(data)), 40)}):
        path.write_bytes(data[:end])
        assert_one_line_error(path)
    path.write_bytes(data)
    assert torch.equal(load_checkpoint(path)["model"]["0.weight"], model.state_dict()["0.weight"])
