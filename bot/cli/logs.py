"""The log on stdout: text or JSON lines, with syslog priority prefixes when stdout is the journal.

Under systemd, stdout and stderr go to the journal, which files each line at the priority of
its ``<N>`` prefix (sd-daemon(3): ``<3>`` error, ``<4>`` warning, ``<6>`` info, ``<7>``
debug) and strips the prefix; a line without one is filed at info, so without prefixes
``journalctl -u flagman -p warning`` shows nothing at all. systemd sets ``$JOURNAL_STREAM``
("device:inode") when it connects stdout or stderr to the journal: a stream whose device and
inode are those is the journal, and every line written to it gets its prefix; every line of a
record, a traceback's too (the journal keeps each line as an entry of its own).

`[log] format` chooses the line: ``text`` is ``LEVEL logger: message``; ``json`` is one object
a line, for a log shipper: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, any
fields the record carries (``extra=``), and ``exception`` (the traceback) if there is one.

A leaf of the CLI package: the configuration's `[log] format` is read here with `tomllib`
before the command loads the settings (a broken file is the command's to report).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tomllib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

# Python's levels as syslog priorities (sd-daemon(3)); a level in between takes the one below it.
PRIORITIES = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))
DEBUG_PRIORITY = 7
ERROR_PRIORITY = 3

# The attributes every LogRecord has: anything else on a record came with `extra=`, a field.
_STANDARD = frozenset(vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None))) | {"message", "asctime"}


def priority(levelno: int) -> int:
    """The syslog priority of a Python log level."""
    for level, prio in PRIORITIES:
        if levelno >= level:
            return prio
    return DEBUG_PRIORITY


def is_journal(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Is `stream` connected to the journal? ($JOURNAL_STREAM names its device and inode.)"""
    env = os.environ if env is None else env
    dev, sep, ino = env.get("JOURNAL_STREAM", "").partition(":")
    if not sep or not dev.isdigit() or not ino.isdigit():
        return False
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's capture)
        return False
    return (st.st_dev, st.st_ino) == (int(dev), int(ino))


def prefixed(text: str, prio: int) -> str:
    """Every line of `text` with the priority prefix ``<prio>``."""
    return "\n".join(f"<{prio}>{line}" for line in text.split("\n"))


class TextFormatter(logging.Formatter):
    """``LEVEL logger: message`` (and the traceback), each line prefixed when `journal`."""

    def __init__(self, *, journal: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return prefixed(text, priority(record.levelno)) if self.journal else text


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the record's fields, exception."""

    def __init__(self, *, journal: bool) -> None:
        super().__init__()
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC)
        data: dict[str, object] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in data and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            data["exception"] = record.exc_text
        text = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
        return f"<{priority(record.levelno)}>{text}" if self.journal else text


def configured_format(config: str | None) -> str:
    """`[log] format` of the configuration file (``--config``, or ./flagman.toml), or "text"
    when there is none or it cannot be read (the command itself says what is wrong with it)."""
    from bot.settings import LOG_FORMATS

    path = Path(config) if config else Path("flagman.toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "text"
    section = data.get("log")
    value = section.get("format") if isinstance(section, dict) else None
    return value if isinstance(value, str) and value in LOG_FORMATS else "text"


class StdoutLog(logging.StreamHandler[TextIO]):
    """The log on stdout. When the reader of stdout has gone (`flagman poll | head -1`) the log
    stops quietly, instead of a "--- Logging error ---" traceback for every record after it;
    the command carries on (its work is not cut short by a closed pipe), and `main` exits 1."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging.Handler calls this name
        if isinstance(sys.exc_info()[1], BrokenPipeError):
            # Not setStream: that flushes the old stream first, which is the broken pipe.
            self.stream = open(os.devnull, "w", encoding="utf-8")  # kept open for the rest of the process
            return
        super().handleError(record)


def setup_logging(
    verbose: bool,
    echoed: Sequence[str] = (),
    *,
    fmt: str = "text",
    stream: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> logging.Handler:
    """The log on stdout, INFO (DEBUG with `verbose`), as `fmt` ("text" or "json"), with
    priority prefixes when stdout is the journal; the INFO lines of the `echoed` loggers are
    left out unless `verbose` (the command prints those results itself). As
    `logging.basicConfig`, nothing changes if the root logger has a handler already (a test's
    log capture); the handler is returned either way."""
    stream = sys.stdout if stream is None else stream
    journal = is_journal(stream, env)
    handler = StdoutLog(stream)
    handler.setFormatter(JsonFormatter(journal=journal) if fmt == "json" else TextFormatter(journal=journal))
    if echoed and not verbose:
        names = tuple(echoed)

        def not_echoed(record: logging.LogRecord) -> bool:
            return record.levelno > logging.INFO or not record.name.startswith(names)

        handler.addFilter(not_echoed)
    root = logging.getLogger()
    if not root.handlers:  # as logging.basicConfig: a log set up already (a test's capture) is kept
        root.addHandler(handler)
        root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("alembic", "apscheduler", "imapclient"):
        logging.getLogger(noisy).setLevel(logging.INFO if verbose else logging.WARNING)
    # SQLAlchemy's INFO log is every statement: noise, and a risk (see bot.db.make_engine).
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
    return handler


class JournalErrors:
    """stderr when it is the journal: every line it carries starts with ``<3>`` (error), so
    the one-line failures of the commands (``flagman migrate`` before the service starts)
    are found by ``journalctl -p err``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._at_line_start = True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            if self._at_line_start:
                out.append(f"<{ERROR_PRIORITY}>")
            out.append(piece)
            self._at_line_start = piece.endswith("\n")
        self.stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)
