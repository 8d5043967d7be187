"""Abuse by volume: no answer bigger than the mail deserves, caps that withhold answers
but never actions or records, addresses that fit mail at every door, ADDRESS that moves only
what its proof covers, JOIN as double opt-in, and DKIM alignment by organizational domain.

Each numbered case of the issue is a test here on the embedded bot (fake inbox and mailer, a real
SQLite file); tests/e2e/test_volume_abuse.py runs them through Maildir and Dovecot/SMTP.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from email import message_from_bytes, policy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.gm import digest
from bot.letters import ANSWER_BYTES, STRANGER_ANSWER_BYTES
from bot.mail_in.addresses import address_problem
from bot.mail_in.auth import authentication_passes, organizational_domain, signed_address
from bot.mail_in.parse import AuthResult
from bot.models import Game, InboundStatus, OrderSubmission, Player, Seat
from bot.testing import plain_mail
from tests.security.conftest import ADDRESS, AUTHSERV, BOT, GM, SITE_SECRET, Bot

LONG_ADDRESS = "x" * 61 + "@" + ".".join(["a" * 60] * 4) + ".example"  # 313 characters, each part legal alone


def _mail_bytes(bot: Bot) -> list[tuple[str, bytes]]:
    return [(row.recipient, row.data) for row in bot.outbox()]


def _text(data: bytes) -> str:
    msg = message_from_bytes(data, policy=policy.default)
    return "\n".join(str(part.get_content()) for part in msg.walk() if part.get_content_maintype() == "text")


def _answers(bot: Bot) -> list[tuple[str, bytes]]:
    """The answers to mail (they quote the mail's Message-ID) queued since the test began."""
    return [(row.recipient, row.data) for row in bot.outbox() if b"\nIn-Reply-To:" in row.data.replace(b"\r", b"")]


# -- 1, 2: no answer bigger than the mail deserves ------------------------------------------------


def test_help_written_2000_times_is_answered_once_and_small(bot: Bot) -> None:
    """ "A 10 KB forged mail holding HELP 2,000 times is answered with one 3.3 MB
    mail": a repeated command is answered once, and an answer to a stranger is under its cap."""
    body = "HELP\n" * 2000
    bot.deliver(plain_mail("victim@else.example", BOT, "help", body, message_id="<help2000@x>"))
    bot.poll()
    ((recipient, data),) = _mail_bytes(bot)
    assert recipient == "victim@else.example"
    assert len(data) <= STRANGER_ANSWER_BYTES < len(body)  # smaller than the mail that caused it
    text = _text(data)
    assert text.count("Commands for anyone:") == 1
    assert "1999 lines repeated a command given above" in text
    (row,) = bot.rows()
    assert (row.status, row.answer) == ("refused", "sent")


def test_many_distinct_commands_from_a_stranger_are_bounded_too(bot: Bot) -> None:
    """Distinct commands for anyone (RULES of 300 made-up games, OBSERVE of each): at most five are
    answered, the rest counted; the one answer stays under the stranger cap."""
    body = "\n".join(f"RULES game{n}\nOBSERVE game{n}" for n in range(300))
    bot.deliver(plain_mail("victim@else.example", BOT, "rules", body, message_id="<rules300@x>"))
    bot.poll()
    ((recipient, data),) = _mail_bytes(bot)
    assert len(data) <= STRANGER_ANSWER_BYTES
    assert "595 more commands: not carried out" in _text(data)
    assert "game1" not in _text(data)  # the sender's words are not repeated


def test_2000_order_lines_get_a_refusal_linear_in_them_and_under_the_cap(bot: Bot) -> None:
    """ "2,000 USE 1 lines to a seat's address give a 24 MB refusal (each line's
    error repeats all line numbers)": the reasons name a few lines and count the rest, and the
    answer quotes at most 20 lines."""
    bot.deliver(plain_mail(ADDRESS["kelly"], bot.signed("kelly"), "orders", "USE 1\n" * 2000, message_id="<use2000@x>"))
    bot.poll()
    ((recipient, data),) = _mail_bytes(bot)
    assert recipient == ADDRESS["kelly"] and len(data) <= 8 * 1024
    text = " ".join(_text(data).split())
    assert "this mail has 2000 (lines 1, 2, 3, 4 and 1996 more)" in text
    assert "... and 1980 more lines not shown." in text
    assert bot.orders() == 0


def test_no_answer_passes_its_cap_even_when_its_text_would(bot: Bot) -> None:
    """The last guard (bot.mail_out.queue._fit): a GM's 20 different lines not understood, each
    long, make an answer that is cut, and says so, at the cap for answers."""
    lines = (
        "\n".join(f"{chr(65 + n)}{'Q' * 180} {n}" for n in range(20))
        + "\n"
        + "\n".join(f"EXTEND rc1 {h}h" for h in range(1, 40))
    )
    bot.deliver(
        plain_mail(GM, signed_address(BOT, SITE_SECRET, "rc1", "gm"), "commands", lines, message_id="<gm-long@x>")
    )
    bot.poll()
    for _, data in _answers(bot):
        assert len(data) <= ANSWER_BYTES
    assert "19 more commands of your mail were not carried out: at most 20" in "\n".join(
        _text(d) for _, d in _answers(bot)
    )


# -- 3: addresses that fit mail, at every door; a mail that cannot go fails alone -----------------


def test_address_lengths_follow_rfc_5321() -> None:
    """RFC 5321 4.5.3.1: local part <= 64 octets, domain <= 255, a label <= 63, a path <= 256."""
    assert address_problem("kelly@example.org") is None
    assert address_problem("k" * 64 + "@example.org") is None
    assert address_problem("k" * 65 + "@example.org") is not None
    assert address_problem("k@" + "a" * 64 + ".org") is not None
    assert address_problem(LONG_ADDRESS) is not None and len(LONG_ADDRESS) == 313
    assert address_problem("k" * 64 + "@" + ".".join(["a" * 60] * 3) + ".org") is None  # 253 characters
    assert address_problem("bad address@example.org") is not None


def test_a_long_from_is_never_answered_and_is_recorded(bot: Bot) -> None:
    """ "A stranger's HELP from a valid 313-character address": no usable From, so
    the mail is recorded as ignored (no usable sender) and answered by nobody."""
    bot.deliver(plain_mail(LONG_ADDRESS, BOT, "help", "HELP", message_id="<long@x>"))
    bot.poll()
    assert bot.outbox() == []
    (row,) = bot.rows()
    assert row.status == "ignored" and "longer than mail allows" in row.detail


def test_the_gm_cannot_replace_a_seat_with_an_address_mail_cannot_carry(bot: Bot) -> None:
    """ "(or a GM REPLACE to one)": refused with the reason, nothing changes."""
    bot.deliver(
        plain_mail(
            GM,
            signed_address(BOT, SITE_SECRET, "rc1", "gm"),
            "replace",
            f"REPLACE rc1 roger {LONG_ADDRESS} Rog",
            message_id="<replace-long@x>",
        )
    )
    bot.poll()
    ((recipient, data),) = _mail_bytes(bot)
    assert recipient == GM and "the new address is longer than the 254 characters" in _text(data).replace("\n", " ")
    with bot.app.db.read() as session:
        assert session.scalar(select(Player.id).where(Player.address == LONG_ADDRESS)) is None


def test_address_to_one_mail_cannot_carry_is_refused_with_the_reason(bot: Bot) -> None:
    """ADDRESS <new address> checks the RFC 5321 lengths too, without repeating the address."""
    bot.deliver(
        plain_mail(
            ADDRESS["kelly"],
            bot.signed("kelly"),
            "move",
            "ADDRESS " + "k" * 70 + "@example.org",
            message_id="<address-long@x>",
        )
    )
    bot.poll()
    ((recipient, data),) = _mail_bytes(bot)
    assert "the part before the @ is longer than the 64 characters" in " ".join(_text(data).split())


# -- 4, 7: caps withhold answers, never actions or records ----------------------------------------


def _unsubscribe_code(bot: Bot, seat: str) -> str:
    """The code of the List-Unsubscribe of `seat`'s reminders (what a reminder carries)."""
    from bot.mail_out import lists

    with bot.app.db.read() as session:
        row = session.scalars(select(Seat).where(Seat.name == seat)).one()
        return lists.reminders_code(SITE_SECRET, "rc1", seat, row.player_id, row.reply_salt)


def test_the_bots_own_codes_are_acted_on_whatever_the_stranger_caps(bot: Bot) -> None:
    """ "After 50 forged stranger mails in an hour, a genuine List-Unsubscribe and a
    genuine ADDRESS confirmation are ignored": they are acted on, and recorded so."""
    bot.deliver(
        plain_mail(
            ADDRESS["kelly"], bot.signed("kelly"), "move", "ADDRESS kelly@new.example", message_id="<ask-move@x>"
        )
    )
    bot.poll()
    for n in range(60):
        bot.deliver(plain_mail(f"forged{n}@else.example", BOT, "hi", "what is this", message_id=f"<f{n}@x>"))
    bot.poll()
    assert sum(1 for r in bot.rows() if r.answer == "stranger hourly cap") == 10
    code = _unsubscribe_code(bot, "seb")
    bot.deliver(plain_mail(ADDRESS["seb"], BOT, f"unsubscribe {code}", "", message_id="<unsub@x>"))
    bot.confirm("kelly@new.example", message_id="<confirm-move@x>")
    bot.poll()
    with bot.app.db.read() as session:
        seb = session.scalars(select(Seat).where(Seat.name == "seb")).one()
        assert seb.reminders_off_for == seb.player_id
    rows = {r.message_id: r for r in bot.rows()}
    assert rows["unsub@x"].status == "applied" and "UNSUBSCRIBE reminders" in rows["unsub@x"].detail
    assert rows["confirm-move@x"].status == "applied" and "CONFIRM ADDRESS" in rows["confirm-move@x"].detail


def test_codes_are_acted_on_past_the_senders_loop_limit(bot: Bot) -> None:
    """The per-sender limit too: 35 forged mails "from" seb's address, then seb's genuine
    List-Unsubscribe from it: the reminders stop; only the answer is withheld, and recorded."""
    for n in range(35):
        bot.deliver(plain_mail(ADDRESS["seb"], BOT, f"Auto {n}", "away", message_id=f"<away{n}@x>"))
    bot.deliver(
        plain_mail(ADDRESS["seb"], BOT, f"unsubscribe {_unsubscribe_code(bot, 'seb')}", "", message_id="<unsub@x>")
    )
    bot.poll()
    with bot.app.db.read() as session:
        seb = session.scalars(select(Seat).where(Seat.name == "seb")).one()
        assert seb.reminders_off_for == seb.player_id
    row = next(r for r in bot.rows() if r.message_id == "unsub@x")
    assert row.status == "applied" and row.answer == "rate limit"


def test_an_autoresponder_loop_does_not_cost_the_player_their_order(bot: Bot) -> None:
    """ "after a player's own broken autoresponder drew 30 answers, the player's
    genuine order through the signed address that hour was ignored": it is applied, its answer
    withheld and recorded, and the digest counts the answers withheld."""
    for n in range(30):
        bot.deliver(
            plain_mail(
                ADDRESS["steve"], bot.signed("steve"), "Re: [rc1] Turn 1", f"I am away ({n})", message_id=f"<loop{n}@x>"
            )
        )
    bot.poll()
    bot.deliver(
        plain_mail(ADDRESS["steve"], bot.signed("steve"), "Re: [rc1] Turn 1", "USE 3", message_id="<genuine@x>")
    )
    bot.poll()
    assert bot.orders() == 1
    with bot.app.db.read() as session:
        assert session.scalars(select(OrderSubmission.text)).all() == ["USE 3"]
    row = bot.rows()[-1]
    assert (row.status, row.answer) == ("applied", "rate limit")
    assert len(bot.outbox()) == 30  # the loop's first 30 refusals, nothing after
    digest.send_due_digests(bot.app.shell, force=True)
    bot.service.send()
    text = _text(bot.outbox()[-1].data)
    assert "Mail not answered because a limit withheld the answer" in text
    assert "1: over the sender's loop limit" in text


# -- 5: ADDRESS moves only what its proof covers ---------------------------------------------------


def _second_game(bot: Bot) -> None:
    """rc3, in which kelly plays too (the same player, the same address)."""
    players = (
        PlayerSpec("kelly", ADDRESS["kelly"], "Kelly"),
        *(PlayerSpec(f"p{n}", f"p{n}@else.example", f"P{n}") for n in range(4)),
    )
    with bot.app.db.transaction() as session:
        create_game(
            bot.app.shell,
            session,
            kind="racecraft",
            name="rc3",
            players=players,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=3,
        )
    bot.service.send()


def _kelly_addresses(bot: Bot) -> dict[str, str]:
    with bot.app.db.read() as session:
        return {
            game: address
            for game, address in session.execute(
                select(Game.name, Player.address)
                .join(Seat, Seat.game_id == Game.id)
                .join(Player)
                .where(Seat.name == "kelly")
            )
        }


def test_one_seats_reply_address_moves_that_seat_alone_and_the_player_can_stop_it(bot: Bot) -> None:
    """ "Holding only the reply address of one game (a forwarded turn sheet), a thief
    sent ADDRESS thief@..., confirmed it, and then received the player's turn sheets for every other
    game": the move covers that seat only, the player is told before it takes effect, and STOP ends it."""
    _second_game(bot)
    start = len(bot.outbox())
    bot.deliver(
        plain_mail(
            "thief@evil.example", bot.signed("kelly"), "move", "ADDRESS thief@evil.example", message_id="<thief-ask@x>"
        )
    )
    bot.poll()
    told = [r for r in bot.outbox()[start:] if r.recipient == ADDRESS["kelly"]]
    assert len(told) == 1 and "STOP stop." in _text(told[0].data)
    assert "Your other games (rc3) stay at kelly@example.org" in " ".join(_text(told[0].data).split())
    stop_line = re.search(r"STOP (stop\.[a-z0-9.]+)", _text(told[0].data))
    assert stop_line is not None
    bot.confirm("thief@evil.example", message_id="<thief-confirm@x>")
    bot.poll()
    assert _kelly_addresses(bot) == {"rc1": ADDRESS["kelly"], "rc3": ADDRESS["kelly"]}  # the hold
    # Kelly stops it from her own address, as the note says.
    bot.deliver(
        plain_mail(
            ADDRESS["kelly"],
            BOT,
            "Re: Confirm your new address",
            f"STOP {stop_line.group(1)}",
            message_id="<kelly-stop@x>",
        )
    )
    bot.poll()
    bot.clock.advance(hours=25)
    bot.service.tick()
    assert _kelly_addresses(bot) == {"rc1": ADDRESS["kelly"], "rc3": ADDRESS["kelly"]}
    assert "an address change was stopped" in " ".join(r.subject for r in bot.outbox() if r.recipient == GM)


def test_a_move_through_one_seat_takes_that_seat_after_the_hold_and_nothing_else(bot: Bot) -> None:
    """Not stopped, the move is made when the hold is over: rc1's seat goes to the new address,
    rc3's stays, and later rc3 mail (with its reply address) goes to the old address only."""
    _second_game(bot)
    bot.deliver(
        plain_mail(
            "thief@evil.example", bot.signed("kelly"), "move", "ADDRESS thief@evil.example", message_id="<thief-ask@x>"
        )
    )
    bot.poll()
    bot.confirm("thief@evil.example")
    bot.poll()
    bot.clock.advance(hours=24)
    bot.service.tick()
    assert _kelly_addresses(bot) == {"rc1": "thief@evil.example", "rc3": ADDRESS["kelly"]}
    rc3_reply = signed_address(BOT, SITE_SECRET, "rc3", "kelly")
    mail_to_thief = b"".join(r.data for r in bot.outbox() if r.recipient == "thief@evil.example")
    assert rc3_reply.encode() not in mail_to_thief


def test_a_mail_our_server_vouches_for_moves_every_seat(bot: Bot) -> None:
    """DMARC proves the From itself, so ADDRESS moves every seat of the player (after the hold)."""
    _second_game(bot)
    bot.deliver(
        plain_mail(
            ADDRESS["kelly"],
            BOT,
            "move",
            "ADDRESS kelly@new.example",
            message_id="<dmarc-ask@x>",
            headers={"Authentication-Results": f"{AUTHSERV}; dmarc=pass header.from=example.org"},
        )
    )
    bot.poll()
    bot.confirm("kelly@new.example")
    bot.poll()
    bot.clock.advance(hours=24)
    bot.service.tick()
    assert _kelly_addresses(bot) == {"rc1": "kelly@new.example", "rc3": "kelly@new.example"}


# -- 6: JOIN is double opt-in; names are checked before they are shown ------------------------------


def _signup(bot: Bot) -> None:
    with bot.app.db.transaction() as session:
        create_game(
            bot.app.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=(),
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            signup=True,
            seed=3,
        )


def test_a_forged_join_makes_no_seat_and_relays_nothing(bot: Bot) -> None:
    """ "a JOIN with a spam name into an open game sends the forged address a
    welcome greeting it by that name, subject included; the GM's notice carries it too": the From
    gets one code mail that names nobody; no seat, no GM notice until the address answers."""
    _signup(bot)
    bot.deliver(
        plain_mail("victim@else.example", BOT, "join", "JOIN rc2 Cheap Pills Online", message_id="<join-spam@x>")
    )
    bot.poll()
    (row,) = bot.outbox()
    assert row.recipient == "victim@else.example" and row.subject.startswith("[confirm join.")
    assert "Pills" not in _text(row.data) and "Pills" not in row.subject
    with bot.app.db.read() as session:
        assert session.scalars(select(Seat).join(Game).where(Game.name == "rc2")).all() == []
    assert [r for r in bot.recipients() if r == GM] == []


def test_a_join_answered_from_its_address_makes_the_seat(bot: Bot) -> None:
    """The reply to the code mail makes the seat under the name given; the welcome and the GM's
    notice follow; the same code again makes nothing more."""
    _signup(bot)
    bot.deliver(plain_mail("kim@else.example", BOT, "join", "JOIN rc2 Kim Lee", message_id="<join-kim@x>"))
    bot.poll()
    bot.confirm("kim@else.example", message_id="<kim-yes@x>")
    bot.poll()
    with bot.app.db.read() as session:
        (seat,) = session.scalars(select(Seat).join(Game).where(Game.name == "rc2")).all()
        assert (seat.name, seat.player.name) == ("kim-lee", "Kim Lee")
    welcome = [r for r in bot.outbox() if r.recipient == "kim@else.example" and "Welcome" in r.subject]
    assert len(welcome) == 1
    assert any("kim-lee joined rc2" in r.subject for r in bot.outbox() if r.recipient == GM)
    bot.confirm("kim@else.example", message_id="<kim-yes-again@x>")
    bot.poll()
    with bot.app.db.read() as session:
        assert len(session.scalars(select(Seat).join(Game).where(Game.name == "rc2")).all()) == 1


def test_a_name_that_is_a_link_is_refused_without_being_repeated(bot: Bot) -> None:
    """Names are checked (length, characters, no links) before they are echoed anywhere."""
    _signup(bot)
    for n, name in enumerate(
        ["visit www.spam.example now", "http://spam.example", "Kim <b>", "A" * 41, "one two three four five"]
    ):
        bot.deliver(plain_mail(f"k{n}@else.example", BOT, "join", f"JOIN rc2 {name}", message_id=f"<bad{n}@x>"))
    bot.poll()
    for row in bot.outbox():
        assert row.subject == "[ERROR] [rc2] That name cannot be used"
        assert "spam" not in _text(row.data) and "<b>" not in _text(row.data)


# -- 8: DKIM alignment by organizational domain -----------------------------------------------------


def test_dkim_alignment_is_by_organizational_domain() -> None:
    """ "a DKIM pass for d=test counts as aligned with kelly@x.test". By the Public
    Suffix List (RFC 7489 3.2): a public suffix owns nothing; a subdomain aligns with its parent."""

    def passes(d: str, sender: str) -> bool:
        return authentication_passes([AuthResult(AUTHSERV, None, (d,), None)], AUTHSERV, sender)

    assert not passes("test", "kelly@x.test")
    assert not passes("co.uk", "kelly@foo.co.uk")
    assert not passes("github.io", "kelly@someone.github.io")
    assert not passes("other.github.io", "kelly@someone.github.io")
    assert passes("mail.example.org", "kelly@example.org")
    assert passes("example.org", "kelly@lists.example.org")
    assert passes("x.test", "kelly@x.test")
    assert organizational_domain("a.b.foo.co.uk") == "foo.co.uk"


# -- the property: hostile mail of every shape ------------------------------------------------------

_LINES = st.sampled_from(
    [
        "HELP",
        "LIST",
        "RULES rc1",
        "RULES nosuch",
        "OBSERVE rc1",
        "UNOBSERVE",
        "STATUS",
        "ORDERS",
        "USE 1",
        "USE 99",
        "CRUISE",
        "JOIN rc1 Spam Name",
        "JOIN rc2",
        "EXTEND rc1 1h",
        "PING",
        "CONFIRM observe.rc1.1.aaaaaaaaaaaaaaaa",
        "STOP stop.1.1.aaaaaaaaaaaaaaaa",
        "UNSUBSCRIBE o.rc1.aaaaaaaaaaaaaaaa",
        "ADDRESS x@else.example",
        "hello",
        "x" * 300,
        "PRESS rc1 ALL",
        "TIMEZONE Mars/Base",
        "VACATION 2026-01-01 2026-01-02",
        "RESIGN rc9",
    ]
)
_SENDERS = st.sampled_from(["stranger@else.example", ADDRESS["kelly"], ADDRESS["seb"], GM, "other@else.example"])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    mails=st.lists(
        st.tuples(
            _SENDERS,
            st.sampled_from(["plain", "kelly", "gm"]),
            st.lists(st.tuples(_LINES, st.integers(1, 300)), min_size=1, max_size=6),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_hostile_mail_gets_answers_under_the_caps_and_one_recorded_outcome_each(
    make_bot: Callable[..., Bot], mails: list[tuple[str, str, list[tuple[str, int]]]]
) -> None:  # a fixture factory
    """Property: whatever the mail, every answer is under its cap (an unproven sender's
    under the stranger cap), no answer is bigger than the mail that caused it plus a sheet's worth,
    and every mail ends in exactly one recorded outcome (applied, refused or ignored), none quarantined."""
    bot = make_bot()
    sizes: dict[str, int] = {}
    for n, (sender, door, lines) in enumerate(mails):
        to = {"plain": BOT, "kelly": bot.signed("kelly"), "gm": signed_address(BOT, SITE_SECRET, "rc1", "gm")}[door]
        body = "\n".join(line for line, times in lines for _ in range(times))
        data = plain_mail(sender, to, "hostile", body, message_id=f"<h{n}@x>")
        sizes[f"h{n}@x"] = len(data)
        bot.deliver(data)
    bot.poll()
    rows = bot.rows()
    assert sorted(r.message_id for r in rows) == sorted(sizes)
    assert all(r.status in (InboundStatus.APPLIED, InboundStatus.REFUSED, InboundStatus.IGNORED) for r in rows)
    assert bot.quarantined() == []
    proven = {ADDRESS["kelly"], GM}
    for row in bot.outbox():
        if b"In-Reply-To:" not in row.data:
            continue  # not an answer: a sheet or a notice to a third party
        cap = ANSWER_BYTES if row.recipient in proven or row.recipient in ADDRESS.values() else STRANGER_ANSWER_BYTES
        assert len(row.data) <= cap, (row.recipient, row.subject, len(row.data))
