"""The test harness itself: the servers start, answer, misbehave on request, and fail loudly."""

from __future__ import annotations

import smtplib
import socket
from typing import Any

import pytest
import sqlalchemy as sa

from tests.servers import Dovecot, Postgres, ServerError, SmtpSink, dovecot_config

pytestmark = pytest.mark.e2e

MAIL = b"From: a@example.test\r\nSubject: s\r\nMessage-ID: <m1@example.test>\r\n\r\nbody\r\n"


def test_postgres_answers_select_1_through_sqlalchemy(postgres: Postgres) -> None:
    """The PostgreSQL fixture gives a SQLAlchemy URL (psycopg 3) that answers queries."""
    assert postgres.url.startswith("postgresql+psycopg://")
    engine = sa.create_engine(postgres.url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("select 1")).scalar() == 1
            assert conn.execute(sa.text("select current_database()")).scalar() == postgres.database
    finally:
        engine.dispose()


def test_postgres_can_make_an_extra_database(postgres: Postgres) -> None:
    """create_database() gives a separate, empty database (one per test module if wanted)."""
    url = postgres.create_database("flagman_extra")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("create table t (x int)"))
            conn.execute(sa.text("insert into t values (41)"))
            assert conn.execute(sa.text("select x + 1 from t")).scalar() == 42
    finally:
        engine.dispose()


def test_lmtp_delivery_is_readable_over_imap_and_unknown_users_are_refused(dovecot: Dovecot) -> None:
    """deliver() puts mail in the user's INBOX; LMTP refuses users that do not exist."""
    user = dovecot.add_user("harness-reader@flagman.test", "pw")
    dovecot.deliver(user, MAIL)
    client = dovecot.imap_client(user)
    try:
        (uid,) = client.search("ALL")
        assert b"<m1@example.test>" in client.fetch([uid], ["BODY.PEEK[]"])[uid][b"BODY[]"]
        assert {name for _, _, name in client.list_folders()} >= {"INBOX", "Processed", "Failed"}
    finally:
        client.logout()
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        dovecot.deliver("nobody-here@flagman.test", MAIL)


def test_a_killed_dovecot_restarts_with_its_mail() -> None:
    """kill() is a crash (SIGKILL); restart() comes back on the same ports with the mail."""
    with Dovecot() as server:
        user = server.add_user("crash@flagman.test", "pw")
        server.deliver(user, MAIL)
        port = server.imap_port
        server.kill()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        server.restart()
        assert server.imap_port == port
        client = server.imap_client(user)
        assert len(client.search("ALL")) == 1
        client.logout()


def test_recreate_inbox_changes_uidvalidity(dovecot: Dovecot) -> None:
    """recreate_inbox() gives the INBOX a new UIDVALIDITY; its mail stays."""
    user = dovecot.add_user("harness-recreate@flagman.test", "pw")
    dovecot.deliver(user, MAIL)
    before = dovecot.uidvalidity(user)
    after = dovecot.recreate_inbox(user)
    assert after != before and dovecot.uidvalidity(user) == after
    client = dovecot.imap_client(user)
    assert len(client.search("ALL")) == 1
    client.logout()


def test_a_dovecot_that_cannot_start_fails_with_its_log() -> None:
    """A busy port: start() raises ServerError quoting the server's own complaint."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        server = Dovecot()
        server.imap_port = busy.getsockname()[1]
        try:
            with pytest.raises(ServerError) as caught:
                server.start()
        finally:
            server.cleanup()
    assert "did not start" in str(caught.value)
    assert "Address already in use" in str(caught.value) or "bind" in str(caught.value)


def test_dovecot_config_follows_the_version() -> None:
    """2.3 and 2.4 configs differ (testing.md): the right syntax for each version."""
    values: dict[str, Any] = dict(root="/r", user="u", group="g", uid=1, gid=2, imap_port=3, lmtp_port=4)
    old = dovecot_config((2, 3), **values)
    new = dovecot_config((2, 4), **values)
    assert "mail_location = maildir:~/Maildir" in old and "disable_plaintext_auth = no" in old
    assert "dovecot_config_version" not in old
    assert "dovecot_config_version = 2.4.0" in new and "mail_driver = maildir" in new
    assert "auth_allow_cleartext = yes" in new and "%{user}" in new
    assert "mail_location" not in new and "disable_plaintext_auth" not in new


def test_sink_faults_fire_the_given_number_of_times(smtp_sink: SmtpSink) -> None:
    """fail_rcpt(times=1) refuses once, then the same recipient is accepted and recorded."""
    smtp_sink.reset()
    smtp_sink.fail_rcpt("451 4.3.0 later", recipients=["x@players.test"], times=1)
    with smtplib.SMTP(smtp_sink.host, smtp_sink.port, timeout=5) as conn:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            conn.sendmail("bot@flagman.test", ["x@players.test"], MAIL)
        assert refused.value.recipients["x@players.test"][0] == 451
        conn.sendmail("bot@flagman.test", ["x@players.test"], MAIL)
    (received,) = smtp_sink.wait_for(1)
    assert received.message_id == "<m1@example.test>"
    assert received.rcpt_tos == ("x@players.test",)


def test_sink_can_drop_the_connection(smtp_sink: SmtpSink) -> None:
    """drop_connection() resets the TCP connection instead of answering."""
    smtp_sink.reset()
    smtp_sink.drop_connection("data", times=1)
    with pytest.raises((smtplib.SMTPServerDisconnected, ConnectionError)):
        with smtplib.SMTP(smtp_sink.host, smtp_sink.port, timeout=5) as conn:
            conn.sendmail("bot@flagman.test", ["y@players.test"], MAIL)
    assert smtp_sink.messages == []
