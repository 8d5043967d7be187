"""Judge-level self-service by mail, through the real pipeline: mail
in through the intake, mail out through the outbox (fakes for the inbox and the mailer).

mail-interface.md, "Player commands": "For anyone, also strangers: HELP, LIST (the games, open
ones first), RULES <game>, OBSERVE <game> / UNOBSERVE <game> (results by mail, read-only). For
players: PRESS <game> ALL|<seat> followed by the message (the GM gets a copy; per-game setting:
none, signed, anonymous), TIMEZONE <zone>, ADDRESS <new address> (confirmed from the new
address first), VACATION <from> <to> (defaults apply without counting towards the NMR limit)."
"""

from __future__ import annotations

import re
from datetime import timedelta
from email.message import EmailMessage

import pytest
from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.mail_in import tokens
from bot.mail_in.auth import signed_address
from bot.models import InboundMessage, Observer, Player, PressMode, Seat
from bot.store import find_game_row
from bot.testing import TestApp, plain_mail, reply_to, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    BOT,
    GM,
    bodies,
    body_of,
    cycle,
    game_row,
    last,
    mails,
    player_says,
    stranger_joins,
    stranger_says,
)
from tests.helpers import fake_inbox, moving_clock

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
KIM = "kim@else.example"
SIGNED = re.compile(r"flagman\+[a-z0-9_-]+\.[a-z0-9_-]+\.[a-z2-7]{12}@", re.I)


@pytest.fixture
def site(rc: TestApp) -> TestApp:
    """rc1 under way (five players, GM), rc2 open for sign-ups with two players in."""
    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=(),
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            signup=True,
            seed=11,
        )
    for n in range(2):
        stranger_joins(rc, f"runner{n}@example.net", f"JOIN rc2 Runner {n}")
    rc.mailer.clear()
    return rc


def carries_nothing_signed(msg: EmailMessage) -> bool:
    """No signed reply address anywhere in the mail, headers or body (a capability)."""
    return msg["Reply-To"] is None and not SIGNED.search(str(msg) + body_of(msg))


def set_press(app: TestApp, mode: PressMode, game: str = "rc1") -> None:
    """What `flagman gm configure GAME --press MODE` does."""
    with app.db.transaction() as session:
        row = find_game_row(session, game)
        assert row is not None
        row.press = mode


def all_order(app: TestApp, game: str = "rc1", text: str = "USE 2") -> None:
    for seat in ADDRESS:
        player_says(app, seat, text, game=game)


# -- for anyone ---------------------------------------------------------------------------------


def test_a_stranger_asking_for_help_gets_the_commands_not_a_refusal(site: TestApp) -> None:
    """ "A stranger who sends HELP is refused" -- now the general help, for anyone,
    at the plain address, with the commands for anyone and those for players."""
    stranger_says(site, KIM, "HELP")
    answer = last(site, KIM)
    body = body_of(answer)
    assert str(answer["Subject"]) == "Help" and "not in a game here" not in str(answer["Subject"])
    assert "Your address is not in a game here" in body
    for verb in (
        "LIST",
        "RULES <game>",
        "OBSERVE <game>",
        "UNOBSERVE",
        "JOIN <game>",
        "PRESS <game>",
        "TIMEZONE",
        "ADDRESS",
        "VACATION",
    ):
        assert f"  {verb}" in body, verb
    assert carries_nothing_signed(answer)


def test_list_shows_the_open_games_first_with_free_seats_and_the_others_with_deadlines(site: TestApp) -> None:
    """LIST: "the games, open ones first", with free seats (open) and deadlines (under way)."""
    stranger_says(site, KIM, "LIST")
    body = words_of(last(site, KIM))
    assert body.index("rc2:") < body.index("rc1:")
    assert "OPEN for sign-ups: 2 joined, 6 seats free (5 to 8 players)" in body
    assert "JOIN rc2 [your name]" in body
    assert "Turn 1 of 5" in body and "due Wed 7 Jan 2026 09:00 GMT" in body and "OBSERVE rc1" in body
    assert "kelly@example.org" not in body  # nobody's address is listed


def test_list_shows_a_players_deadlines_in_their_own_zone(site: TestApp) -> None:
    """A player's LIST shows deadlines in the player's zone (seb: Europe/Paris)."""
    player_says(site, "seb", "LIST")
    assert "due Wed 7 Jan 2026 10:00 CET" in body_of(last(site, ADDRESS["seb"]))


def test_rules_gives_the_summary_and_the_order_syntax_and_never_echoes_an_unknown_name(site: TestApp) -> None:
    """RULES <game>: the rules summary JOIN's welcome gives, with the order syntax and the game's
    settings; an unknown game is refused without repeating the sender's words."""
    stranger_says(site, KIM, "RULES rc2")
    body = body_of(last(site, KIM))
    assert "Racecraft is a middle-distance track race" in body and "USE n" in body
    assert "Early resolution: on" in body and "Press (PRESS rc2 ALL|<seat>): allowed, signed" in body
    assert "JOIN rc2 [your name]" in body
    moving_clock(site).advance(days=1, hours=1)  # past the few answers a day
    stranger_says(site, KIM, "RULES buy-cheap-watches")
    refusal = last(site, KIM)
    assert "No game by that name" in str(refusal["Subject"]) and "watches" not in str(refusal)


def test_observe_starts_only_when_its_confirmation_comes_back(site: TestApp) -> None:
    """OBSERVE from a stranger: a mail with a code to the From, nothing more; the observation
    starts when the reply to it comes back (the code in its subject); from then on the
    observer gets every turn's public results, at the plain address, nothing signed."""
    stranger_says(site, KIM, "OBSERVE rc1")
    ask = last(site, KIM)
    assert str(ask["Subject"]).startswith("[confirm observe.rc1.") and carries_nothing_signed(ask)
    assert "CONFIRM observe.rc1." in body_of(ask)
    all_order(site)  # early resolution: turn 1 resolves; the address is no observer yet
    assert not [m for m in mails(site, KIM) if "observer copy" in str(m["Subject"])]
    fake_inbox(site).deliver(reply_to(ask, "", sender=KIM))
    cycle(site)
    assert "You observe rc1" in str(last(site, KIM)["Subject"])
    all_order(site, text="CRUISE")  # turn 2 resolves
    copy = last(site, KIM)
    assert "Results of Turn 2 of 5: tactical (observer copy)" in str(copy["Subject"])
    body = body_of(copy)
    assert "What happened:" in body and "UNOBSERVE rc1" in body and "Next: Turn 3 of 5" in body
    assert "Your private part" not in body and carries_nothing_signed(copy)
    assert copy["From"].addresses[0].addr_spec == BOT


def test_a_confirmation_line_in_the_body_counts_too(site: TestApp) -> None:
    """The code may come back as a CONFIRM line in a new mail instead of a reply."""
    stranger_says(site, KIM, "OBSERVE rc1")
    code = re.search(r"CONFIRM (\S+)", body_of(last(site, KIM)))
    assert code is not None
    stranger_says(site, KIM, f"CONFIRM {code.group(1)}")
    with site.db.read() as session:
        assert session.scalars(select(Observer.address)).all() == [KIM]


def test_a_code_counts_only_from_its_address_and_only_for_a_few_days(site: TestApp) -> None:
    """The code is a MAC of what it confirms, the address it went to and the day: sent back
    from any other address, or after `VALID_DAYS`, it stands for nothing."""
    stranger_says(site, KIM, "OBSERVE rc1")
    ask = last(site, KIM)
    fake_inbox(site).deliver(reply_to(ask, "", sender="mallory@evil.example"))
    cycle(site)
    assert "Confirmation not valid" in str(last(site, "mallory@evil.example")["Subject"])
    moving_clock(site).advance(days=tokens.VALID_DAYS + 1)
    fake_inbox(site).deliver(reply_to(ask, "", sender=KIM))
    cycle(site)
    assert "Confirmation not valid" in str(last(site, KIM)["Subject"])
    with site.db.read() as session:
        assert session.scalars(select(Observer)).all() == []


def test_unobserve_stops_the_results(site: TestApp) -> None:
    """UNOBSERVE rc1 (or UNOBSERVE, for every game): no more results to the address."""
    stranger_says(site, KIM, "OBSERVE rc1")
    fake_inbox(site).deliver(reply_to(last(site, KIM), "", sender=KIM))
    cycle(site)
    stranger_says(site, KIM, "UNOBSERVE rc1")
    assert "You no longer observe rc1" in str(last(site, KIM)["Subject"])
    before = len(mails(site, KIM))
    all_order(site)
    assert len(mails(site, KIM)) == before


def test_a_stranger_gets_a_few_answers_a_day_whatever_it_asks_but_a_code_of_ours_is_answered(site: TestApp) -> None:
    """Unauthenticated mail limits: a few answers a day per address, all kinds of
    answer together (LIST, HELP, the notice, JOIN); the reply that brings back a code the bot
    mailed is still answered -- only a mail of ours could carry it."""
    stranger_says(site, KIM, "OBSERVE rc1")
    ask = last(site, KIM)
    for text in ("LIST", "HELP", "RULES rc1", "LIST", "what is this?", "JOIN nosuch"):
        stranger_says(site, KIM, text)
    assert len(mails(site, KIM)) == 3
    fake_inbox(site).deliver(reply_to(ask, "", sender=KIM))
    cycle(site)
    assert len(mails(site, KIM)) == 4 and "You observe rc1" in str(last(site, KIM)["Subject"])
    with site.db.read() as session:
        details = [r.detail for r in session.scalars(select(InboundMessage).where(InboundMessage.sender == KIM))]
    assert sum(d.startswith("unknown sender") for d in details) == 4  # ignored, and in the digest


def test_a_player_observes_another_game_at_once_at_the_registered_address(site: TestApp) -> None:
    """A mail that proved a seat proved its registered address: OBSERVE needs no confirmation."""
    player_says(site, "seb", "OBSERVE rc2")
    assert "You observe rc2" in str(last(site, ADDRESS["seb"])["Subject"])
    with site.db.read() as session:
        assert session.scalars(select(Observer.address)).all() == [ADDRESS["seb"]]
    player_says(site, "seb", "OBSERVE rc1")
    assert "You are in rc1" in str(last(site, ADDRESS["seb"])["Subject"])


# -- PRESS ----------------------------------------------------------------------------------------


def test_press_to_all_reaches_every_other_player_and_the_gm_gets_a_copy(site: TestApp) -> None:
    """PRESS rc1 ALL, the message under it up to ENDPRESS: each other player gets it (signed,
    by default), quoted so that no line of it is an order line of the bot's mail; the GM gets a
    copy; the sender a confirmation; the lines after ENDPRESS are orders as ever."""
    player_says(site, "seb", "PRESS rc1 ALL\nShall we all go slow?\nUSE 1\nENDPRESS\nUSE 4")
    for seat in ("kelly", "steve", "roger", "anna"):
        press = [m for m in mails(site, ADDRESS[seat]) if "Press from" in str(m["Subject"])]
        assert len(press) == 1, seat
        body = body_of(press[0])
        assert "from seb (Seb) to every player" in body and "    > Shall we all go slow?" in body
        assert "    > USE 1" in body and "\nUSE 1" not in body
        assert press[0]["In-Reply-To"] is None  # nothing of the sender's mail reaches them
        assert press[0]["Reply-To"].addresses[0].addr_spec == signed_address(BOT, "test-site-secret", "rc1", seat)
    assert not [m for m in mails(site, ADDRESS["seb"]) if "Press from" in str(m["Subject"])]
    assert "Press from seb to every player" in bodies(site, GM)
    answer = body_of(last(site, ADDRESS["seb"]))
    assert "Your press went to every player in rc1 (4 mails)" in answer and "Understood" in answer
    assert "USE 4" in answer


def test_anonymous_press_names_nobody_to_the_players_but_the_gms_copy_does(site: TestApp) -> None:
    """The GM's choice per game (`gm configure --press`): anonymous press is not signed."""
    set_press(site, PressMode.ANONYMOUS)
    player_says(site, "seb", "PRESS rc1 kelly\nI will cruise this turn.")
    press = [m for m in mails(site, ADDRESS["kelly"]) if "Press from" in str(m["Subject"])][-1]
    text = str(press) + body_of(press)
    assert "seb" not in text.lower() and "Seb" not in text and "from a player to you" in body_of(press)
    assert not [m for m in mails(site, ADDRESS["steve"]) if "Press from" in str(m["Subject"])]
    gm_copy = bodies(site, GM)
    assert "Anonymous press in rc1 from seb (Seb) to kelly" in gm_copy


def test_press_refusals_say_why(site: TestApp) -> None:
    """No press in a game whose GM allows none; an unknown seat is answered with the seats;
    a PRESS with no message is refused; a stranger cannot send press."""
    player_says(site, "seb", "PRESS rc1 nobody\nhello")
    assert "kelly, steve, roger, anna" in words_of(last(site, ADDRESS["seb"]))
    player_says(site, "seb", "PRESS rc1 ALL")
    assert "Press without a message" in str(last(site, ADDRESS["seb"])["Subject"])
    set_press(site, PressMode.NONE)
    player_says(site, "seb", "PRESS rc1 ALL\nhello")
    assert "No press in rc1" in str(last(site, ADDRESS["seb"])["Subject"])
    assert not [m for m in mails(site, ADDRESS["kelly"]) if "Press from" in str(m["Subject"])]
    stranger_says(site, KIM, "PRESS rc1 ALL\nbuy cheap watches")  # the stranger's notice, nothing passed on
    assert "your address is not in any game running here" in words_of(last(site, KIM))
    assert "watches" not in body_of(last(site, KIM))
    assert not [m for m in mails(site, ADDRESS["kelly"]) if "Press from" in str(m["Subject"])]
    stranger_says(site, "lee@else.example", "LIST\nPRESS rc1 ALL\nbuy cheap watches")
    answer = body_of(last(site, "lee@else.example"))
    assert "PRESS: only for the players of a game" in answer and "watches" not in answer


# -- TIMEZONE, ADDRESS, VACATION -----------------------------------------------------------------


def test_timezone_is_checked_and_later_mail_uses_it(site: TestApp) -> None:
    """TIMEZONE Europe/Paris (any case): set and confirmed; later mail shows deadlines in it. A
    zone not known is refused with the closest names."""
    player_says(site, "kelly", "TIMEZONE europe/paris")
    answer = body_of(last(site, ADDRESS["kelly"]))
    assert "Your time zone is now Europe/Paris" in answer and "due Wed 7 Jan 2026 10:00 CET" in answer
    player_says(site, "kelly", "USE 3")
    assert "Wed 7 Jan 2026 10:00 CET" in body_of(last(site, ADDRESS["kelly"]))
    player_says(site, "kelly", "TIMEZONE Europe/Pariss")
    refusal = last(site, ADDRESS["kelly"])
    assert "[ERROR]" in str(refusal["Subject"]) and "Did you mean Europe/Paris?" in words_of(refusal)
    with site.db.read() as session:
        assert session.scalar(select(Player.timezone).where(Player.address == ADDRESS["kelly"])) == "Europe/Paris"


def test_timezone_names_no_deadline_for_a_paused_game(site: TestApp) -> None:
    """TIMEZONE's examples say when each game is due in the new zone; a paused game has no
    deadline running (RESUME restarts the clock from then), so its example says it is paused,
    never the deadline it had before the pause."""
    gm_helpers.gm_says(site, "PAUSE rc1", game="rc1")
    player_says(site, "kelly", "TIMEZONE europe/paris")
    answer = words_of(last(site, ADDRESS["kelly"]))
    assert "So rc1 is paused (no deadline runs until the GM resumes it)." in answer, answer
    assert "due Wed 7 Jan 2026" not in answer


def test_address_moves_only_once_confirmed_from_the_new_address_and_the_old_one_is_told(site: TestApp) -> None:
    """ADDRESS new@...: a code goes to the new address, and the old one is told at once with a
    STOP code; nothing changes until the code comes back from the new address and the old one
    has had [limits] address_change_hold_hours to stop it; then the player is the new
    address (its reply address still signs), the old address is told it has taken effect, and the GM."""
    new = "kelly@new.example"
    player_says(site, "kelly", f"ADDRESS {new}")
    told_first = last(site, ADDRESS["kelly"])
    assert "Confirm your new address from kelly@new.example" in str(told_first["Subject"])
    assert "STOP stop." in body_of(told_first) and "not before Tue 6 Jan 2026 09:00 GMT" in body_of(told_first)
    ask = last(site, new)
    assert str(ask["Subject"]).startswith("[confirm address.") and carries_nothing_signed(ask)
    assert "STOP" not in body_of(ask)  # the stop code is the old address's alone
    assert game_row(site).seats[0].player.address == ADDRESS["kelly"]
    fake_inbox(site).deliver(reply_to(ask, "", sender="mallory@evil.example"))
    cycle(site)
    assert game_row(site).seats[0].player.address == ADDRESS["kelly"]
    fake_inbox(site).deliver(reply_to(ask, "yes, that is me", sender=new))
    cycle(site)
    assert "The move is made at Tue 6 Jan 2026 09:00" in words_of(last(site, new))
    assert game_row(site).seats[0].player.address == ADDRESS["kelly"]  # the hold is not over
    moving_clock(site).advance(hours=24)
    cycle(site)
    assert game_row(site).seats[0].player.address == new
    told = [m for m in mails(site, ADDRESS["kelly"]) if "Your address has changed" in str(m["Subject"])][-1]
    assert new in body_of(told) and carries_nothing_signed(told)
    assert "kelly changed address" in bodies(site, GM)
    done = last(site, new)
    assert "Your address change is made" in str(done["Subject"]) and "Done: the bot writes to" in body_of(done)
    player_says(site, "kelly", "USE 2", address=new)  # the seat's reply address signs as ever
    assert "Orders received" in str(last(site, new)["Subject"])


def test_address_refusals(site: TestApp) -> None:
    """An address taken by another player is refused; so is the bot's own."""
    player_says(site, "kelly", f"ADDRESS {ADDRESS['seb']}")
    assert "That address is taken" in str(last(site, ADDRESS["kelly"])["Subject"])
    player_says(site, "kelly", f"ADDRESS {BOT}")
    assert "Not an address for a player" in str(last(site, ADDRESS["kelly"])["Subject"])


def test_vacation_defaults_do_not_count_towards_the_nmr_limit_and_the_gm_is_told(site: TestApp) -> None:
    """VACATION <from> <to>: the GM is told; a turn due in those days without the player's
    orders gets the default, and the NMR streak does not grow; outside them it does."""
    player_says(site, "kelly", "VACATION 2026-01-05 2026-01-08")
    assert "Vacation set" in str(last(site, ADDRESS["kelly"])["Subject"])
    assert "kelly of rc1: vacation" in bodies(site, GM)
    for seat in ("seb", "steve", "roger", "anna"):
        player_says(site, seat, "USE 2")
    moving_clock(site).advance(hours=49)  # turn 1 closes on Wed 7 Jan: on vacation
    cycle(site)
    seats = {s.name: s for s in game_row(site).seats}
    assert seats["kelly"].nmr_streak == 0
    for seat in ("seb", "steve", "roger", "anna"):
        player_says(site, seat, "CRUISE")
    moving_clock(site).advance(hours=49)  # turn 2 closes on Fri 9 Jan: back home
    cycle(site)
    assert {s.name: s for s in game_row(site).seats}["kelly"].nmr_streak == 1


def test_vacation_refusals_and_off(site: TestApp) -> None:
    """Days in the wrong order, days over, too long a vacation: refused with the reason;
    VACATION OFF ends one."""
    for text, reason in (
        ("VACATION 2026-02-10 2026-02-01", "the last day comes before the first"),
        ("VACATION 2025-12-01 2025-12-24", "those days are over"),
        ("VACATION 2026-02-01 2026-06-01", "more than 62 days"),
        ("VACATION soon later", "write the days as YYYY-MM-DD"),
    ):
        player_says(site, "kelly", text)
        assert reason in body_of(last(site, ADDRESS["kelly"])), text
    player_says(site, "kelly", "VACATION 2026-02-01 2026-02-10")
    player_says(site, "kelly", "VACATION OFF")
    with site.db.read() as session:
        player = session.scalars(select(Player).where(Player.address == ADDRESS["kelly"])).one()
        assert player.vacation_from is None and player.vacation_to is None


# -- one answer per mail; which game ------------------------------------------------------------


def test_several_commands_in_one_mail_get_one_answer_in_sections(site: TestApp) -> None:
    """Every mail still gets exactly one answer (Mailman 3 style sections)."""
    before = len(mails(site, ADDRESS["seb"]))
    player_says(site, "seb", "LIST\nTIMEZONE UTC\nVACATION 2026-03-01 2026-03-02\nRULES rc2\nUSE 3")
    answers = mails(site, ADDRESS["seb"])[before:]
    assert len(answers) == 1
    body = body_of(answers[0])
    for heading in (
        "--- Games here ---",
        "--- Time zone set: UTC ---",
        "--- Vacation set ---",
        "--- Rules of Racecraft rc2 ---",
        "--- Orders received for Turn 1 of 5: start ---",
    ):
        assert heading in body, heading


def test_a_command_naming_no_game_says_which_games_it_could_be(gapp: TestApp) -> None:
    """A line naming no game, from a sender with several, names them."""
    players = tuple(
        PlayerSpec(f"p{i}", "multi@example.org" if i == 0 else f"p{i}@example.org", f"P{i}") for i in range(5)
    )
    with gapp.db.transaction() as session:
        for name in ("rc1", "rc2"):
            create_game(
                gapp.shell, session, kind="racecraft", name=name, players=players, gm_address=GM, deadline="48h", seed=3
            )
        multi = session.scalars(select(Player).where(Player.address == "multi@example.org")).one()
        # One proof for both seats (as a DMARC pass of the From would be): the mail is for either.
        for seat in session.scalars(select(Seat).where(Seat.player_id == multi.id)):
            seat.secret = password = "same-for-both"
    gapp.service.send()
    fake_inbox(gapp).deliver(plain_mail("multi@example.org", BOT, "orders", f"PASSWORD {password}\nRESIGN\nUSE 3"))
    cycle(gapp)
    answer = last(gapp, "multi@example.org")  # one answer, in sections
    text = words_of(answer)
    assert "[ERROR] Answers to your mail" in str(answer["Subject"])
    assert "your games: rc1, rc2" in text  # RESIGN without its game
    assert "--- Which game? ---" in text and "cannot tell which one this mail is for: rc1, rc2" in text  # USE 3


def test_the_settings_of_a_game_and_its_players_show_in_the_digest(site: TestApp) -> None:
    """The digest: early resolution, press, observers, players on vacation, per game."""
    from bot.gm import digest

    player_says(site, "seb", "OBSERVE rc2")
    player_says(site, "kelly", "VACATION 2026-01-05 2026-01-09")
    digest.send_due_digests(site.shell, force=True)
    site.service.send()
    body = body_of(last(site, GM))
    assert "Early resolution: on" in body and "Press: signed. Observers: none." in body
    assert "On vacation (defaults then count as no NMR): kelly 2026-01-05 to 2026-01-09." in body


def test_early_resolution_off_waits_for_the_deadline(gapp: TestApp) -> None:
    """Item 2: early resolution is the GM's choice per game (`game new --early-resolution
    off`): with it off, a turn with every order in waits for its deadline."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc1",
            players=gm_helpers.RACERS,
            gm_address=GM,
            deadline="48h",
            seed=7,
            early_resolution=False,
        )
    gapp.service.send()
    all_order(gapp)
    assert "Orders received" in str(last(gapp, ADDRESS["kelly"])["Subject"])
    assert "resolves as soon as every order is in" not in body_of(last(gapp, ADDRESS["kelly"]))
    assert len(gm_helpers.turns(gapp)) == 1
    moving_clock(gapp).advance(timedelta(hours=49))
    cycle(gapp)
    assert len(gm_helpers.turns(gapp)) == 2


# -- item 5: an incomplete set says what is missing ------------------------------------------------


def _game(app: TestApp, kind: str, count: int) -> None:
    players = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(count))
    with app.db.transaction() as session:
        create_game(app.shell, session, kind=kind, name="g1", players=players, gm_address=GM, deadline="48h", seed=5)
    app.service.send()


def test_the_gms_seat_list_names_a_robot_seat_as_a_robot_not_an_address(gapp: TestApp) -> None:
    """The GM's copy lists each seat with who holds it: a person with their address, a robot
    as a robot with its level (it has no address to show)."""
    players = (PlayerSpec("p0", "p0@example.org", "P0"), PlayerSpec("p1", "p1@example.org", "P1"))
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="speedphreakz",
            name="g1",
            players=players,
            gm_address=GM,
            deadline="48h",
            seed=5,
            robot_seats=["robbie"],
        )
    gapp.service.send()
    seats = body_of(last(gapp, GM)).replace("\r\n", "\n").split("Seats:\n", 1)[1]
    assert "  robbie           a robot (normal level)\n" in seats, seats
    assert "<robot>" not in seats and "  p0               P0 <p0@example.org>\n" in seats, seats


def test_an_incomplete_speedphreakz_set_names_the_start_and_the_rounds_it_lacks(gapp: TestApp) -> None:
    """speedphreakz.md §5: the set-up takes the START and the programs of rounds 1 and 2; a mail
    with round 1 only is confirmed with what it lacks, each with its syntax."""
    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "ROUND 1: F1 F1", game="g1", address="p0@example.org")
    body = body_of(last(gapp, "p0@example.org"))
    assert "That set is not complete. It lacks:" in body
    assert "    - the start: a START line (START x,y FACING h, or START FREE FACING h)" in body
    assert "    - the program for round 2: a ROUND 2 line with up to 12 actions" in body


def test_a_speed_circuit_plot_whose_path_line_was_refused_says_so(gapp: TestApp) -> None:
    """ "A bad Speed Circuit PATH line was dropped and the rest called 'a complete
    set'": the confirmation now names the line left out, and that its default stands."""
    _game(gapp, "speed_circuit", 2)
    for _ in ("design", "qualifying"):
        moving_clock(gapp).advance(timedelta(hours=49))
        cycle(gapp)
    player_says(gapp, "p0", "SPEED 40\nPATH Q Q Q", game="g1", address="p0@example.org")
    body = body_of(last(gapp, "p0@example.org"))
    assert "That is a complete set without what line 2 (PATH) would have said:" in body
    assert "That is a complete set." not in body
    # The PATH sent again alone completes the plot on file (tests/bot/intake/test_part_only.py):
    # SPEED 40 stands beside it.
    player_says(gapp, "p0", "PATH A A", game="g1", address="p0@example.org")
    again = words_of(last(gapp, "p0@example.org"))
    assert "Added to the set you had on file, which stands: > SPEED 40" in again, again


def test_a_line_refused_as_given_twice_leaves_the_first_standing_not_the_default(gapp: TestApp) -> None:
    """Played by mail (playfix C2): "SKILL ALL / SKILL NONE" was answered "SKILL given twice; the
    first one counts" and then "That is a complete set without what line 4 (SKILL) would have
    said: the default stands for that", while SKILL ALL stands. The confirmation says the line
    was left out and the SKILL on file stands; no default is claimed for it."""
    _game(gapp, "speed_circuit", 2)
    for _ in ("design", "qualifying"):
        moving_clock(gapp).advance(timedelta(hours=49))
        cycle(gapp)
    player_says(gapp, "p0", "SPEED 40\nSKILL ALL\nSKILL NONE", game="g1", address="p0@example.org")
    body = words_of(last(gapp, "p0@example.org"))
    assert "the default stands for that" not in body, body
    assert "That is a complete set without line 3 (SKILL): the SKILL of your set stands." in body, body
    assert "> SKILL ACCEL TOP START BRAKES CHANCE PASS CRASH" in body


def test_no_line_of_the_self_service_mail_is_an_order_line(site: TestApp) -> None:
    """testing.md: "Never put a line that parses as a valid order into the bot's own mail
    (Outlook quotes without '>')" -- press quoting orders, LIST, RULES, HELP, the confirmation
    mails, the observer's results, the answers to TIMEZONE, ADDRESS, VACATION."""
    from bot.games import turns

    stranger_says(site, KIM, "HELP\nLIST\nRULES rc1")
    stranger_says(site, KIM, "OBSERVE rc1")
    fake_inbox(site).deliver(reply_to(last(site, KIM), "", sender=KIM))
    player_says(site, "seb", "PRESS rc1 ALL\nUSE 3\nCRUISE\nOVERTAKE\nENDPRESS")
    player_says(site, "kelly", "TIMEZONE UTC\nVACATION 2026-01-05 2026-01-06\nADDRESS kelly@new.example")
    all_order(site)
    with site.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        rules, state, _ = turns.current_state(session, game)
    for msg in mails(site):
        for line in body_of(msg).splitlines():
            assert not rules.parse_orders(state, "kelly", line).orders, f"{msg['Subject']}: {line!r}"


def test_the_gm_may_send_press_and_a_player_may_write_to_the_gm_alone(site: TestApp) -> None:
    """PRESS from the GM goes to every player, signed as the GM (whatever the game's press
    setting); PRESS <game> GM from a player goes to the GM alone."""
    set_press(site, PressMode.ANONYMOUS)
    gm_helpers.gm_says(site, "PRESS rc1 ALL\nWelcome to rc1, everyone.")
    for seat in ADDRESS:
        press = [m for m in mails(site, ADDRESS[seat]) if "Press from the GM" in str(m["Subject"])]
        assert len(press) == 1 and "    > Welcome to rc1, everyone." in body_of(press[0]), seat
    player_says(site, "anna", "PRESS rc1 GM\nI may be late on Friday.")
    assert "Press from anna to the GM" in bodies(site, GM)
    assert not [m for m in mails(site, ADDRESS["kelly"]) if "late on Friday" in body_of(m)]


def test_a_speed_circuit_confirmation_says_what_the_plot_costs(gapp: TestApp) -> None:
    """mail-interface.md, "The confirmation": "What the orders cost, where
    the game can say so ('this plot costs 2 wear and a top-speed test')". At the first race
    turn the cars stand on the grid at 0 mph: SPEED 20 along the lane is free; a plot the
    dice decide (PAY ROLL) is not priced."""
    _game(gapp, "speed_circuit", 2)
    for _ in ("design", "qualifying"):
        moving_clock(gapp).advance(timedelta(hours=49))
        cycle(gapp)
    player_says(gapp, "p0", "SPEED 20\nPATH B", game="g1", address="p0@example.org")
    body = body_of(last(gapp, "p0@example.org")).replace("\r\n", "\n")
    assert "What they will cost:\n    This plot (20 mph, ending in " in body
    assert "costs nothing: no wear, no test, no roll." in " ".join(body.split())
    player_says(gapp, "p0", "SPEED 20\nPATH B\nPAY ROLL", game="g1", address="p0@example.org")
    assert "What they will cost:" not in body_of(last(gapp, "p0@example.org"))


def test_a_speedphreakz_confirmation_says_the_program_cost_against_control(gapp: TestApp) -> None:
    """ "program cost 125; control this round is 101-200, so you may lose
    control from action 4". At the set-up, rounds 1 and 2 are priced from the chart (the car
    is not on the map yet): F3 F2 F1 costs 75, 120, 140."""
    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "START FREE FACING E\nROUND 1: F3 F2 F1\nROUND 2: F1", game="g1", address="p0@example.org")
    said = words_of(last(gapp, "p0@example.org"))
    assert (
        "What they will cost: Round 1 program cost 140 before terrain and what is carried over; "
        "control this round is 101-200, so you may lose control from action 2."
    ) in said
    assert "Round 2 program cost 20 before terrain" in said


def test_a_locked_round_refused_claims_no_default_for_it(gapp: TestApp) -> None:
    """Played by mail (playfix SP-A): in round 2, "ROUND 2: F1 / ROUND 3: F1 F1" was answered
    "round 2's program was locked ... send ROUND 3" and then "That is a complete set without what
    line 1 (ROUND) would have said: the default stands for that" -- no default stands for it:
    the locked program runs, and the game's default fills nothing of the set. A default is
    claimed only where the outlook fills a part of the set with one."""
    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "START 1,5 FACING N\nROUND 1: F1\nROUND 2: F1", game="g1", address="p0@example.org")
    player_says(gapp, "p1", "START 2,5 FACING N\nROUND 1: F1\nROUND 2: F1", game="g1", address="p1@example.org")
    player_says(gapp, "p0", "ROUND 2: F2\nROUND 3: F1", game="g1", address="p0@example.org")
    body = words_of(last(gapp, "p0@example.org"))
    assert "locked" in body, body
    assert "the default stands for that" not in body, body
    assert "That is a complete set without line 1 (ROUND): the orders below count without it." in body, body


def test_a_speedphreakz_sheet_says_the_round_its_orders_are_for(gapp: TestApp) -> None:
    """Orders run one round ahead (speedphreakz.md §5): the sheet of Round 2, whose program is
    locked, asks for the program of round 3, so its orders are due for Round 3, not Round 2."""
    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "START 1,5 FACING N\nROUND 1: F1\nROUND 2: F1", game="g1", address="p0@example.org")
    player_says(gapp, "p1", "START 2,5 FACING N\nROUND 1: F1\nROUND 2: F1", game="g1", address="p1@example.org")
    body = words_of(last(gapp, "p0@example.org"))
    assert "Now send: ROUND 3." in body, body
    assert "Your orders for Round 3 are due by" in body, body
    assert "Your orders for Round 2" not in body, body


def test_a_program_locked_at_this_turns_resolution_is_lacking_now(gapp: TestApp) -> None:
    """speedphreakz.md §5 Pipeline: turn 1 "takes rounds 1 and 2 and resolves round 1"; round 2's
    program is locked then (a ROUND 2 sent after is refused). A set-up with START and ROUND 1 was
    told "That set is complete for Set-up and round 1. Not needed before a later turn, and filled
    then with the game's default: the program for round 2" -- and round 2 ran as an empty
    program. It lacks round 2 now, said once, with why it cannot wait."""
    _game(gapp, "speedphreakz", 2)
    player_says(gapp, "p0", "START 1,5 FACING N\nROUND 1: F1", game="g1", address="p0@example.org")
    body = body_of(last(gapp, "p0@example.org"))
    flat = " ".join(body.split())
    assert body.count("the program for round 2") == 1, body
    assert "That set is not complete. It lacks: - the program for round 2" in flat, body
    assert "complete for Set-up and round 1" not in flat and "later turn" not in flat, body
    assert (
        "That part cannot be sent once this turn is resolved: send it by the deadline, or the game's "
        "default runs in its place." in flat
    ), body


def test_orders_naming_the_game_shows_what_is_on_file(gapp: TestApp) -> None:
    """README: "ORDERS [game]" as "STATUS [game]". Played by mail (playtest4): "ORDERS sc4" in a
    reply to the sheet was read as an order line and refused: "'ORDERS' is not an order"."""
    gm_helpers.one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "SPEED 40", game="sc1")
    player_says(gapp, "kelly", "ORDERS sc1", game="sc1")
    answer = last(gapp, ADDRESS["kelly"])
    assert "[ERROR]" not in str(answer["Subject"]) and "Your orders on file" in str(answer["Subject"])
    assert "> SPEED 40" in body_of(answer)
    player_says(gapp, "kelly", "ORDERS rc9", game="sc1")
    assert "You have no seat in a game called rc9" in words_of(last(gapp, ADDRESS["kelly"]))


def test_a_setting_from_the_plain_address_is_told_it_needs_proof_and_how_to_give_it(rc: TestApp) -> None:
    """Played by mail (playtest4): "RATING ON" and "TIMEZONE America/New_York" from a player's
    and the GM's own address to the plain address were answered "A mail claiming to come from
    you arrived without proof ... If you did not send it, you need do nothing" (the GM's: "the
    proof GM commands need", TIMEZONE being none). The answer names the settings asked for,
    why they need proof, and how to send them again (a player's reply to it sets them)."""
    stranger_says(rc, ADDRESS["kelly"], "TIMEZONE America/New_York")
    refusal = last(rc, ADDRESS["kelly"])
    text = words_of(refusal)
    assert "Your mail asked for TIMEZONE: your own settings" in text, text
    assert "Send it again in reply to this mail or any other mail of the bot to you" in text, text
    assert "If you did not send it" not in text
    fake_inbox(rc).deliver(reply_to(refusal, "TIMEZONE America/New_York", sender=ADDRESS["kelly"]))
    cycle(rc)
    assert "America/New_York" in words_of(last(rc, ADDRESS["kelly"]))
    stranger_says(rc, GM, "TIMEZONE America/New_York")
    refusal = last(rc, GM)
    text = words_of(refusal)
    assert "Your mail asked for TIMEZONE: a player's own settings" in text, text
    assert "As the GM you have no time zone of your own to set" in text and "If you did not send it" not in text
