"""fetch / registry: mirror copy with checksum, atomic writes, downloads (faked), archives, files without a
registry checksum (the mirror's SHA256SUMS, --accept-unverified, refused otherwise), CLI exit codes."""

from __future__ import annotations

import gzip
import hashlib
import logging
import shutil
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

from data_provider import fetch as fetch_module
from data_provider.fetch import ChecksumError, UnverifiedError, fetch, fetch_command, main, read_sha256sums
from data_provider.registry import DATASETS, DatasetInfo, find_by_path, lookup
from utils.errors import MissingDataError, UserInputError


@pytest.fixture
def etth1_mirror(tmp_path, data_mirror) -> Path:
    """A temporary mirror holding only ETTh1.csv (a real copy)."""
    mirror = tmp_path / "mirror"
    (mirror / "ETT-small").mkdir(parents=True)
    shutil.copyfile(data_mirror / "ETT-small" / "ETTh1.csv", mirror / "ETT-small" / "ETTh1.csv")
    return mirror


@pytest.fixture
def no_network(monkeypatch):
    """Every download fails as it does offline."""
    def offline(url: str, out: Path) -> None:
        raise urllib.error.URLError("network is unreachable")
    monkeypatch.setattr(fetch_module, "_download", offline)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_registry_has_every_tslib_file_with_known_checksums():
    expected = {"ETTh1": "ETT-small/ETTh1.csv", "ETTh2": "ETT-small/ETTh2.csv", "ETTm1": "ETT-small/ETTm1.csv",
                "ETTm2": "ETT-small/ETTm2.csv", "weather": "weather/weather.csv",
                "electricity": "electricity/electricity.csv", "traffic": "traffic/traffic.csv",
                "exchange_rate": "exchange_rate/exchange_rate.csv", "illness": "illness/national_illness.csv",
                "Solar": "Solar/solar_AL.txt", "PEMS03": "PEMS/PEMS03.npz", "PEMS04": "PEMS/PEMS04.npz",
                "PEMS07": "PEMS/PEMS07.npz", "PEMS08": "PEMS/PEMS08.npz",
                "M4-info": "m4/M4-info.csv",
                **{f"M4-{g}-{s}": f"m4/{g}-{s}.csv" for g in ("Yearly", "Quarterly", "Monthly", "Weekly", "Daily",
                                                            "Hourly") for s in ("train", "test")},
                "M4-Naive2": "m4/submission-Naive2.csv", "Yahoo": "Yahoo/yahoo.csv", "MITDB": "MITDB/mitdb.csv",
                "sktime_monthly": "sktime_monthly/sktime_monthly.csv"}
    assert {name: info.relpath for name, info in DATASETS.items()} == expected
    assert all(DATASETS[n].sha256 for n in ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "weather"))
    assert DATASETS["electricity"].md5 == "a1973ba4f4bed84136013ffa1ca27dc8"
    assert DATASETS["PEMS08"].url is None and DATASETS["traffic"].sha256 is None


def test_registry_checksums_match_the_mirror_sha256sums(data_mirror):
    sums = read_sha256sums(data_mirror / "SHA256SUMS")
    assert len(sums) == len((data_mirror / "SHA256SUMS").read_text().splitlines())
    for relpath, digest in sums.items():
        (info,) = [i for i in DATASETS.values() if i.relpath == relpath]
        assert info.sha256 == digest


def test_lookup_is_case_insensitive_with_aliases():
    assert lookup("etth1").name == "ETTh1" and lookup("ECL").name == "electricity" and lookup("ILI").name == "illness"
    with pytest.raises(UserInputError, match=r"unknown dataset 'ETTh3'; known: ETTh1, ETTh2"):
        lookup("ETTh3")


def test_find_by_path_and_fetch_command():
    info, root = find_by_path(Path("dataset/weather/weather.csv"))
    assert info.name == "weather" and root == Path("dataset")
    assert find_by_path(Path("elsewhere/mine.csv")) is None
    assert fetch_command("ETTh1") == "python -m data_provider.fetch ETTh1 --root ./dataset"
    assert fetch_command("ecl", "/data/ts") == "python -m data_provider.fetch electricity --root /data/ts"


def test_fetch_copies_from_mirror_and_verifies(tmp_path, etth1_mirror, caplog):
    root = tmp_path / "dataset"
    path = fetch("ETTh1", root, etth1_mirror)
    assert path == root / "ETT-small" / "ETTh1.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == DATASETS["ETTh1"].sha256
    assert leftovers(root) == ["ETTh1.csv"]
    # A second call finds the verified file and leaves it alone, even with no mirror at all.
    mtime = path.stat().st_mtime_ns
    with caplog.at_level(logging.INFO, logger="data_provider.fetch"):
        assert fetch("ETTh1", root, tmp_path / "empty") == path
    assert path.stat().st_mtime_ns == mtime and "ETTh1: present" in caplog.text


def test_fetch_uses_env_mirror(tmp_path, etth1_mirror, monkeypatch):
    monkeypatch.setenv("TSLIB_DATA_MIRROR", str(etth1_mirror))
    assert fetch("ETTh1", tmp_path / "dataset").is_file()


def test_corrupt_mirror_file_is_rejected_without_partial_file(tmp_path, etth1_mirror, no_network):
    mirror_file = etth1_mirror / "ETT-small" / "ETTh1.csv"
    mirror_file.write_bytes(mirror_file.read_bytes()[:-10])
    root = tmp_path / "dataset"
    with pytest.raises(ChecksumError, match=r"ETTh1: sha256 of the file from mirror .* does not match"):
        fetch("ETTh1", root, etth1_mirror)
    assert leftovers(root) == []


def test_file_with_wrong_checksum_is_replaced_from_mirror(tmp_path, etth1_mirror):
    dest = tmp_path / "dataset" / "ETT-small" / "ETTh1.csv"
    dest.parent.mkdir(parents=True)
    dest.write_text("date,OT\n")
    fetch("ETTh1", tmp_path / "dataset", etth1_mirror)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == DATASETS["ETTh1"].sha256


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def traffic_mirror(tmp_path) -> Path:
    """A mirror holding a traffic.csv, a file the registry has no checksum for."""
    mirror = tmp_path / "mirror"
    (mirror / "traffic").mkdir(parents=True)
    (mirror / "traffic" / "traffic.csv").write_text("date,OT\n2020-01-01,1\n")
    return mirror


def test_file_without_known_checksum_is_refused_with_its_sha256(tmp_path, traffic_mirror, no_network):
    root = tmp_path / "dataset"
    with pytest.raises(UnverifiedError) as err:
        fetch("traffic", root, traffic_mirror)
    message = str(err.value)
    digest = sha256(traffic_mirror / "traffic" / "traffic.csv")
    assert "\n" not in message
    assert message.startswith(f"traffic: no known checksum for traffic/traffic.csv (none in the registry, none in a "
                              f"mirror SHA256SUMS), so the file from mirror {traffic_mirror / 'traffic' / 'traffic.csv'}"
                              f" (sha256 {digest}) was not installed")
    assert f"add '{digest}  traffic/traffic.csv' to SHA256SUMS in the --mirror folder" in message
    assert "rerun with --accept-unverified" in message
    assert not root.exists()


def test_accept_unverified_installs_and_logs_the_sha256(tmp_path, traffic_mirror, caplog):
    root = tmp_path / "dataset"
    with caplog.at_level(logging.WARNING, logger="data_provider.fetch"):
        path = fetch("traffic", root, traffic_mirror, accept_unverified=True)
    digest = sha256(traffic_mirror / "traffic" / "traffic.csv")
    assert path.read_bytes() == (traffic_mirror / "traffic" / "traffic.csv").read_bytes()
    assert "traffic: installed WITHOUT a known checksum (--accept-unverified): the file from mirror" in caplog.text
    assert f"has sha256 {digest}" in caplog.text and leftovers(root) == ["traffic.csv"]
    # Once in place it is kept (its sha256 logged again), also without the flag.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="data_provider.fetch"):
        assert fetch("traffic", root, traffic_mirror) == path
    assert f"traffic: present at {path} (no known checksum; sha256 {digest})" in caplog.text


def test_the_mirror_sha256sums_verifies_what_the_registry_does_not_know(tmp_path, traffic_mirror, caplog):
    digest = sha256(traffic_mirror / "traffic" / "traffic.csv")
    (traffic_mirror / "SHA256SUMS").write_text(f"# sha256sum output\n\n{digest} *./traffic/traffic.csv\n")
    root = tmp_path / "dataset"
    with caplog.at_level(logging.WARNING, logger="data_provider.fetch"):
        path = fetch("traffic", root, traffic_mirror)
    assert sha256(path) == digest and caplog.text == ""
    # A present file that no longer matches is replaced; a mirror file that does not match is refused.
    path.write_text("date,OT\n")
    assert sha256(fetch("traffic", root, traffic_mirror)) == digest
    (traffic_mirror / "traffic" / "traffic.csv").write_text("date,OT\n2020-01-01,2\n")
    path.unlink()
    with pytest.raises(ChecksumError, match=rf"traffic: sha256 of the file from mirror .* does not match "
                                            rf"{traffic_mirror / 'SHA256SUMS'}; nothing was written"):
        fetch("traffic", root, traffic_mirror, accept_unverified=True)
    assert leftovers(root) == []


def test_registry_checksums_take_precedence_over_the_mirror_list(tmp_path, etth1_mirror):
    (etth1_mirror / "SHA256SUMS").write_text(f"{'0' * 64}  ETT-small/ETTh1.csv\n")
    assert sha256(fetch("ETTh1", tmp_path / "dataset", etth1_mirror)) == DATASETS["ETTh1"].sha256


@pytest.mark.parametrize("line", ["abc  traffic/traffic.csv", f"{'a' * 64} traffic/traffic.csv", f"{'a' * 64}  ",
                                  f"{'g' * 64}  traffic/traffic.csv"])
def test_a_malformed_sha256sums_line_is_one_error_line(tmp_path, traffic_mirror, line):
    (traffic_mirror / "SHA256SUMS").write_text(f"{'b' * 64}  other.csv\n{line}\n")
    with pytest.raises(UserInputError, match=r"SHA256SUMS line 2 is not '<sha256>  <file>' \(the format sha256sum "
                                             r"writes\); fix or remove that line"):
        fetch("traffic", tmp_path / "dataset", traffic_mirror)


def test_downloads_without_known_checksum_are_refused_unless_accepted(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "_download", lambda url, out: out.write_text("date,OT\n"))
    monkeypatch.delenv("TSLIB_DATA_MIRROR", raising=False)
    root = tmp_path / "dataset"
    with pytest.raises(UnverifiedError, match=r"exchange_rate: no known checksum .* the file from https://\S+ "
                                              r"\(sha256 [0-9a-f]{64}\) was not installed"):
        fetch("exchange_rate", root, None)
    assert leftovers(tmp_path) == []
    assert fetch("exchange_rate", root, None, accept_unverified=True).read_text() == "date,OT\n"
    # A mirror folder may vouch for a download with its SHA256SUMS alone.
    (root / "exchange_rate" / "exchange_rate.csv").unlink()
    sums = tmp_path / "sums"
    sums.mkdir()
    (sums / "SHA256SUMS").write_text(f"{hashlib.sha256(b'date,OT' + bytes([10])).hexdigest()}  "
                                     "exchange_rate/exchange_rate.csv\n")
    assert fetch("exchange_rate", root, sums).read_text() == "date,OT\n"
    (sums / "SHA256SUMS").write_text(f"{'0' * 64}  exchange_rate/exchange_rate.csv\n")
    (root / "exchange_rate" / "exchange_rate.csv").unlink()
    with pytest.raises(ChecksumError, match=r"exchange_rate: sha256 of the file from https://\S+ does not match"):
        fetch("exchange_rate", root, sums)


def test_a_file_extracted_from_an_archive_with_a_known_md5_counts_as_verified(tmp_path, monkeypatch):
    payload = b"1.0,2.0\n"
    monkeypatch.setattr(fetch_module, "_download", fake_gz_download(payload))
    info = DatasetInfo("Toy", "Toy/toy.txt", "Solar", 1, 2, url="https://example.invalid/toy.txt.gz",
                       archive_md5=hashlib.md5(gzip.compress(payload)).hexdigest())
    dest = tmp_path / "Toy" / "toy.txt"
    dest.parent.mkdir()
    assert fetch_module._download_and_install(info, info.url, dest).read_bytes() == payload
    unchecked = DatasetInfo("Toy", "Toy/toy.txt", "Solar", 1, 2, url="https://example.invalid/toy.txt.gz")
    dest.unlink()
    with pytest.raises(UnverifiedError):
        fetch_module._download_and_install(unchecked, unchecked.url, dest)
    assert leftovers(tmp_path) == []


def test_cli_accept_unverified(tmp_path, traffic_mirror, capsys):
    argv = ["traffic", "--root", str(tmp_path / "dataset"), "--mirror", str(traffic_mirror), "--offline"]
    assert main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("error: traffic: no known checksum for traffic/traffic.csv")
    assert main([*argv, "--accept-unverified"]) == 0
    assert "traffic: installed WITHOUT a known checksum (--accept-unverified)" in capsys.readouterr().out


def test_offline_download_fails_cleanly(tmp_path, no_network):
    with pytest.raises(MissingDataError, match=r"ETTh1: download from https://\S+ failed .*unreachable.*"
                                               r"place ETT-small/ETTh1.csv at"):
        fetch("ETTh1", tmp_path / "dataset", tmp_path / "empty")
    assert not (tmp_path / "dataset" / "ETT-small").exists()


def test_dataset_without_url_is_never_downloaded(tmp_path, monkeypatch):
    def fail(url: str, out: Path) -> None:
        raise AssertionError("download attempted")
    monkeypatch.setattr(fetch_module, "_download", fail)
    monkeypatch.delenv("TSLIB_DATA_MIRROR", raising=False)
    with pytest.raises(MissingDataError, match=r"PEMS08: not found; place PEMS/PEMS08.npz at .*PEMS08.npz "
                                               r"\(download it from https://drive.google.com/"):
        fetch("PEMS08", tmp_path / "dataset", None)


def fake_gz_download(payload: bytes):
    def download(url: str, out: Path) -> None:
        out.write_bytes(gzip.compress(payload))
    return download


def test_archive_download_is_extracted_and_verified(tmp_path, monkeypatch):
    payload = b"1.0,2.0\n3.0,4.0\n"
    monkeypatch.setattr(fetch_module, "_download", fake_gz_download(payload))
    info = DatasetInfo("Toy", "Toy/toy.txt", "Solar", 2, 2, sha256=hashlib.sha256(payload).hexdigest(),
                       url="https://example.invalid/toy.txt.gz",
                       archive_md5=hashlib.md5(gzip.compress(payload)).hexdigest())
    dest = tmp_path / "Toy" / "toy.txt"
    dest.parent.mkdir()
    assert fetch_module._download_and_install(info, info.url, dest) == dest
    assert dest.read_bytes() == payload and leftovers(tmp_path) == ["toy.txt"]


def test_archive_with_wrong_md5_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "_download", fake_gz_download(b"not solar\n"))
    monkeypatch.delenv("TSLIB_DATA_MIRROR", raising=False)
    with pytest.raises(ChecksumError, match=r"Solar: md5 of solar_AL.txt.gz .* does not match"):
        fetch("Solar", tmp_path / "dataset", None)
    assert leftovers(tmp_path / "dataset") == []


def test_cli_missing_everything_exits_1_with_one_line_each(tmp_path, no_network, capsys):
    code = main(["ETTh1", "PEMS04", "nonsense", "--root", str(tmp_path / "dataset"), "--mirror", str(tmp_path)])
    assert code == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error:")]
    assert len(errors) == 3
    assert errors[0].startswith("error: ETTh1: download from") and "--mirror DIR" in errors[0]
    assert errors[1].startswith("error: PEMS04: not found; place PEMS/PEMS04.npz")
    assert errors[2].startswith("error: unknown dataset 'nonsense'")


def test_cli_all_fetches_every_mirrored_dataset(tmp_path, etth1_mirror, capsys):
    assert main(["all", "--root", str(tmp_path / "dataset"), "--mirror", str(etth1_mirror), "--offline"]) == 0
    assert leftovers(tmp_path / "dataset") == ["ETTh1.csv"]
    assert "ETTh1: copied from mirror" in capsys.readouterr().out


def test_cli_all_without_mirror_explains(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TSLIB_DATA_MIRROR", raising=False)
    assert main(["all", "--root", str(tmp_path)]) == 1
    assert "pass --mirror DIR or set TSLIB_DATA_MIRROR" in capsys.readouterr().out


def test_module_entry_point_offline(tmp_path):
    result = subprocess.run([sys.executable, "-m", "data_provider.fetch", "PEMS03", "--root", str(tmp_path),
                             "--offline"], capture_output=True, text=True, cwd=Path(__file__).parents[2],
                            env={"PATH": "", "PYTHONPATH": str(Path(__file__).parents[2])}, check=False)
    assert result.returncode == 1
    assert result.stdout.startswith("error: PEMS03: not found; place PEMS/PEMS03.npz")
    assert list(tmp_path.iterdir()) == []
