"""utils.record_paths: records hold paths relative to the repository, never an absolute path of the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utils.record_paths import absolute_paths, from_record, record_path, relative_record, relative_text

REPO = Path("/work/checkouts/caps")


@pytest.mark.parametrize(
    ("path", "recorded"),
    [("./dataset/ETT-small/", "./dataset/ETT-small/"),
     ("/work/checkouts/caps/dataset/ETT-small/", "dataset/ETT-small/"),
     ("/work/checkouts/caps", "."),
     ("/work/checkouts/shared/datasets", "../shared/datasets"),
     ("/work/shared/datasets/ETT-small/", "../shared/datasets/ETT-small/"),
     ("/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/sktime/datasets/data/JapaneseVowels/",
      "<site-packages>/sktime/datasets/data/JapaneseVowels/"),
     ("/usr/lib/python3/dist-packages/torch/nn/functional.py", "<site-packages>/torch/nn/functional.py"),
     ("/tmp/gpu", "../tmp/gpu")],
    ids=["relative", "inside-with-slash", "the-repository", "sibling", "beside-a-parent", "site-packages",
         "dist-packages", "elsewhere"],
)
def test_record_path(path, recorded):
    assert record_path(path, REPO) == recorded


def test_a_path_through_a_link_to_the_repository_is_inside_it(tmp_path):
    (tmp_path / "real" / "dataset").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert record_path(str(tmp_path / "real" / "dataset"), tmp_path / "link") == "dataset"


def test_absolute_paths_finds_paths_but_not_urls_relative_paths_or_shell_expansions():
    text = ('--root /work/shared/datasets --root_path=/x/y/ "/tmp/gpu", `/opt/a/b.py:12` '
            'https://github.com/thuml/x ../shared/datasets a/b $(python -c x)/datasets/data ${HOME}/a/b '
            '<site-packages>/torch/x.py MSE/MAE 1/2/3 /single')
    assert absolute_paths(text) == ["/work/shared/datasets", "/x/y/", "/tmp/gpu", "/opt/a/b.py"]


def test_relative_text_keeps_everything_but_the_paths():
    text = 'File "/work/checkouts/caps/exp/train_step.py", line 270, in __call__ (see /work/shared/docs/x.csv)'
    assert relative_text(text, REPO) == 'File "exp/train_step.py", line 270, in __call__ (see ../shared/docs/x.csv)'


def test_relative_record_rewrites_strings_only():
    record = {"mse": 0.3812345678901234, "config": {"root_path": "/work/checkouts/caps/dataset/ETT-small/",
                                                    "seed": 2021, "use_amp": False, "alpha": None},
              "argv": ["--root_path", "/work/shared/datasets/ETT-small/", "--seed", "2021"]}
    rewritten = relative_record(record, REPO)
    assert rewritten == {"mse": 0.3812345678901234, "config": {"root_path": "dataset/ETT-small/", "seed": 2021,
                                                               "use_amp": False, "alpha": None},
                         "argv": ["--root_path", "../shared/datasets/ETT-small/", "--seed", "2021"]}
    assert absolute_paths(json.dumps(rewritten)) == []


def test_a_recorded_path_is_read_relative_to_the_repository():
    assert from_record("../shared/docs/paper_results.csv", REPO) == REPO / "../shared/docs/paper_results.csv"
    assert from_record("/elsewhere/p.csv", REPO) == Path("/elsewhere/p.csv")
