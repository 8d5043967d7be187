"""Session-wide real servers: Dovecot, an SMTP sink and PostgreSQL (see tests/servers.py).

A server that cannot start FAILS the tests that need it, with the server's log: CI must
never pass by skipping. A developer without the servers may set FLAGMAN_ALLOW_SKIP_SERVERS=1
to turn that into a skip locally (tests/run sets FLAGMAN_REQUIRE_SERVERS=1, which wins).
Test data that only some machines have (the external email corpus) follows tests/extra_data.py:
run where present, not collected (and said in one line) where absent, failing where required.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, settings

from tests.extra_data import EXTRA_DATA
from tests.helpers import unavailable as _unavailable
from tests.servers import Dovecot, Postgres, ServerError, SmtpSink

Server = TypeVar("Server", Dovecot, SmtpSink, Postgres)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A test module that needs data this machine lacks, and that this run does not require, is
    not collected (tests/extra_data.py); the run says so at its end."""
    for data in EXTRA_DATA:
        if data.needs(collection_path) and not data.runs:
            return True
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for each extra data set whose tests did not run here."""
    for data in EXTRA_DATA:
        if not data.runs:
            terminalreporter.write_line(data.not_run_line())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked slow run first (in their order), so that the workers of `tests/run`
    (pytest-xdist, work stealing) end together instead of one waiting on a long test at the end.
    A module named on the command line is collected whatever `pytest_ignore_collect` says: its
    tests that need data this machine lacks and this run does not require are deselected."""
    lacking = [data for data in EXTRA_DATA if not data.runs]
    left_out = [item for item in items if any(data.needs(item.path) for data in lacking)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# Hypothesis: `tests/run` (and so CI) gives the same verdict on every run of the same tree, the
# examples derived from each test's name ("settled"); a developer's plain pytest, or
# FLAGMAN_HYPOTHESIS=explore, draws fresh examples each run to look for new failures. No profile
# decides by the clock: no per-example deadline and no too-slow health check, so a busy machine
# changes how long a property takes, never its verdict.
_UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("settled", _UNTIMED, derandomize=True, print_blob=True)
settings.register_profile("explore", _UNTIMED, print_blob=True)
settings.load_profile(os.environ.get("FLAGMAN_HYPOTHESIS", "explore"))


def _started(what: str, make: Callable[[], Server]) -> Server:
    """A server built by `make` and started; the test fails (or skips, see above) if it cannot be."""
    failure: BaseException | None = None
    try:
        server = make()
        server.start()
    except (ServerError, OSError) as exc:
        failure = exc  # reported outside the except block: no chained traceback
    if failure is not None:
        _unavailable(what, failure)
    return server


@pytest.fixture(scope="session")
def dovecot() -> Iterator[Dovecot]:
    """A private Dovecot (IMAP + LMTP) for the whole session; add users with `add_user`."""
    server = _started("Dovecot", Dovecot)
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def smtp_sink(dovecot: Dovecot) -> Iterator[SmtpSink]:
    """The SMTP relay the bot sends to; delivers onward into Dovecot users' INBOXes.

    Shared by the session: call `smtp_sink.reset()` at the start of a test that counts.
    """
    sink = _started("The SMTP sink (aiosmtpd)", lambda: SmtpSink(onward=dovecot))
    try:
        yield sink
    finally:
        sink.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A private PostgreSQL cluster; `postgres.url` is a SQLAlchemy URL (psycopg 3)."""
    server = _started("PostgreSQL", Postgres)
    try:
        yield server
    finally:
        server.cleanup()
