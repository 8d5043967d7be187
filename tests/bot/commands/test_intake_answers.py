"""The answers of the intake and the commands that a demanding GM and players found wrong:
each says what is true, once, and nothing the GM must not read as a fault.
mail-interface.md: "One answer per mail"; "Every statement about the next resolution (...
whether the turn is open, paused or waiting ...) comes from one computation that the tick
itself uses"; "Greetings, thanks and sign-offs ... are ignored quietly or answered without an
error tag"."""

from __future__ import annotations

import re

from sqlalchemy import select

from bot.models import GmAttention, InboundMessage
from bot.testing import TestApp, plain_mail, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, GM, body_of, cycle, gm_says, last, mails, player_says

gapp, rc = gm_helpers.gapp, gm_helpers.rc


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_status_of_a_paused_game_shows_no_deadline_and_says_the_gm_resumes_it(rc: TestApp) -> None:
    """Finding 4 (critical): STATUS showed a deadline while the game was paused. The tick does
    not resolve a paused game: no deadline runs until the GM resumes it."""
    gm_says(rc, "PAUSE rc1")
    player_says(rc, "seb", "STATUS")
    text = _flat(body_of(last(rc, ADDRESS["seb"])))
    assert "Deadline:" not in text
    assert "The game is paused: no deadline runs. The GM resumes it" in text


def test_resign_with_a_friendly_line_gets_one_answer(rc: TestApp) -> None:
    """ "RESIGN rc1" and "Sorry all, it was fun. Thanks!" got the resignation and a second mail,
    "[ERROR] No orders needed": one answer per mail, the resignation's."""
    before = len(mails(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "RESIGN rc1\nSorry all, it was fun. Thanks!")
    answers = mails(rc, ADDRESS["kelly"])[before:]
    assert [str(m["Subject"]) for m in answers] == ["[rc1] You have resigned from rc1"]


def test_a_farewell_beside_resign_reaches_the_gm(rc: TestApp) -> None:
    """docs/DESIGN.md 10, words for the GM: a farewell is passed on to the GM. "RESIGN rc1" with
    "Sorry all, it was fun." was answered once (above) and the words reached nobody: the GM's
    mail about the resignation carries them (one mail: it came as a second mail beside "kelly
    resigned from rc1"), and the digest lists them."""
    before = len(mails(rc, GM))
    player_says(rc, "kelly", "RESIGN rc1\nSorry all, it was fun.\nThanks!")
    new = mails(rc, GM)[before:]
    assert [str(m["Subject"]) for m in new] == ["[rc1] kelly resigned from rc1"], [str(m["Subject"]) for m in new]
    told = words_of(new[0])
    assert "resigned: kelly is out of rc1" in told and "> Sorry all, it was fun." in told, told
    with rc.db.read() as session:
        notes = list(session.scalars(select(GmAttention.text)))
    assert any("Sorry all, it was fun." in note for note in notes), notes


def test_a_farewell_reaches_the_other_players_where_the_games_press_is_on(rc: TestApp) -> None:
    """mail-interface.md: the game's press setting (PRESS none/signed/anonymous) decides whether
    players see each other's words. seb's "It was fun, thanks all. Bye!" beside RESIGN reached
    the GM alone; with press on, the others' "seb has resigned" quotes it (at most 12 lines,
    each one printable line of at most 200 characters); with press off it does not, and the
    GM's one mail about the resignation says whether it was passed on."""
    before = len(mails(rc, GM))
    player_says(rc, "seb", "RESIGN rc1\nIt was fun, thanks all. Bye!")
    kelly = words_of(last(rc, ADDRESS["kelly"]))
    assert "seb left these words for everyone: > It was fun, thanks all. Bye!" in kelly, kelly
    (to_gm,) = mails(rc, GM)[before:]
    assert "The other players were told them with the resignation" in words_of(to_gm)
    long_farewell = "\n".join(f"Line {n}\x07 of my goodbye, with a bell " + "x" * 300 for n in range(20))
    player_says(rc, "roger", "RESIGN rc1\nDear all, I have to stop here.\n" + long_farewell)
    quoted = [line for line in body_of(last(rc, ADDRESS["kelly"])).splitlines() if line.lstrip().startswith(">")]
    assert quoted[-1].strip().endswith("more lines not shown]"), quoted
    assert all((len(line) <= 78 or len(line.split()) == 2) and "\x07" not in line for line in quoted), quoted
    # The quote's lines are broken to 78 columns: what it quotes is at most 12 lines of the
    # farewell, each cut to 200 characters.
    said = " ".join(line.strip()[1:].strip() for line in quoted[:-1])
    shown = re.split(r" (?=Line \d+ of my goodbye)", said)
    assert 1 < len(shown) <= 12 and all(len(line) <= 200 for line in shown), shown
    with rc.db.transaction() as session:
        gm_helpers.game_row(rc)  # the game exists
        from bot.store import find_game_row

        game = find_game_row(session, "rc1")
        assert game is not None
        game.press = "none"
    before = len(mails(rc, GM))
    player_says(rc, "steve", "RESIGN rc1\nSo long, everyone.")
    kelly = body_of(last(rc, ADDRESS["kelly"]))
    assert "steve has given up the seat" in " ".join(kelly.split()) and "So long" not in kelly, kelly
    (to_gm,) = mails(rc, GM)[before:]
    told = words_of(to_gm)
    assert "> So long, everyone." in told and "not passed on to the other players" in told, told


def test_a_command_without_its_game_is_told_what_it_needs_not_that_it_was_not_understood(rc: TestApp) -> None:
    """ "RESIGN" alone is understood as RESIGN: the answer names it and says what it needs (the
    game); a line that is no command is still "Command not understood"."""
    player_says(rc, "kelly", "RESIGN")
    answer = last(rc, ADDRESS["kelly"])
    assert str(answer["Subject"]) == "[ERROR] [rc1] Incomplete command: RESIGN"
    assert '"RESIGN": write RESIGN <game>, e.g. RESIGN rc1' in body_of(answer)


def test_a_gms_chatty_lines_are_not_listed_as_not_understood(rc: TestApp) -> None:
    """ "thanks!" and "cheers" among a GM's commands were listed as "not understood"."""
    before = len(mails(rc, GM))
    gm_says(rc, "PAUSE rc1\nthanks!\ncheers")
    answers = mails(rc, GM)[before:]
    assert [str(m["Subject"]) for m in answers] == ["[rc1] GM: PAUSE done"]
    gm_says(rc, "Thanks!")
    assert len(mails(rc, GM)) == before + 1  # a GM's thank-you alone: nothing to answer
    with rc.db.read() as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert row is not None and (row.status, row.reason) == ("ignored", "note")


def test_a_wrong_password_is_named_as_wrong(rc: TestApp) -> None:
    """A mail to the plain address from Kelly's own address with a PASSWORD line that is not
    hers: refused (to her registered address), and the refusal says the password is wrong."""
    rc.inbox.deliver(plain_mail(ADDRESS["kelly"], BOT, "[rc1] orders", "PASSWORD nottheone\nUSE 3"))
    cycle(rc)
    text = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert "It carried a PASSWORD line, but that password is wrong" in text
    rc.inbox.deliver(plain_mail(ADDRESS["seb"], BOT, "[rc1] orders", "USE 3"))
    cycle(rc)
    assert "password is wrong" not in _flat(body_of(last(rc, ADDRESS["seb"])))


def test_a_gms_status_is_answered_with_the_digests_block_for_the_game(rc: TestApp) -> None:
    """A GM's "STATUS rc1" was refused ("Lines not understood": a false reason). It is answered
    with the game's block as the digest shows it, paused or not."""
    gm_says(rc, "STATUS rc1")
    answer = last(rc, GM)
    text = body_of(answer)
    assert not str(answer["Subject"]).startswith("[ERROR]")
    assert "== rc1 (Racecraft): active ==" in text and "Open: Turn 1 of 5: start, due" in text
    assert "No orders yet:  anna, kelly, roger, seb, steve." in text
    gm_says(rc, "PAUSE rc1")
    gm_says(rc, "STATUS")
    text = _flat(body_of(last(rc, GM)))
    assert "PAUSED: no deadline runs; RESUME rc1 sets a new one" in text and ", due" not in text


def test_a_two_game_players_mail_without_proof_names_both_games_and_says_what_follows(rc: TestApp) -> None:
    """A player in two games mailed STATUS, then ORDERS, to the plain address: the first was
    answered for one game only, the second not at all, and no mail said why. mail-interface.md:
    a mail claiming a registered address is answered at that address, once a day (forged mail
    must not flood a player); the one answer says so, and names the player's other game."""
    _second_game(rc)
    before = len(mails(rc, ADDRESS["kelly"]))
    rc.inbox.deliver(plain_mail(ADDRESS["kelly"], BOT, "status?", "STATUS"))
    cycle(rc)
    rc.inbox.deliver(plain_mail(ADDRESS["kelly"], BOT, "orders?", "ORDERS"))
    cycle(rc)
    answers = mails(rc, ADDRESS["kelly"])[before:]
    assert len(answers) == 1
    text = _flat(body_of(answers[0]))
    assert "For sp1, reply to a mail of the bot for that game instead." in text
    assert "Until tomorrow, further mails from your address without proof are not answered" in text
    with rc.db.read() as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        assert row is not None and row.status == "ignored"


def _second_game(rc: TestApp, timezone: str = "Europe/London") -> None:
    """SpeedPhreakz sp1 beside rc1: the same GM, and Kelly in both."""
    from bot.games.turns import PlayerSpec, create_game

    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=[PlayerSpec("kelly", ADDRESS["kelly"], "Kelly"), PlayerSpec("bob", "bob@example.org", "Bob")],
            gm_address=GM,
            deadline="48h",
            timezone=timezone,
            seed=7,
        )
    rc.service.send()


def test_a_gms_answer_to_a_mail_touching_two_games_names_both(rc: TestApp) -> None:
    """ "EXTEND rc2 24h / PAUSE sp2" was answered "[rc2] Answers to your mail": the header named
    one game of the two the GM's mail acted on."""
    _second_game(rc)
    before = len(mails(rc, GM))
    gm_says(rc, "EXTEND rc1 24h\nPAUSE sp1")
    answers = mails(rc, GM)[before:]
    assert [str(m["Subject"]) for m in answers] == ["[rc1, sp1] Answers to your mail"]
    gm_says(rc, "EXTEND rc1 24h\nPAUSE rc1")
    assert str(last(rc, GM)["Subject"]) == "[rc1] Answers to your mail"


def test_a_gms_answer_over_games_in_two_zones_says_each_games_zone(rc: TestApp) -> None:
    """Each GM answer shows its game's times in that game's zone, with the zone's name. Played
    by mail (playtest5 G4): one answer over rcg (New York) and spg (London) showed "... 04:00
    EST" above a footer "Times are shown in Europe/London". The footer names each game's zone."""
    _second_game(rc, timezone="America/New_York")
    gm_says(rc, "EXTEND rc1 24h\nEXTEND sp1 24h")
    text = words_of(last(rc, GM))
    assert "GMT" in text and "EST" in text, text
    assert "Times are shown in each game's zone: America/New_York (sp1), Europe/London (rc1)." in text, text
    # The sign-off is filled to 78 columns like every line of a letter (playtest6: 118 and 128).
    lines = body_of(last(rc, GM)).splitlines()
    signed = "\n".join(lines[[line.rstrip() for line in lines].index("--") + 1 :])
    assert all(len(line) <= 78 for line in signed.splitlines()), signed
    gm_says(rc, "EXTEND rc1 24h\nPAUSE rc1")
    assert "Times are shown in Europe/London." in words_of(last(rc, GM))
