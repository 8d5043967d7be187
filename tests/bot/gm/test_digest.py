"""The GM's daily digest (mail-interface.md, "The digest"): once a day at the GM's local time;
every game of theirs in whatever state; who has orders on file and who has not, never what;
NMR streaks; what was refused, bounced, failed or quarantined since the last digest; the GM
command syntax with one example each."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.commands import GM_COMMANDS
from bot.games.turns import PlayerSpec, create_game
from bot.gm import digest
from bot.mail_out.mailer import SendStatus
from bot.models import GameStatus, Quarantine
from bot.store import find_game_row
from bot.testing import FakeMailer, TestApp, plain_mail, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    BOT,
    GM,
    START,
    body_of,
    cycle,
    gm_says,
    mails,
    player_says,
)
from tests.helpers import fake_inbox, moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def digests(app: TestApp, to: str = GM) -> list[str]:
    return [body_of(m) for m in mails(app, to) if "GM digest" in str(m["Subject"])]


def send(app: TestApp, *, force: bool = False) -> int:
    count = digest.send_due_digests(app.shell, force=force)
    app.service.send()
    return count


def seats(prefix: str, n: int = 5) -> tuple[PlayerSpec, ...]:
    return tuple(PlayerSpec(f"{prefix}{i}", f"{prefix}{i}@example.net", f"{prefix.title()}{i}") for i in range(n))


@pytest.fixture
def world(rc: TestApp) -> TestApp:
    """rc1 running (seb ordered), rc2 open for sign-ups, rc3 paused, rc4 finished today, and
    rc9 of another GM; then every kind of odd mail."""
    shell = rc.shell
    with rc.db.transaction() as session:
        create_game(
            shell,
            session,
            kind="racecraft",
            name="rc2",
            players=seats("s", 2),
            gm_address=GM,
            deadline="48h",
            signup=True,
            seed=2,
        )
        create_game(
            shell, session, kind="racecraft", name="rc3", players=seats("p"), gm_address=GM, deadline="48h", seed=3
        )
        create_game(
            shell, session, kind="racecraft", name="rc4", players=seats("f"), gm_address=GM, deadline="48h", seed=4
        )
        create_game(
            shell,
            session,
            kind="racecraft",
            name="rc9",
            players=seats("o"),
            gm_address="other@example.org",
            deadline="48h",
            seed=9,
        )
    rc.service.send()
    gm_says(rc, "PAUSE rc3", game="rc3")
    for _ in range(8):
        gm_says(rc, "PROCESS rc4", game="rc4")
    with rc.db.read() as session:
        game = find_game_row(session, "rc4")
        assert game is not None and game.status == GameStatus.FINISHED
    player_says(rc, "seb", "USE 6")
    player_says(rc, "kelly", "USE 11")  # refused
    fake_inbox(rc).deliver(plain_mail("stranger@example.com", BOT, "hi", "what is this?"))
    fake_inbox(rc).deliver(plain_mail(ADDRESS["anna"], BOT, "[rc1] orders", "USE 1"))
    fake_inbox(rc).deliver(
        plain_mail(
            "MAILER-DAEMON@mx.example.com",
            BOT,
            "Undelivered Mail Returned to Sender",
            "Your message could not be delivered.",
        )
    )
    assert isinstance(rc.mailer, FakeMailer)
    rc.mailer.answers[ADDRESS["roger"]] = SendStatus.PERMANENT
    gm_says(rc, "EXTEND rc1 1h")  # an announcement that fails for roger
    with rc.db.transaction() as session:
        session.add(
            Quarantine(
                mailbox_key="42",
                message_id="<crash@client.example>",
                raw=b"",
                error="Traceback...\nKeyError: 'boom'",
                created_at=rc.shell.now(),
                reported=False,
            )
        )
    cycle(rc)
    return rc


def test_the_digest_covers_every_game_of_the_gm_in_every_state(world: TestApp) -> None:
    """Running, open for sign-ups, paused and just finished games, and no other GM's game."""
    assert send(world, force=True) == 2  # our GM and the other one
    body = digests(world)[-1]
    assert "== rc1 (Racecraft): active ==" in body
    assert "== rc2 (Racecraft): signup ==" in body and "Open for sign-ups: 2 joined" in body
    assert "== rc3 (Racecraft): paused ==" in body and "PAUSED" in body
    assert "== rc4 (Racecraft): finished ==" in body and "Finished. Result:" in body
    assert "rc9" not in body
    assert "rc9" in digests(world, "other@example.org")[-1]


def test_the_digest_says_who_has_orders_on_file_but_never_what(world: TestApp) -> None:
    body = digests(world)[-1] if send(world, force=True) else ""
    section = body.split("== rc1")[1].split("== rc2")[0]
    assert "Orders on file: seb." in section
    assert "No orders yet:  anna, kelly, roger, steve." in section
    assert "USE 6" not in body


def test_the_digest_lists_streaks_refusals_strangers_bounces_failed_sends_and_quarantine(world: TestApp) -> None:
    send(world, force=True)
    body = digests(world)[-1]
    assert "NMR streaks:" in body.split("== rc4")[1]  # the finished game defaulted everyone
    refused = body.split("Mail refused:")[1].split("\n\n")[0]
    assert ADDRESS["kelly"] in refused
    assert "stranger@example.com" in body.split("Unknown senders:")[1].split("\n\n")[0]
    assert ADDRESS["anna"] in body.split("Failed authentication")[1].split("\n\n")[0]
    assert "mailer-daemon@mx.example.com" in body.split("Bounces:")[1].split("\n\n")[0].lower()
    assert ADDRESS["roger"] in body.split("Mail that could not be sent:")[1].split("\n\n")[0]
    assert "<crash@client.example>" in body and "KeyError: 'boom'" in body


def test_the_digest_ends_with_every_gm_command_and_an_example(world: TestApp) -> None:
    send(world, force=True)
    body = digests(world)[-1]
    said = " ".join(body.split())  # the digest's lines are broken to 78 columns
    for spec in GM_COMMANDS:
        assert spec.syntax in said and f"e.g. {spec.example}" in said
    assert "rc1.gm." in body  # the GM reply address of each game


def test_the_digest_goes_once_a_day_at_the_gms_local_time(rc: TestApp) -> None:
    """digest_time (08:00) in the GM's zone (the game's, Europe/London); once per local day."""
    moving_clock(rc).set(START.replace(hour=7, minute=59) + timedelta(days=1))
    assert send(rc) == 0
    moving_clock(rc).advance(minutes=1)
    assert send(rc) == 1
    moving_clock(rc).advance(minutes=10)
    assert send(rc) == 0
    moving_clock(rc).advance(hours=23, minutes=50)
    assert send(rc) == 1
    assert len(digests(rc)) == 2


def test_the_digest_follows_the_gms_zone_in_summer(gapp: TestApp) -> None:
    """In June, 08:00 London is 07:00 UTC."""
    from datetime import UTC, datetime

    from tests.bot.gm_helpers import RACERS

    moving_clock(gapp).set(datetime(2026, 6, 1, 6, 59, tzinfo=UTC))
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=RACERS,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=1,
        )
    assert send(gapp) == 0
    moving_clock(gapp).advance(minutes=1)
    assert send(gapp) == 1


def test_since_the_last_digest_only_new_things_are_listed(rc: TestApp) -> None:
    """The second digest does not repeat what the first reported."""
    player_says(rc, "kelly", "USE 11")
    send(rc, force=True)
    assert ADDRESS["kelly"] in digests(rc)[-1].split("Mail refused:")[1]
    moving_clock(rc).advance(days=1)
    send(rc, force=True)
    assert "Mail refused:" not in digests(rc)[-1]
    assert "no mail refused, bounced, failed or quarantined" in digests(rc)[-1]


def test_no_digest_for_a_gm_without_running_games(gapp: TestApp) -> None:
    assert send(gapp, force=True) == 0


def test_the_digest_says_whether_early_resolution_is_on(world: TestApp) -> None:
    """Early resolution shown to the GM in the digest, as it is set for each game."""
    with world.db.transaction() as session:
        game = find_game_row(session, "rc3")
        assert game is not None
        game.early_resolution = False
    assert send(world, force=True) == 2
    body = digests(world)[-1]
    rc1 = body.split("== rc1 ", 1)[1].split("== ", 1)[0]
    rc3 = body.split("== rc3 ", 1)[1].split("== ", 1)[0]
    assert "Early resolution: on (the turn resolves as soon as every order is in)" in rc1
    assert "Early resolution: off (turns wait for the deadline)" in rc3


def test_the_digest_lists_what_was_done_with_gm_powers_since_the_last_one(world: TestApp) -> None:
    """Every GM command since the last digest is listed, with how it came and what it
    did (as `gm audit` lists them); the first digest says it is the first, not "since the last
    digest"; the next lists only what came after."""
    assert send(world, force=True) == 2
    first = digests(world)[-1]
    assert "this is your first digest" in first and "Since the last digest" not in first
    actions = first.split("What you did with the GM commands", 1)[1].split("\n\n", 1)[0]
    assert "[rc3] PAUSE rc3 (mail): done" in actions and "[rc1] EXTEND rc1 1h (mail): done" in actions
    assert "rc9" not in actions
    moving_clock(world).advance(hours=1)
    gm_says(world, "RESUME rc3", game="rc3")
    assert send(world, force=True) == 2
    second = digests(world)[-1]
    assert "Since the last digest" in second
    later = second.split("What you did with the GM commands", 1)[1].split("\n\n", 1)[0]
    assert "RESUME rc3" in later and "PAUSE rc3" not in later


def test_a_reply_to_the_digest_commands_every_game_it_covers(world: TestApp) -> None:
    """ "a digest covering three games says 'reply to this mail', but its reply
    address proves the GM of one; EXTEND sp1 24h came back 'not understood'". A reply to the digest
    from the GM's registered address is a GM command for any of the GM's running games."""
    send(world, force=True)
    (digest_mail,) = [m for m in mails(world, GM) if "GM digest" in str(m["Subject"])]
    from bot.testing import reply_to

    fake_inbox(world).deliver(reply_to(digest_mail, "RESUME rc3\nEXTEND rc2 24h", sender=GM))
    cycle(world)
    with world.db.read() as session:
        rc3 = find_game_row(session, "rc3")
        assert rc3 is not None and rc3.status == GameStatus.ACTIVE
    answer = mails(world, GM)[-1]  # one answer, in sections: RESUME done, EXTEND refused (rc2 not started)
    assert "GM: RESUME done" in body_of(answer) and "GM: EXTEND refused" in body_of(answer)
    # The same reply address from another address commands nothing (the GM's From is the second proof).
    fake_inbox(world).deliver(reply_to(digest_mail, "PAUSE rc3", sender="mallory@evil.example"))
    cycle(world)
    with world.db.read() as session:
        rc3 = find_game_row(session, "rc3")
        assert rc3 is not None and rc3.status == GameStatus.ACTIVE


def test_a_typo_in_a_gm_verb_in_a_longer_mail_gets_a_did_you_mean(rc: TestApp) -> None:
    """A typo'd GM verb in a longer mail gets its did-you-mean."""
    gm_says(rc, "PAUSE rc1\nEXTNED rc1 24h")
    text = words_of(mails(rc, GM)[-1])
    assert "PAUSE done" in text and "EXTEND" in text and "did you mean" in text.lower()


def test_the_digest_says_who_holds_a_turn_with_wait(rc: TestApp) -> None:
    """WAIT is "shown in STATUS and to the GM": the players are not told who holds the
    turn, the GM's digest is."""
    player_says(rc, "kelly", "WAIT")
    assert send(rc, force=True) >= 1
    section = digests(rc)[-1].split("== rc1")[1]
    assert "Held to its deadline (WAIT): kelly" in section


def test_a_digest_with_nothing_to_list_says_so_under_its_heading(rc: TestApp) -> None:
    """The first digest of a quiet game said "In the last day (this is your first digest; ...):"
    over an empty section. A heading is never printed over nothing: when no GM command was given
    and no mail was refused, bounced, failed or quarantined, the heading says nothing happened;
    the next one, the same."""
    send(rc, force=True)
    first = digests(rc)[-1]
    heading = " ".join(first.replace("\r\n", "\n").split("In the last day", 1)[1].split("\n\n", 1)[0].split())
    heading = "In the last day " + heading
    assert "this is your first digest" in heading and heading.endswith(
        "nothing happened yet: no GM commands, and no mail refused, bounced, failed or quarantined."
    ), heading
    moving_clock(rc).advance(days=1)
    send(rc, force=True)
    second = digests(rc)[-1]
    heading = "Since the last digest " + " ".join(
        second.replace("\r\n", "\n").split("Since the last digest", 1)[1].split("\n\n", 1)[0].split()
    )
    assert heading.endswith("nothing happened: no GM commands, and no mail refused, bounced, failed or quarantined."), (
        heading
    )
    for text in (first, second):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.endswith(":") and not line.startswith(" "):
                assert lines[i + 1].strip(), f"heading {line!r} over nothing:\n{text}"


def test_what_you_did_quotes_a_gm_commands_answer_line_by_line_and_bounded(rc: TestApp) -> None:
    """The digest's "What you did": an answer of several lines keeps its lines, each quoted
    under the command ("> USE 2" and "kelly was told." were one flattened line); an answer of
    one line stays beside the command; a long answer is cut to its first lines and says how
    many more `flagman gm audit` has."""
    from bot.models import GmAudit

    gm_says(rc, "ORDER rc1 kelly USE 2")
    gm_says(rc, "SET rc1 roger ep 12")
    with rc.db.transaction() as session:
        row = find_game_row(session, "rc1")
        assert row is not None
        session.add(
            GmAudit(
                game_id=row.id,
                actor=GM,
                via="cli",
                message_id="",
                command="NOTE rc1",
                outcome="done: many lines:\n" + "\n".join(f"line {n}" for n in range(1, 40)) + "\n" + "x" * 5000,
                created_at=moving_clock(rc).now(),
            )
        )
    send(rc, force=True)
    text = digests(rc)[-1].replace("\r\n", "\n")
    actions = text.split("What you did with the GM commands", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    order = actions.index(next(a for a in actions if "ORDER rc1 kelly USE 2 (mail):" in a))
    assert actions[order].endswith("ORDER rc1 kelly USE 2 (mail):"), actions
    quoted = actions[order + 1 : actions.index(next(a for a in actions if "SET rc1 roger ep 12" in a))]
    assert quoted[0].startswith("      > done: entered for kelly"), quoted
    assert "      >     > USE 2" in quoted and "      > kelly was told." in quoted, quoted
    assert all(line.startswith("      > ") for line in quoted), quoted
    refused = actions.index(next(a for a in actions if "SET rc1 roger ep 12" in a))
    assert " ".join(" ".join(actions[refused : refused + 2]).split()).endswith(
        "(mail): refused: ep must be a whole number from 0 to 10, not '12'"
    )
    long = actions[actions.index(next(a for a in actions if "NOTE rc1 (cli):" in a)) + 1 :]
    assert long[: digest.ANSWER_LINES] == ["      > done: many lines:"] + [f"      > line {n}" for n in range(1, 12)]
    assert long[digest.ANSWER_LINES] == "      > [29 more lines: flagman gm audit rc1]", long
    assert all(len(line) <= 210 for line in actions), actions


def test_the_first_digest_listing_an_older_finish_says_what_its_list_holds(rc: TestApp) -> None:
    """mail-interface.md, "The digest": a finished game is listed in the first digest after it
    finished. The GM's first digest looks back a day; where it lists a finish older than that,
    what it lists as happened reaches back to that finish, and its heading says so (it said "In
    the last day" over a game that finished days before, and left out what came since)."""
    with rc.db.transaction() as session:
        create_game(
            rc.shell, session, kind="racecraft", name="rc4", players=seats("f"), gm_address=GM, deadline="48h", seed=4
        )
    rc.service.send()
    for _ in range(8):
        gm_says(rc, "PROCESS rc4", game="rc4")
    with rc.db.read() as session:
        game = find_game_row(session, "rc4")
        assert game is not None and game.status == GameStatus.FINISHED
    moving_clock(rc).advance(hours=10)
    gm_says(rc, "PAUSE rc1")  # after rc4's finish, more than a day before the digest
    moving_clock(rc).advance(hours=40)
    send(rc, force=True)
    first = " ".join(digests(rc)[-1].split())
    assert "== rc4 (Racecraft): finished ==" in first
    assert "In the last day" not in first, "rc4 finished two days before"
    assert "Since rc4 finished, " in first and "(this is your first digest):" in first, first
    assert "PAUSE rc1 (mail): done" in first
