"""Faults at the start of `flagman run`: "A fault at start kills the service for good:
disk full, a read-only database or PostgreSQL down makes `run` exit; the unit's restart limits
use up five starts in about a minute, then it stays failed after the fault clears ... Start the
same way: wait and retry in-process with back-off, one line per retry kind, `STATUS=` telling
why." Each fault is made for real (file modes met without root's override, a tmpfs filled, a
PostgreSQL server stopped), the service runs as systemd runs it (a notify socket), and the test
waits on its log lines and datagrams, never on time."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest

from tests.bot.ops.test_storage_faults import make_site
from tests.e2e.test_service_signals import NotifySocket, Service
from tests.helpers import SmallDisk, damage_pages, flagman_process, init_site

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WAITING = "cannot start yet: "
RECOVERED = "the database works again after "
RUNNING = "flagman running: "


def statuses(notify: NotifySocket) -> list[str]:
    return [line for message in notify.messages for line in message if line.startswith("STATUS=")]


def wait_for_tries(notify: NotifySocket, tries: int) -> None:
    """Until STATUS= says the service has tried `tries` times (each try one datagram)."""
    index = 0
    while True:
        index = notify.wait_for("STATUS=waiting to start", after=index, prefix=True, timeout=120)
        status = next(line for line in notify.messages[index] if line.startswith("STATUS="))
        if f", {tries} tries: " in status:
            return
        index += 1


def waited_and_recovered(service: Service, notify: NotifySocket, *words: str) -> None:
    """The service waited (one error line naming the fault, however many tries), STATUS= said
    why, and it runs once the fault is gone; SIGTERM then stops it cleanly."""
    service.wait_log(RECOVERED, timeout=600)
    service.wait_log(RUNNING, timeout=120)
    waiting = [line for line in service.lines if WAITING in line]
    assert len(waiting) == 1, service.log
    for word in words:
        assert word in waiting[0], (word, waiting[0])
    assert waiting[0].startswith(("<3>", "ERROR")), waiting[0]
    assert "Traceback" not in service.log
    said = statuses(notify)
    assert any(s.startswith("STATUS=waiting to start") and words[0] in s for s in said), said
    assert notify.wait_for("READY=1") < notify.wait_for("STATUS=running", prefix=True)
    code = service.stop(signal.SIGTERM)
    assert code == 0, service.log


def roles(path: Path) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        s.labels["role"]: s.value
        for f in text_string_to_metric_families(path.read_text())
        for s in f.samples
        if s.name == "flagman_role"
    }


def test_run_waits_out_a_full_disk_and_starts_once_there_is_room(tmp_path: Path) -> None:
    with SmallDisk(tmp_path / "disk", 4096) as disk:
        root = disk.root / "site"
        config = make_site(root, mails=1)
        with sqlite3.connect(root / "flagman.sqlite") as conn:  # the WAL emptied: a write must grow it
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        disk.fill()
        notify = NotifySocket(tmp_path / "notify")
        service = Service(config, notify)
        try:
            wait_for_tries(notify, 2)
            assert service.proc.poll() is None, service.log
            disk.free()
            waited_and_recovered(service, notify, "the disk is full", f"df -h {root}")
        finally:
            service.kill()
            notify.close()


def test_run_waits_out_postgresql_down_and_starts_once_it_is_back(tmp_path: Path) -> None:
    from bot.db import migrate
    from tests.servers import Postgres

    config = init_site(tmp_path / "site", "flagman@start.test")
    with Postgres() as server:
        url = server.create_database("down")
        migrate(url)
        config.write_text(config.read_text().replace('url = "sqlite:///flagman.sqlite"', f'url = "{url}"'))
        server.stop()
        notify = NotifySocket(tmp_path / "notify")
        service = Service(config, notify)
        try:
            wait_for_tries(notify, 2)
            assert service.proc.poll() is None, service.log
            server.start()
            waited_and_recovered(service, notify, "cannot use the database postgresql", "Connection refused")
        finally:
            service.kill()
            notify.close()


def test_a_stop_while_waiting_to_start_is_a_clean_stop(tmp_path: Path) -> None:
    root = tmp_path / "site"
    config = make_site(root, mails=0)
    (root / "flagman.sqlite").chmod(0o444)
    notify = NotifySocket(tmp_path / "notify")
    service = Service(config, notify, unprivileged=True)
    try:
        wait_for_tries(notify, 1)
        code = service.stop(signal.SIGTERM)
        assert code == 0, service.log
        notify.wait_for("STOPPING=1")
    finally:
        service.kill()
        notify.close()


def test_damaged_pages_stop_migrate_and_run_rather_than_a_job_later(tmp_path: Path) -> None:
    """ "Two overwritten database pages: `migrate` exits 0 and `run` starts; only doctor
    and the nightly backup notice". Waiting does not mend damage: both refuse, status 4, with
    the way to restore."""
    config = make_site(tmp_path / "site")
    damage_pages(tmp_path / "site" / "flagman.sqlite")
    for command in ("migrate", "run"):
        done = flagman_process(config, command)
        assert done.returncode == 4, (command, done.stdout, done.stderr)
        assert "is damaged" in done.stderr and "flagmanctl restore" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_run_migrate_waits_out_a_read_only_database_then_migrates_and_starts(tmp_path: Path) -> None:
    """What the unit runs, `flagman run --migrate`, after an upgrade, on a database it may not
    write yet: it waits (one line, naming the mode), and while it waits the metrics file says so
    (flagman_role{role="waiting"} 1: an instance waiting to start is not an instance gone); once
    the database is writable it migrates it to this flagman's schema and starts."""
    from bot.db import head_revision
    from bot.ops.upgrade import migrate_to
    from bot.settings import load_settings

    root = tmp_path / "site"
    config = make_site(root, mails=0)
    metrics_file = tmp_path / "metrics" / "flagman.prom"
    config.write_text(config.read_text() + f'\n[metrics]\nfile = "{metrics_file}"\n')
    migrate_to(load_settings(config, env={}).database_url, "0013")
    (root / "flagman.sqlite").chmod(0o444)
    notify = NotifySocket(tmp_path / "notify")
    service = Service(config, notify, unprivileged=True, options=("--migrate",))
    try:
        wait_for_tries(notify, 2)
        assert service.proc.poll() is None, service.log
        assert roles(metrics_file) == {"active": 0, "standby": 0, "waiting": 1}
        for path in root.glob("flagman.sqlite*"):
            path.chmod(0o600)
        service.wait_log(f"database migrated up from revision 0013 to {head_revision()}", timeout=600)
        waited_and_recovered(service, notify, "cannot be written", "mode 0444")
    finally:
        service.kill()
        notify.close()
