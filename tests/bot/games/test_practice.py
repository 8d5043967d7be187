"""Practice by mail (mail-interface.md: "`PRACTICE <game kind>` (anyone: a practice
race against robot drivers)"): "starts a practice game of that person against robots, with turns
that resolve as soon as the person orders, and mails the first sheet; practice games are marked
as such, count for nothing, are capped per address like other answers to strangers, and expire
when left alone." (bot.games.practice; docs/DESIGN.md, "Practice games".)"""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.games import practice
from bot.intake.limits import STRANGER_REPLIES_PER_DAY
from bot.models import Game, GameStatus, Outbox
from bot.store import find_game_row
from bot.testing import FakeClock, TestApp, reply_to, words_of
from tests.bot import gm_helpers
from tests.bot.gm_helpers import BOT, body_of, cycle, last, mails, stranger_says

gapp = gm_helpers.gapp
PAT = "pat@example.net"


def _confirm(app: TestApp, sender: str = PAT) -> EmailMessage:
    """The sender answers the code mail PRACTICE brought; returns the first turn sheet."""
    code_mail = last(app, sender)
    assert "[confirm practice." in str(code_mail["Subject"]), str(code_mail["Subject"])
    app.inbox.deliver(reply_to(code_mail, "Yes please", sender=sender))
    cycle(app)
    sheets = [
        m
        for m in mails(app, sender)
        if str(m["Subject"]).startswith("[practice") and "Practice game" not in str(m["Subject"])
    ]
    assert sheets, [str(m["Subject"]) for m in mails(app, sender)]
    return sheets[-1]


def _paced(app: TestApp) -> None:
    """The clock past `[practice] turn_minutes` since the open turn opened, and a tick."""
    assert isinstance(app.clock, FakeClock)
    app.clock.advance(timedelta(minutes=app.settings.practice.turn_minutes))
    cycle(app)


def _game(app: TestApp, name: str = "practice1") -> Game:
    with app.db.read() as session:
        game = find_game_row(session, name)
        assert game is not None
        _ = [(s.robot, s.player.address) for s in game.seats]
        return game


def test_a_strangers_practice_is_double_opt_in_then_a_race_against_robots(gapp: TestApp) -> None:
    """From a stranger: a code first and no game ("think about double opt-in the way JOIN does
    it"); the answer from that address starts the game, the person against robots, and mails the
    first sheet, marked as practice in its subject."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    assert "[confirm practice." in str(last(gapp, PAT)["Subject"])
    with gapp.db.read() as session:
        assert session.scalar(select(Game)) is None, "no game before the address answers"
    sheet = _confirm(gapp)
    assert str(sheet["Subject"]).startswith("[practice1]")
    game = _game(gapp)
    assert game.practice and game.status == GameStatus.ACTIVE and game.early_resolution
    people = [s for s in game.seats if not s.robot]
    assert [s.player.address for s in people] == [PAT]
    assert len([s for s in game.seats if s.robot]) == practice.ROBOTS
    assert {s.robot_level for s in game.seats if s.robot} == {"normal"}
    assert "practice game of Racecraft" in "\n".join(body_of(m) for m in mails(gapp, PAT))


def test_turns_resolve_as_soon_as_the_person_orders_and_nobody_else_is_mailed(gapp: TestApp) -> None:
    """ "turns that resolve as soon as the person orders"; a practice game has no GM: no GM copy
    or digest goes anywhere; robots are shown as robots in the results."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2", sender=PAT))
    cycle(gapp)
    _paced(gapp)
    results = last(gapp, PAT)
    assert "Results of" in str(results["Subject"]) and "[practice1]" in str(results["Subject"])
    assert "ada (robot)" in body_of(results)
    with gapp.db.read() as session:
        recipients = set(session.scalars(select(Outbox.recipient)))
    assert recipients == {PAT}, recipients
    from bot.gm.digest import send_due_digests

    assert send_due_digests(gapp.shell, force=True) == 0


def test_every_game_the_bot_knows_and_an_unknown_one(gapp: TestApp) -> None:
    """ "PRACTICE racecraft (or speed-circuit, speedphreakz; the kinds the bot knows)"."""
    for number, kind in enumerate(("speed-circuit", "speedphreakz"), start=1):
        sender = f"p{number}@example.net"
        stranger_says(gapp, sender, f"PRACTICE {kind}")
        _confirm(gapp, sender)
        assert _game(gapp, f"practice{number}").kind == kind.replace("-", "_")
    stranger_says(gapp, "q@example.net", "PRACTICE chess")
    assert "racecraft, speed-circuit, speedphreakz" in body_of(last(gapp, "q@example.net"))


def test_practice_is_capped_per_address_as_answers_to_strangers(gapp: TestApp) -> None:
    """SECURITY.md, "Loops and backscatter": a stranger gets a few answers a day at most. The code
    mail of PRACTICE is such an answer: a forged From gets at most that many, and no game."""
    victim = "victim@example.net"
    for _ in range(STRANGER_REPLIES_PER_DAY + 3):
        stranger_says(gapp, victim, "PRACTICE racecraft")
    assert len(mails(gapp, victim)) == STRANGER_REPLIES_PER_DAY
    with gapp.db.read() as session:
        assert session.scalar(select(Game)) is None


def test_running_practice_games_are_capped_per_address(gapp: TestApp) -> None:
    """From a player's proven address (a reply to the bot's mail) PRACTICE starts at once; at
    most `OPEN_PER_ADDRESS` practice games run for one address: the next is refused, saying why."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    for number in range(2, practice.OPEN_PER_ADDRESS + 1):
        gapp.inbox.deliver(reply_to(sheet, "PRACTICE speedphreakz", sender=PAT))
        cycle(gapp)
        assert _game(gapp, f"practice{number}").kind == "speedphreakz", "a proven address: no code, the game at once"
    gapp.inbox.deliver(reply_to(sheet, "PRACTICE speedphreakz", sender=PAT))
    cycle(gapp)
    answer = last(gapp, PAT)
    assert "[confirm practice." not in str(answer["Subject"])
    assert "practice games running" in body_of(answer)
    with gapp.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Game)) == practice.OPEN_PER_ADDRESS


def test_a_practice_game_left_alone_is_closed(gapp: TestApp) -> None:
    """ "expire when left alone": no order from the person for `[practice] idle_days` days, the game is
    closed (finished) and the person told once; one with a recent order is not."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    assert isinstance(gapp.clock, FakeClock)
    gapp.clock.advance(timedelta(days=gapp.settings.practice.idle_days - 1))
    gapp.inbox.deliver(reply_to(sheet, "USE 1", sender=PAT))
    cycle(gapp)
    gapp.clock.advance(timedelta(days=2))
    cycle(gapp)
    assert _game(gapp).status == GameStatus.ACTIVE, "an order six days ago keeps it"
    gapp.clock.advance(timedelta(days=gapp.settings.practice.idle_days))
    cycle(gapp)
    assert _game(gapp).status == GameStatus.FINISHED
    assert "is closed" in body_of(last(gapp, PAT))
    told = len(mails(gapp, PAT))
    cycle(gapp)
    assert len(mails(gapp, PAT)) == told


def test_practice_is_marked_in_game_list_and_not_in_list_by_mail(
    gapp: TestApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "practice games are marked as such (subject tag, `game list`)"; LIST does not offer a
    person's practice game to anyone else; HELP names PRACTICE."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    _confirm(gapp)
    stranger_says(gapp, "other@example.net", "LIST\nHELP")
    answer = body_of(last(gapp, "other@example.net"))
    assert "practice1" not in answer and "PRACTICE <game kind>" in answer
    with gapp.db.read() as session:
        game = find_game_row(session, "practice1")
        assert game is not None and game.practice
    assert BOT not in {str(m["To"]) for m in mails(gapp)}


def test_game_list_and_show_mark_a_practice_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ "practice games are marked as such (subject tag, `game list`)": `flagman game list` ends its
    line with [practice], `game show` says so, and its robots are shown as robots."""
    from bot.app import build_app
    from bot.cli import main
    from bot.settings import load_settings
    from tests.helpers import init_site

    config = init_site(tmp_path / "site", "flagman@example.org")
    with build_app(load_settings(config, env={})) as app, app.db.transaction() as session:
        rules = practice.check(session, app.shell, PAT, "speed-circuit")
        practice.start(app.shell, session, PAT, rules)
    assert main(["--config", str(config), "game", "list"]) == 0
    listed = capsys.readouterr().out
    assert "practice1" in listed and "(4 robots)" in listed and listed.rstrip().endswith("[practice]")
    assert main(["--config", str(config), "game", "show", "practice1"]) == 0
    shown = capsys.readouterr().out
    assert "(practice)" in shown and "ada          (robot)" in shown


def test_a_practice_game_whose_person_is_out_of_the_race_is_closed(gapp: TestApp) -> None:
    """A practice game whose person is no longer in the race (here the rules' drop with the seat
    kept, as when a car is out of the race) is closed by the next tick, not left to the robots
    (docs/DESIGN.md, "Practice games")."""
    from bot.games.seats import drop_seat
    from bot.models import ChangeWhy

    stranger_says(gapp, PAT, "PRACTICE racecraft")
    _confirm(gapp)
    with gapp.db.transaction() as session:
        game = find_game_row(session, "practice1")
        assert game is not None
        person = next(s for s in game.seats if not s.robot)
        drop_seat(session, game, person, ChangeWhy.DROPPED, gapp.shell.now())
        person.active = True  # still seated (as after a crash out of the race): told when it closes
    cycle(gapp)
    assert _game(gapp).status == GameStatus.FINISHED
    assert "you are out of the race" in body_of(last(gapp, PAT))


def test_a_practice_game_is_its_persons_alone(gapp: TestApp, tmp_path: Path) -> None:
    """ "practice games are marked as such, count for nothing" (docs/DESIGN.md,
    "Practice games": "its person's alone"): with `[bot] archive_dir` set, the bot publishes
    no page of a practice game after its turns (a regular game's every turn is, tests/bot/
    test_archive.py) nor does its mail link to one, and OBSERVE of one is answered as for a game that does not exist, no
    confirmation code mailed."""
    from dataclasses import replace

    root = tmp_path / "site"
    gapp.use_settings(
        replace(
            gapp.settings,
            bot=replace(gapp.settings.bot, archive_dir=str(root), public_url="https://races.example.org/"),
        )
    )
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2", sender=PAT))
    cycle(gapp)
    _paced(gapp)
    assert "Results of" in str(last(gapp, PAT)["Subject"]), "a turn was resolved"
    assert not (root / "practice1").exists()
    assert not any("races.example.org" in body_of(m) for m in mails(gapp, PAT)), "no link to a page not there"
    stranger_says(gapp, "other@example.net", "OBSERVE practice1")
    answer = last(gapp, "other@example.net")
    assert "No game by that name" in str(answer["Subject"]) + body_of(answer)
    assert "[confirm" not in str(answer["Subject"])


def test_a_strangers_join_of_a_practice_game_is_answered_as_a_missing_name(gapp: TestApp) -> None:
    """A practice game is its person's alone (docs/DESIGN.md, "Practice games"): a stranger's
    `JOIN practice1` is answered exactly as a JOIN of a name no game has, so the answer does not
    tell that the name is taken (never "not open for sign-ups")."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    _confirm(gapp)
    stranger_says(gapp, "one@example.net", "JOIN practice1")
    stranger_says(gapp, "two@example.net", "JOIN practice9")
    practice_answer, missing_answer = last(gapp, "one@example.net"), last(gapp, "two@example.net")
    assert str(practice_answer["Subject"]) == str(missing_answer["Subject"])
    assert body_of(practice_answer) == body_of(missing_answer)
    assert "No game by that name" in str(missing_answer["Subject"]) + body_of(missing_answer)


def test_practice_letters_say_no_gm_no_deadline_and_when_the_race_closes(gapp: TestApp) -> None:
    """A practice race has no GM and no deadline, so no letter of it says
    "due by the GM's call" or "if nothing arrives by then, you get the default"; each says the
    race closes after `[practice] idle_days` days without orders (the setting `expire_idle`
    applies). The welcome comes before the sheet: it is the top of the first sheet, one mail."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    before = len(mails(gapp, PAT))
    sheet = _confirm(gapp)
    started = mails(gapp, PAT)[before:]
    assert len(started) == 1, [str(m["Subject"]) for m in started]
    first = body_of(started[0])
    assert first.index("is your practice game of Racecraft") < first.index("Your orders for")
    for text in ("USE 99", "ORDERS", "Thanks, looking forward to it!", "USE 1", "CLEAR", "WAIT"):
        gapp.inbox.deliver(reply_to(sheet, text, sender=PAT, quote=False))
        cycle(gapp)
    gapp.inbox.deliver(reply_to(sheet, "NOWAIT", sender=PAT, quote=False))
    cycle(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2", sender=PAT))
    cycle(gapp)
    _paced(gapp)
    letters = mails(gapp, PAT)[before:]
    subjects = [str(m["Subject"]) for m in letters]
    assert any("Results of" in s for s in subjects), subjects
    closes = f"closed after {gapp.settings.practice.idle_days} days without orders"
    for mail in letters:
        text = " ".join((str(mail["Subject"]) + "\n" + body_of(mail)).split())
        assert "GM's call" not in text and "If nothing arrives" not in text, text
        assert "you get the default" not in text, text
        if "Results of" in str(mail["Subject"]) or "Your orders" in text or "Nothing is on file" in text:
            assert closes in text, text
    assert sum("Nothing is on file" in body_of(m) for m in letters) >= 3, "USE 99, ORDERS and the note say so"
    assert any("are cleared" in body_of(m) for m in letters)


def test_practice_caps_count_the_mailbox_not_the_address_string(gapp: TestApp) -> None:
    """One catch-all mailbox answered its own codes through plus-tags (`farm+1@`,
    `farm+2@` ...) and started a game for each. The caps count the mailbox (the address without
    its sub-address tag, case-folded): `farm+N@` and `Farm@` run at most `OPEN_PER_ADDRESS`."""
    for number in range(1, 7):
        sender = f"{'Farm' if number % 2 else 'farm'}+{number}@example.net"
        stranger_says(gapp, sender, "PRACTICE racecraft")
        answers = mails(gapp, sender.lower())
        code_mail = answers[-1] if answers else None
        if code_mail is not None and "[confirm practice." in str(code_mail["Subject"]):
            gapp.inbox.deliver(reply_to(code_mail, "Yes please", sender=sender))
            cycle(gapp)
    with gapp.db.read() as session:
        started = session.scalar(select(func.count()).select_from(Game).where(Game.practice.is_(True)))
    assert started == practice.OPEN_PER_ADDRESS


def test_strangers_of_one_domain_and_a_practice_players_next_practice_are_capped(gapp: TestApp) -> None:
    """Caps per domain for strangers (a catch-all domain has endless local parts), and
    a practice player's next PRACTICE (from the practice game's reply address, which proves the
    address) does not skip them: a person known only by practice games is a stranger to them."""
    for number in range(practice.STARTED_PER_DOMAIN_PER_DAY + 2):
        sender = f"racer{number}@farm.example"
        stranger_says(gapp, sender, "PRACTICE speedphreakz")
        answers = mails(gapp, sender)
        code_mail = answers[-1] if answers else None
        if code_mail is not None and "[confirm practice." in str(code_mail["Subject"]):
            gapp.inbox.deliver(reply_to(code_mail, "Yes please", sender=sender))
            cycle(gapp)
    with gapp.db.read() as session:
        started = session.scalar(select(func.count()).select_from(Game).where(Game.practice.is_(True)))
    assert started == practice.STARTED_PER_DOMAIN_PER_DAY
    sheet = next(m for m in mails(gapp, "racer0@farm.example") if str(m["Subject"]).startswith("[practice"))
    gapp.inbox.deliver(reply_to(sheet, "PRACTICE racecraft", sender="racer0@farm.example"))
    cycle(gapp)
    assert "Addresses at your domain started the most practice games" in body_of(last(gapp, "racer0@farm.example"))
    with gapp.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Game)) == practice.STARTED_PER_DOMAIN_PER_DAY


def test_practice_games_running_on_the_whole_bot_are_bounded(gapp: TestApp) -> None:
    """A bound on the practice games running on the whole bot (`[practice]
    running_max`, config.example.toml), with a clear answer when it is full."""
    from dataclasses import replace

    gapp.use_settings(replace(gapp.settings, practice=replace(gapp.settings.practice, running_max=1)))
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    _confirm(gapp)
    stranger_says(gapp, "late@example.org", "PRACTICE racecraft")
    answer = last(gapp, "late@example.org")
    assert "the bot is full" in str(answer["Subject"])
    assert "Try again later" in body_of(answer)
    with gapp.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Game)) == 1


def test_a_persons_practice_games_share_one_hourly_allowance(gapp: TestApp) -> None:
    """ "a practice game's mail counts against its person's caps": the loop limit
    (`[limits] mails_per_sender_per_hour`) counts every practice game of one mailbox together,
    so a second practice race is no second allowance of answers."""
    from dataclasses import replace

    limit = 4
    gapp.use_settings(replace(gapp.settings, limits=replace(gapp.settings.limits, mails_per_sender_per_hour=limit)))
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    first = _confirm(gapp)
    gapp.inbox.deliver(reply_to(first, "PRACTICE racecraft", sender=PAT, quote=False))
    cycle(gapp)
    second = last(gapp, PAT)
    assert str(second["Subject"]).startswith("[practice2]"), str(second["Subject"])
    told = len(mails(gapp, PAT))
    for sheet in (first, second, first, second, first, second):
        gapp.inbox.deliver(reply_to(sheet, "ORDERS", sender=PAT, quote=False))
        cycle(gapp)
    answered = len(mails(gapp, PAT)) - told
    assert answered == limit - 1, answered  # the second PRACTICE was one of the mails of the hour


def test_answers_to_strangers_are_capped_per_mailbox_and_per_domain(gapp: TestApp) -> None:
    """The stranger caps count the mailbox (`Farm+1@` is `farm@`: at most
    `STRANGER_REPLIES_PER_DAY` answers a day to it) and the domain (`[limits]
    answers_to_strangers_per_domain_per_day`, config.example.toml), so a catch-all mailbox or
    domain cannot farm codes through endless local parts."""
    from dataclasses import replace

    for number in range(STRANGER_REPLIES_PER_DAY + 2):
        stranger_says(gapp, f"Farm+{number}@example.net", "HELP")
    answered = sum(len(mails(gapp, f"farm+{n}@example.net")) for n in range(STRANGER_REPLIES_PER_DAY + 2))
    assert answered == STRANGER_REPLIES_PER_DAY
    per_domain = 4
    limits = replace(gapp.settings.limits, answers_to_strangers_per_domain_per_day=per_domain)
    gapp.use_settings(replace(gapp.settings, limits=limits))
    for number in range(per_domain + 3):
        stranger_says(gapp, f"racer{number}@catchall.example", "HELP")
    assert sum(len(mails(gapp, f"racer{n}@catchall.example")) for n in range(per_domain + 3)) == per_domain


def test_a_practice_turn_waits_for_its_pace_and_the_confirmation_says_until_when(gapp: TestApp) -> None:
    """A practice turn resolves no sooner than `[practice] turn_minutes`
    after it opened (`turns.resolves_from`, applied by `turns.is_due`), however fast the orders
    come; the confirmation says when, from the same rule."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2", sender=PAT, quote=False))
    cycle(gapp)
    confirmation = last(gapp, PAT)
    assert "Orders received" in str(confirmation["Subject"])
    assert "minutes after it opened at the soonest" in words_of(confirmation)
    assert "at the soonest, Mon 5 Jan 2026 09:03 GMT." in words_of(confirmation)
    assert isinstance(gapp.clock, FakeClock)
    gapp.clock.advance(timedelta(minutes=gapp.settings.practice.turn_minutes) - timedelta(seconds=1))
    cycle(gapp)
    assert "Results of" not in str(last(gapp, PAT)["Subject"]), "not before its pace"
    gapp.clock.advance(timedelta(seconds=1))
    cycle(gapp)
    assert "Results of" in str(last(gapp, PAT)["Subject"])


def test_practice_easy_races_against_easy_robots(gapp: TestApp) -> None:
    """ "a second, easier level for newcomers (`PRACTICE <game> EASY`)". From a
    stranger (through the code) and from a proven address (at once): every robot seat of the
    game is stored at the easy level and the welcome says so (without EASY: the normal level,
    `test_a_strangers_practice_is_double_opt_in_then_a_race_against_robots`)."""
    stranger_says(gapp, PAT, "PRACTICE racecraft easy")
    sheet = _confirm(gapp)
    assert {s.robot_level for s in _game(gapp).seats if s.robot} == {"easy"}
    assert "against 4 easy robot drivers" in words_of(sheet)
    gapp.inbox.deliver(reply_to(sheet, "PRACTICE speedphreakz EASY", sender=PAT))
    cycle(gapp)
    assert {s.robot_level for s in _game(gapp, "practice2").seats if s.robot} == {"easy"}


def test_words_for_the_gm_in_a_practice_race_are_passed_to_nobody_and_the_answer_says_so(gapp: TestApp) -> None:
    """A practice race has no GM (mail-interface.md, practice: "a practice game of that person
    against robots"): a question for the GM is not passed on, and the answer never claims it is;
    it says so and points to the rules."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "Dear GM, what happens if I run out of EP?", sender=PAT, quote=False))
    cycle(gapp)
    answer = last(gapp, PAT)
    text = " ".join((str(answer["Subject"]) + "\n" + body_of(answer)).split())
    assert "went to the GM" not in text and "passed on to the GM" not in text, text
    assert "who answers it" not in text, text
    assert "a practice race has no gm" in text.lower(), text
    assert "RULES practice1" in text, text
    with gapp.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "intake_words_for_gm")) == 0


def test_a_farewell_in_a_practice_race_is_told_how_the_race_closes(gapp: TestApp) -> None:
    """ "I give up, bye" in a practice race (no GM to pass it to): the answer says how to close
    the race now (RESIGN practice1) and that, left alone, it is closed after the idle days."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "I give up, bye", sender=PAT, quote=False))
    cycle(gapp)
    text = " ".join(body_of(last(gapp, PAT)).split())
    days = gapp.settings.practice.idle_days
    assert "To close the race now, send RESIGN practice1" in text, text
    assert f"it is closed after {days} days without orders from you" in text, text


def test_wait_and_nowait_are_refused_in_a_practice_race(gapp: TestApp) -> None:
    """WAIT holds a turn "until its deadline" (mail-interface.md); a practice race has none, so a
    held practice turn would never resolve: WAIT and NOWAIT are refused, saying why, and the
    turn still resolves once the orders are in."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    for verb in ("WAIT", "NOWAIT"):
        gapp.inbox.deliver(reply_to(sheet, verb, sender=PAT, quote=False))
        cycle(gapp)
        answer = last(gapp, PAT)
        text = words_of(answer)
        assert "[ERROR]" in str(answer["Subject"]), str(answer["Subject"])
        assert f"{verb} is refused" in text and "no deadline" in text, text
    gapp.inbox.deliver(reply_to(sheet, "WAIT\nUSE 2", sender=PAT, quote=False))
    cycle(gapp)
    _paced(gapp)
    assert any("Results of" in str(m["Subject"]) for m in mails(gapp, PAT))


def test_a_strangers_practice_inside_a_greeting_line_is_read(gapp: TestApp) -> None:
    """A playtester's first mail was "Hi! PRACTICE racecraft please" and was answered "You are
    not in a game here": the command inside the greeting line is read, and answered as PRACTICE
    is, with the code to confirm (which echoes what was read)."""
    stranger_says(gapp, PAT, "Hi! PRACTICE racecraft please")
    answer = last(gapp, PAT)
    assert "[confirm practice." in str(answer["Subject"]), str(answer["Subject"])
    assert "practice race of Racecraft" in words_of(answer)


def test_a_practice_confirmation_never_says_the_turn_may_resolve_before_its_soonest_time(gapp: TestApp) -> None:
    """Played by mail (playfix C3): the confirmation said "the turn resolves 3 minutes after it
    opened at the soonest, Mon 5 Jan 2026 09:03 GMT", then "The turn resolves as soon as every
    order is in, which may be before then" -- it cannot resolve before 09:03. One statement of
    when the turn resolves, the practice one."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2", sender=PAT, quote=False))
    cycle(gapp)
    body = words_of(last(gapp, PAT))
    assert "at the soonest, Mon 5 Jan 2026 09:03 GMT." in body, body
    assert "which may be before then" not in body, body


def test_a_practice_status_says_when_the_turn_resolves_at_the_soonest(gapp: TestApp) -> None:
    """A practice race has no deadline: its STATUS says when the turn resolves instead (as soon
    as the orders are in, not before its pace: `turns.soonest_text`, the confirmation's time)."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "USE 2\nSTATUS", sender=PAT, quote=False))
    cycle(gapp)
    body = words_of(last(gapp, PAT))
    assert (
        "A practice race has no GM and no deadline: the turn resolves as soon as your orders are in, "
        "3 minutes after it opened at the soonest, Mon 5 Jan 2026 09:03 GMT."
    ) in body, body


def test_a_practice_ping_says_no_gm_and_no_deadline(gapp: TestApp) -> None:
    """PING from a practice race's seat says where its game stands: a practice race has no GM
    and no deadline, so never "due at the GM call"."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "PING", sender=PAT, quote=False))
    cycle(gapp)
    body = words_of(last(gapp, PAT))
    assert "GM call" not in body, body
    assert "a practice race: it has no GM and no deadline, and the turn resolves as soon as your orders are in" in body


def test_the_closing_of_a_practice_race_names_the_command_for_a_new_one(gapp: TestApp) -> None:
    """Played by mail (playfix m2): the closing letter said "Send PRACTICE <game> for a new one";
    PRACTICE takes a kind of game (mail-interface.md: "`PRACTICE <game kind>`"): it names the
    race's own, "PRACTICE racecraft"."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    _confirm(gapp)
    assert isinstance(gapp.clock, FakeClock)
    gapp.clock.advance(timedelta(days=gapp.settings.practice.idle_days + 1))
    cycle(gapp)
    body = words_of(last(gapp, PAT))
    assert "is closed" in body and "PRACTICE racecraft" in body, body
    assert "<game>" not in body, body


def test_the_closing_of_a_practice_race_names_its_game_as_players_write_it(gapp: TestApp) -> None:
    """README: "a practice race (`racecraft`, `speed-circuit`, `speedphreakz`)". The closing letter of a Speed Circuit practice said
    "Send PRACTICE speed_circuit for a new one" (the name the code stores); it writes the
    game's name as players write it."""
    stranger_says(gapp, PAT, "PRACTICE speed-circuit")
    _confirm(gapp)
    assert isinstance(gapp.clock, FakeClock)
    gapp.clock.advance(timedelta(days=gapp.settings.practice.idle_days + 1))
    cycle(gapp)
    body = words_of(last(gapp, PAT))
    assert "is closed" in body and "Send PRACTICE speed-circuit for a new one" in body, body


def test_a_practice_player_is_named_by_the_display_name_of_their_from_case_kept(gapp: TestApp) -> None:
    """A practice player's name came from the address's local part, lower-cased ("Hello pat,"):
    names keep their case, and the display name of the From is the person's name when there is
    one ("Hello Pat McKay,"); the seat is named after it as a JOIN's name names its seat. A From
    without a display name names the person by its local part as written ("Hello Sam.Jones,")."""
    who = "Pat McKay <Pat@Example.net>"
    stranger_says(gapp, who, "PRACTICE racecraft")
    code_mail = last(gapp, PAT)
    gapp.inbox.deliver(reply_to(code_mail, "Yes please", sender=who))
    cycle(gapp)
    sheet = next(m for m in mails(gapp, PAT) if str(m["Subject"]).startswith("[practice1]"))
    assert body_of(sheet).startswith("Hello Pat McKay,"), body_of(sheet)
    (person,) = [s for s in _game(gapp).seats if not s.robot]
    assert person.player.name == "Pat McKay" and person.name == "pat-mckay", (person.player.name, person.name)
    other = "Sam.Jones@example.net"
    stranger_says(gapp, other, "PRACTICE racecraft")
    gapp.inbox.deliver(reply_to(last(gapp, other.lower()), "Yes please", sender=other))
    cycle(gapp)
    sheet = next(m for m in mails(gapp, other.lower()) if str(m["Subject"]).startswith("[practice2]"))
    assert body_of(sheet).startswith("Hello Sam.Jones,"), body_of(sheet)  # no display name: the local part


def test_a_name_taken_from_a_lower_case_address_is_capitalised(gapp: TestApp) -> None:
    """Played by mail (playtest4, P3): "PRACTICE racecraft" from zoe@example.org (no display
    name) was answered "Hello zoe,": a name taken from an address is written as a name ("Hello
    Zoe,"); a name the person gave (the From's display name) is used as written (above)."""
    zoe = "zoe@example.org"
    stranger_says(gapp, zoe, "PRACTICE racecraft")
    gapp.inbox.deliver(reply_to(last(gapp, zoe), "Yes please", sender=zoe))
    cycle(gapp)
    sheet = next(m for m in mails(gapp, zoe) if str(m["Subject"]).startswith("[practice1]"))
    assert body_of(sheet).startswith("Hello Zoe,"), body_of(sheet)
    (person,) = [s for s in _game(gapp).seats if not s.robot]
    assert person.player.name == "Zoe" and person.name == "zoe", (person.player.name, person.name)


def test_a_command_beside_practice_is_named_as_not_done(gapp: TestApp) -> None:
    """Played by mail (playtest4): "PRACTICE racecraft / TIMEZONE America/New_York" got the code
    mail alone; TIMEZONE was neither done nor refused, and the race's mail came in the site's
    zone. The code mail names it as not done, and says when to send it."""
    stranger_says(gapp, PAT, "PRACTICE racecraft\nTIMEZONE America/New_York")
    text = " ".join(body_of(last(gapp, PAT)).split())
    assert "Your mail also asked for TIMEZONE: not done" in text, text
    assert "Send it in reply to the race's first turn sheet." in text
    stranger_says(gapp, "kim@example.net", "PRACTICE racecraft")
    assert "also asked" not in body_of(last(gapp, "kim@example.net"))


def test_an_incomplete_set_in_a_practice_race_is_told_the_race_waits_for_the_missing_part(gapp: TestApp) -> None:
    """A practice race has no deadline: a turn resolves "as soon as the person orders"
    (mail-interface.md, PRACTICE), that is on a complete set (`turns.is_due`), and the race is
    closed when left alone. Played by mail (playtest5 PR2): a set lacking its SPEED was told "At
    the deadline the game's default fills what is missing" and "the turn resolves 3 minutes after
    it opened at the soonest" -- and the turn never resolved. The confirmation says what is
    missing, that the race waits for it, and when the race is closed."""
    stranger_says(gapp, PAT, "PRACTICE speed-circuit")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "TYRES OPTION", sender=PAT, quote=False))
    cycle(gapp)
    confirmation = last(gapp, PAT)
    body = words_of(confirmation)
    assert "Orders received" in str(confirmation["Subject"]), str(confirmation["Subject"])
    assert "That set is not complete. It lacks:" in body, body
    assert "the car's design: a DESIGN line" in body, body
    assert "deadline" not in body.replace("no deadline", ""), body
    assert "default fills" not in body, body
    assert "when the turn resolves" not in body, body
    days = gapp.settings.practice.idle_days
    assert (
        "The race waits for it: the turn resolves once your set is complete, 3 minutes after it opened at "
        "the soonest, Mon 5 Jan 2026 09:03 GMT."
    ) in body, body
    assert f"The race is closed after {days} days without orders from you." in body, body
    gapp.inbox.deliver(reply_to(sheet, "ORDERS", sender=PAT, quote=False))
    cycle(gapp)
    orders = words_of(last(gapp, PAT))
    assert "default fills" not in orders and "the deadline" not in orders, orders
    assert "It lacks: - the car's design: a DESIGN line" in orders, orders
    assert "The race waits for it: the turn resolves once your set is complete." in orders, orders
    gapp.inbox.deliver(reply_to(sheet, "Is this thing on?", sender=PAT, quote=False))
    cycle(gapp)
    note = words_of(last(gapp, PAT))
    assert "default fills" not in note, note
    _paced(gapp)
    assert "Results of" not in str(last(gapp, PAT)["Subject"]), "the turn waits for the set"


def test_resign_closes_a_practice_race_and_says_so(gapp: TestApp) -> None:
    """A practice race is its person's against robots ("expire when left alone"): RESIGN closes
    it at once, and the answer says so. Played by mail (playtest5 PR3): "zoe is out of practice1
    from Race turn 1 (leader on lap 1 of 3) on" -- a race nobody runs in any more."""
    stranger_says(gapp, PAT, "PRACTICE racecraft")
    sheet = _confirm(gapp)
    gapp.inbox.deliver(reply_to(sheet, "RESIGN practice1\nThat was fun, bye", sender=PAT, quote=False))
    cycle(gapp)
    answers = [m for m in mails(gapp, PAT) if "resigned" in str(m["Subject"])]
    assert len(answers) == 1, [str(m["Subject"]) for m in mails(gapp, PAT)]
    text = words_of(answers[0])
    assert "You left the practice race practice1; it is closed." in text, text
    assert " is out of practice1 from " not in text, text
    assert _game(gapp).status == GameStatus.FINISHED
    told = len(mails(gapp, PAT))
    _paced(gapp)
    assert len(mails(gapp, PAT)) == told, "nothing more of the race"
