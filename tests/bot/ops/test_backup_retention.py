"""`flagman backup --keep N DIR`: a backup named by the time in DIR, then all
but the newest N of those deleted -- what the shipped flagman-backup.timer runs daily (N = 14).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import main
from bot.ops.backup import BackupError, backup_into, kept_backups
from bot.settings import load_settings
from tests.helpers import init_site

START = datetime(2026, 6, 1, 3, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site on the embedded default with a game in it."""
    config = init_site(tmp_path_factory.mktemp("site"))
    args = ["--config", str(config), "game", "new", "racecraft", "--name", "rc1"]
    for seat in ("kelly", "seb", "steve", "roger", "anna"):
        args += ["--player", f"{seat}={seat}@example.org"]
    assert main(args) == 0
    return config


def url(config: Path) -> str:
    return load_settings(config, env={}).database_url


def games_in(path: Path) -> list[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return [name for (name,) in db.execute("select name from game")]


def test_the_cli_keeps_the_newest_n_and_leaves_other_files_alone(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five runs of `flagman backup --keep 3 DIR`: after each, DIR holds the newest three
    backups written (each a whole database), and the operator's own files in DIR are untouched."""
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "before-upgrade.sqlite").write_text("the operator's")
    (folder / "flagman-notes.txt").write_text("the operator's")
    written: list[str] = []
    for _ in range(5):
        assert main(["--config", str(site), "backup", "--keep", "3", str(folder)]) == 0
        out = capsys.readouterr().out
        written.append(out.split("backup written to ", 1)[1].split(" (SQLite's integrity check: ok)\n", 1)[0])
        assert f"kept the newest 3 in {folder}" in out
        assert [str(p) for p in kept_backups(folder)] == written[-3:]
    assert "deleted " + Path(written[1]).name in out
    assert all(games_in(Path(p)) == ["rc1"] for p in written[-3:])
    assert (folder / "before-upgrade.sqlite").read_text() == "the operator's"
    assert (folder / "flagman-notes.txt").exists()


@pytest.mark.parametrize("keep", ["0", "-1", "x"])
def test_keep_must_be_a_positive_number(
    site: Path, tmp_path: Path, keep: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--config", str(site), "backup", f"--keep={keep}", str(tmp_path / "b")])
    assert exit_.value.code == 2 and "--keep" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_two_backups_in_one_second_are_both_kept_in_order(site: Path, tmp_path: Path) -> None:
    """Names carry the second; a second backup in the same second is -2, and sorts after the first."""
    first, _ = backup_into(url(site), tmp_path, keep=5, now=START)
    second, _ = backup_into(url(site), tmp_path, keep=5, now=START)
    third, _ = backup_into(url(site), tmp_path, keep=5, now=START + timedelta(seconds=1))
    assert (first.name, second.name, third.name) == (
        "flagman-20260601T033000Z.sqlite",
        "flagman-20260601T033000Z-2.sqlite",
        "flagman-20260601T033001Z.sqlite",
    )
    assert kept_backups(tmp_path) == [first, second, third]


def test_a_failed_backup_leaves_no_file_and_prunes_nothing(site: Path, tmp_path: Path) -> None:
    """A copy that fails (here: no database) leaves neither a backup nor a partial file, and
    the backups already there are all kept."""
    backup_into(url(site), tmp_path, keep=1, now=START)
    before = kept_backups(tmp_path)
    with pytest.raises(BackupError, match="no database"):
        backup_into(f"sqlite:///{tmp_path / 'missing.sqlite'}", tmp_path, keep=1, now=START + timedelta(days=1))
    assert kept_backups(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in before]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gaps=st.lists(st.integers(min_value=0, max_value=3 * 86400), min_size=1, max_size=8),
    keep=st.integers(min_value=1, max_value=5),
)
def test_the_directory_always_holds_the_newest_keep_backups(
    site: Path, tmp_path_factory: pytest.TempPathFactory, gaps: list[int], keep: int
) -> None:
    """Whatever the times between runs (the same second included), after each run the
    directory holds exactly the last min(keep, runs) backups written, oldest first."""
    folder = tmp_path_factory.mktemp("kept")
    source = url(site)
    moment, written = START, []
    for gap in gaps:
        moment += timedelta(seconds=gap)
        path, deleted = backup_into(source, folder, keep=keep, now=moment)
        written.append(path)
        assert kept_backups(folder) == written[-keep:]
        assert set(deleted) <= set(written[:-keep])


def test_a_clock_that_went_back_never_deletes_the_backup_just_made(site: Path, tmp_path: Path) -> None:
    """The clock set back two days: the new backup's name sorts first, yet it is kept and the
    oldest of the others goes."""
    backup_into(url(site), tmp_path, keep=2, now=START)
    later, _ = backup_into(url(site), tmp_path, keep=2, now=START + timedelta(days=1))
    earlier, deleted = backup_into(url(site), tmp_path, keep=2, now=START - timedelta(days=1))
    assert kept_backups(tmp_path)[0] == earlier
    assert set(kept_backups(tmp_path)) == {later, earlier}
    assert [p.name for p in deleted] == ["flagman-20260601T033000Z.sqlite"]
