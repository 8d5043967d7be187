"""Abuse by volume, each case end to end: through the embedded default's Maildir inbox
and outbox, and through Dovecot (IMAP, LMTP) with the SMTP relay (the `rig` of the trust-hole tests).

1. a repeated command is answered once, and an answer to a stranger is small;
2. 2,000 bad order lines get a refusal linear in them, under its cap;
3. an address longer than RFC 5321 allows is refused at the doors, and a mail that cannot be
   written or sent fails alone, recorded, on either mailer;
4. the bot's own codes are acted on whatever the caps; 7. an autoresponder loop costs no order;
5. ADDRESS moves what its proof covers, the player told first and able to stop it;
6. JOIN is double opt-in and relays nothing; 8. DKIM alignment by organizational domain.
"""

from __future__ import annotations

import re
from email.message import EmailMessage

import pytest
from sqlalchemy import select

from bot import letters
from bot.games.turns import PlayerSpec, create_game
from bot.letters import STRANGER_ANSWER_BYTES, ToAddress
from bot.mail_in.auth import GM_SEAT, signed_address
from bot.mail_out import lists
from bot.models import Game, Outbox, OutboxBody, OutboxStatus, Player, Seat
from tests.e2e.rig import SECRET, Rig, text_of
from tests.servers import SmtpSink

pytestmark = pytest.mark.e2e
LONG = "x" * 61 + "@" + ".".join(["a" * 60] * 4) + ".example"  # 313 characters


def _sent_sizes(rig: Rig, start: int) -> list[tuple[str, int, EmailMessage]]:
    with rig.app.db.read() as session:
        sizes = dict(
            session.execute(
                select(Outbox.id, OutboxBody.data).join(OutboxBody, OutboxBody.id == Outbox.id).where(Outbox.id > start)
            ).all()
        )
    return [
        (recipient, len(data), msg) for (recipient, msg), data in zip(rig.sent(start), sizes.values(), strict=False)
    ]


def _code(msg: EmailMessage) -> str:
    found = re.search(r"\[confirm ([^\]]+)\]", str(msg["Subject"]))
    assert found is not None, msg["Subject"]
    return found.group(1)


def test_a_repeated_help_is_answered_once_and_smaller_than_the_mail(rig: Rig) -> None:
    """Case 1: "A 10 KB forged mail holding HELP 2,000 times is answered with one 3.3 MB mail"."""
    start = rig.last_outbox_id()
    rig.mail("victim@else.test", rig.bot, "HELP\n" * 2000, subject="help")
    rig.cycle()
    ((recipient, size, msg),) = _sent_sizes(rig, start)
    assert recipient == "victim@else.test" and size <= STRANGER_ANSWER_BYTES < 10_000
    assert text_of(msg).count("Commands for anyone:") == 1


def test_2000_order_lines_are_refused_in_a_few_kilobytes(rig: Rig) -> None:
    """Case 2: "2,000 USE 1 lines to a seat's address give a 24 MB refusal and a 6-7 s poll"."""
    start = rig.last_outbox_id()
    rig.mail(rig.players["kelly"], rig.signed("kelly"), "USE 1\n" * 2000)
    rig.cycle()
    ((recipient, size, msg),) = _sent_sizes(rig, start)
    assert recipient == rig.players["kelly"] and size <= 8 * 1024
    assert "1980 more lines not shown" in text_of(msg)


def test_a_long_address_is_refused_at_the_doors_and_stalls_nothing(rig: Rig) -> None:
    """Case 3: "A stranger's HELP from a valid 313-character address (or a GM REPLACE to one) makes
    every flagman send fail ... every later mail stays pending"."""
    start = rig.last_outbox_id()
    rig.mail(LONG, rig.bot, "HELP")
    rig.mail(rig.gm, signed_address(rig.bot, SECRET, "rc1", GM_SEAT), f"REPLACE rc1 roger {LONG}")
    rig.mail(rig.players["seb"], rig.signed("seb"), "USE 2")
    rig.cycle()
    sent = _sent_sizes(rig, start)
    assert [r for r, _, _ in sent] == [rig.gm, rig.players["seb"]]
    assert "the new address is longer than the 254 characters" in " ".join(text_of(sent[0][2]).split())
    with rig.app.db.read() as session:
        assert session.scalar(select(Outbox.id).where(Outbox.status == OutboxStatus.PENDING)) is None
    rows = rig.rows()
    assert rows[-3].status == "ignored" and "longer than mail allows" in rows[-3].detail


def _queue_three(rig: Rig, bad: str) -> None:
    """A notice to `bad` between two to players, as any three letters are queued."""
    with rig.app.db.transaction() as session:
        for address in (rig.players["kelly"], bad, rig.players["seb"]):
            letters.notice(rig.app.shell, session, ToAddress(address), "A notice", "Three letters in a row.")


@pytest.mark.parametrize("rig", ["maildir"], indirect=True)
def test_a_mail_the_maildir_cannot_take_fails_alone(rig: Rig) -> None:
    """Case 3, "fails alone, recorded, without holding back the rest of the outbox" (Maildir): a
    recipient whose folder cannot be made; the letters before and after it are delivered."""
    root = rig.app.settings.resolve_path(rig.app.settings.outbox.path)
    blocked = "blocked@else.test"
    root.mkdir(parents=True, exist_ok=True)
    (root / blocked).write_text("a file where the folder would be")
    start = rig.last_outbox_id()
    _queue_three(rig, blocked)
    rig.cycle()
    with rig.app.db.read() as session:
        rows = session.execute(
            select(Outbox.recipient, Outbox.status, Outbox.last_error).where(Outbox.id > start).order_by(Outbox.id)
        ).all()
    assert [(r, s) for r, s, _ in rows] == [
        (rig.players["kelly"], "sent"),
        (blocked, "failed"),
        (rig.players["seb"], "sent"),
    ]
    assert "NotADirectoryError" in rows[1][2]


def test_a_mail_the_relay_refuses_for_good_fails_alone(rig: Rig, request: pytest.FixtureRequest) -> None:
    """Case 3 on the SMTP relay (on the Maildir rig: a long address, which now has a folder name)."""
    start = rig.last_outbox_id()
    if rig.app.settings.outbox.kind == "smtp":
        sink: SmtpSink = request.getfixturevalue("smtp_sink")
        bad = "refused@else.test"
        sink.fail_rcpt("550 5.1.1 No such user", recipients=[bad], times=None)
    else:
        bad = "k" * 64 + "@" + ".".join(["a" * 60] * 3) + ".org"  # 253 characters: a name too long before
    _queue_three(rig, bad)
    rig.cycle()
    with rig.app.db.read() as session:
        rows = session.execute(
            select(Outbox.recipient, Outbox.status).where(Outbox.id > start).order_by(Outbox.id)
        ).all()
    expected_bad = "failed" if rig.app.settings.outbox.kind == "smtp" else "sent"
    assert [tuple(r) for r in rows] == [
        (rig.players["kelly"], "sent"),
        (bad, expected_bad),
        (rig.players["seb"], "sent"),
    ]


def test_the_bots_codes_are_acted_on_after_a_flood_of_strangers(rig: Rig) -> None:
    """Case 4: "After 50 forged stranger mails in an hour, a genuine List-Unsubscribe and a genuine
    ADDRESS confirmation are ignored"."""
    rig.mail(rig.players["kelly"], rig.signed("kelly"), f"ADDRESS kelly@new.{rig.domain}")
    rig.cycle()
    ask = next(m for r, m in rig.sent() if r == f"kelly@new.{rig.domain}")
    for n in range(60):
        rig.mail(f"forged{n}@else.test", rig.bot, "who are you?")
    rig.cycle()
    with rig.app.db.read() as session:
        seb = session.scalars(select(Seat).join(Game).where(Game.name == "rc1", Seat.name == "seb")).one()
        code = lists.reminders_code(SECRET, "rc1", "seb", seb.player_id, seb.reply_salt)
    rig.mail(rig.players["seb"], rig.bot, "", subject=f"unsubscribe {code}")
    rig.mail(f"kelly@new.{rig.domain}", rig.bot, "yes", subject=f"Re: [confirm {_code(ask)}] Confirm")
    rig.cycle()
    rows = rig.rows()
    assert [r.status for r in rows[-2:]] == ["applied", "applied"]
    assert "UNSUBSCRIBE reminders" in rows[-2].detail and "CONFIRM ADDRESS" in rows[-1].detail
    with rig.app.db.read() as session:
        seb = session.scalars(select(Seat).join(Game).where(Game.name == "rc1", Seat.name == "seb")).one()
        assert seb.reminders_off_for == seb.player_id


def test_an_autoresponder_loop_does_not_cost_the_order(rig: Rig) -> None:
    """Case 7: "the player's genuine order through the signed address that hour was ignored"."""
    for n in range(30):
        rig.mail(rig.players["steve"], rig.signed("steve"), f"Out of office ({n})", subject="Re: [rc1] Turn 1")
    rig.cycle()
    rig.mail(rig.players["steve"], rig.signed("steve"), "USE 3")
    rig.cycle()
    assert rig.orders() == ["USE 3"]
    assert (rig.rows()[-1].status, rig.rows()[-1].answer) == ("applied", "rate limit")


def test_one_seats_reply_address_moves_that_seat_only_and_the_player_can_stop_it(rig: Rig) -> None:
    """Case 5: "Holding only the reply address of one game ... a thief sent ADDRESS thief@...,
    confirmed it, and then received the player's turn sheets ... for every other game"."""
    kelly = rig.players["kelly"]
    with rig.app.db.transaction() as session:
        create_game(
            rig.app.shell,
            session,
            kind="racecraft",
            name="rc3",
            gm_address=rig.gm,
            deadline="48h",
            players=[
                PlayerSpec("kelly", kelly, "Kelly"),
                *(PlayerSpec(f"p{n}", f"p{n}@else.test", f"P{n}") for n in range(4)),
            ],
            seed=4,
        )
    rig.cycle()
    thief = "thief@evil.test"
    start = rig.last_outbox_id()
    rig.mail(thief, rig.signed("kelly"), f"ADDRESS {thief}")
    rig.cycle()
    told = [m for r, m in rig.sent(start) if r == kelly]
    assert len(told) == 1
    stop = re.search(r"STOP (stop\.\S+)", text_of(told[0]))
    assert stop is not None and "rc3" in text_of(told[0])
    ask = next(m for r, m in rig.sent(start) if r == thief)
    rig.mail(thief, rig.bot, "ok", subject=f"Re: [confirm {_code(ask)}] Confirm")
    rig.mail(kelly, rig.bot, f"STOP {stop.group(1)}", subject="Re: stop it")
    rig.cycle()
    rig.clock.advance(hours=30)
    rig.app.service.tick()
    with rig.app.db.read() as session:
        addresses = set(session.scalars(select(Player.address).join(Seat).where(Seat.name == "kelly")))
    assert addresses == {kelly}


def test_a_forged_join_gets_one_code_mail_and_makes_no_seat(rig: Rig) -> None:
    """Case 6: "a JOIN with a spam name into an open game sends the forged address a welcome
    greeting it by that name ... the GM's notice carries it too"."""
    start = rig.last_outbox_id()
    rig.mail("victim@else.test", rig.bot, "JOIN rc9 Cheap Pills Online")
    rig.cycle()
    ((recipient, _, msg),) = _sent_sizes(rig, start)
    assert recipient == "victim@else.test" and "Pills" not in text_of(msg)
    with rig.app.db.read() as session:
        assert session.scalars(select(Seat).join(Game).where(Game.name == "rc9")).all() == []
    rig.mail("victim@else.test", rig.bot, "yes", subject=f"Re: [confirm {_code(msg)}] Confirm")
    rig.cycle()
    with rig.app.db.read() as session:
        (seat,) = session.scalars(select(Seat).join(Game).where(Game.name == "rc9")).all()
        assert seat.player.name == "Cheap Pills Online"  # the address itself asked for that name


def test_dkim_for_a_public_suffix_proves_nobody(rig: Rig) -> None:
    """Case 8: "a DKIM pass for d=test counts as aligned with kelly@x.test"."""
    auth = "mx.trust.test; dkim=pass header.d=test"
    rig.mail(rig.players["kelly"], rig.bot, "USE 2", headers={"Authentication-Results": auth})
    domain = rig.players["kelly"].partition("@")[2]
    rig.mail(
        rig.players["seb"],
        rig.bot,
        "USE 3",
        headers={"Authentication-Results": f"mx.trust.test; dkim=pass header.d={domain}"},
    )
    rig.cycle()
    assert rig.orders() == ["USE 3"]
