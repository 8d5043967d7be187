"""The systemd notify protocol (sd_notify(3)) against a real unix datagram socket."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.ops.notify import Notifier


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2)
    try:
        yield path, sock
    finally:
        sock.close()


def received(sock: socket.socket) -> list[str]:
    return sock.recv(4096).decode().split("\n")


def test_ready_watchdog_stopping_arrive_as_datagrams(notify_socket: tuple[str, socket.socket]) -> None:
    """READY=1 (with STATUS), WATCHDOG=1 and STOPPING=1 each arrive as one datagram of KEY=VALUE lines."""
    path, sock = notify_socket
    notifier = Notifier(env={"NOTIFY_SOCKET": path})
    assert notifier.ready("running")
    assert received(sock) == ["READY=1", "STATUS=running"]
    assert notifier.watchdog()
    assert received(sock) == ["WATCHDOG=1"]
    assert notifier.stopping()
    assert received(sock) == ["STOPPING=1"]


def test_reloading_carries_the_monotonic_time(notify_socket: tuple[str, socket.socket]) -> None:
    """RELOADING=1 comes with MONOTONIC_USEC, as Type=notify-reload requires."""
    path, sock = notify_socket
    Notifier(env={"NOTIFY_SOCKET": path}).reloading()
    lines = received(sock)
    assert lines[0] == "RELOADING=1"
    assert lines[1].startswith("MONOTONIC_USEC=") and int(lines[1].split("=")[1]) > 0


def test_abstract_socket_names_start_with_a_nul_byte() -> None:
    """An '@name' NOTIFY_SOCKET is Linux's abstract namespace."""
    name = f"flagman-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2)
    try:
        assert Notifier(env={"NOTIFY_SOCKET": "@" + name}).ready()
        assert received(sock) == ["READY=1"]
    finally:
        sock.close()


def test_without_systemd_every_call_is_a_no_op() -> None:
    """No NOTIFY_SOCKET: nothing is sent, nothing fails, the watchdog is off."""
    notifier = Notifier(env={})
    assert not notifier.enabled
    assert not notifier.ready() and not notifier.watchdog() and not notifier.stopping()
    assert notifier.watchdog_seconds == 0 and not notifier.watchdog_due()


def test_a_vanished_socket_is_logged_not_raised(tmp_path: Path) -> None:
    """The protocol is advisory: a socket that went away never kills the service."""
    assert not Notifier(env={"NOTIFY_SOCKET": str(tmp_path / "gone.sock")}).ready()


def test_watchdog_interval_from_watchdog_usec(notify_socket: tuple[str, socket.socket]) -> None:
    """WATCHDOG_USEC gives the interval; a ping is due at once, then not until half of it passed."""
    path, sock = notify_socket
    notifier = Notifier(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())})
    assert notifier.watchdog_seconds == 30.0
    assert notifier.watchdog_due()
    notifier.watchdog()
    assert not notifier.watchdog_due()


def test_watchdog_meant_for_another_process_is_off(notify_socket: tuple[str, socket.socket]) -> None:
    """WATCHDOG_PID of another process (an inherited environment): this one must not ping."""
    path, _ = notify_socket
    notifier = Notifier(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"})
    assert notifier.watchdog_seconds == 0
