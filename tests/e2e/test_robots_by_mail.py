"""Robot drivers through a real Dovecot and a real SMTP relay: a game with robot seats
played to the end by the people alone, and a practice race asked for and played by mail.

The requirement: "`flagman game new ... --robot NAME` (repeatable) adds a robot seat; ... a robot's
orders are on file as soon as a turn opens, so early resolution waits only for the people.
Robots are shown as robots in every standings table and result." and "`PRACTICE racecraft` ...
from anyone starts a practice game of that person against robots, with turns that resolve as
soon as the person orders, and mails the first sheet"."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

from bot.games.turns import PlayerSpec, create_game
from bot.ops.backup import replay_game
from bot.testing import body_of, plain_mail, reply_to
from tests.e2e.conftest import MailWorld
from tests.e2e.test_game_by_mail import cycle, read_inbox

PEOPLE = ("kelly", "seb", "steve")


def _latest_sheet(world: MailWorld, address: str) -> EmailMessage:
    """The newest mail of the game that carries the seat's reply address (a sheet or results)."""
    return [
        m
        for m in read_inbox(world, address)
        if "[ERROR]" not in str(m["Subject"])
        and m["Reply-To"] is not None
        and "Orders received" not in str(m["Subject"])
        and "Practice game" not in str(m["Subject"])
    ][-1]


def _recipients(world: MailWorld) -> set[str]:
    """Every envelope recipient the relay was given."""
    return {r.lower() for mail in world.sink.messages for r in mail.rcpt_tos}


def test_a_game_with_robot_seats_to_the_finish_by_real_mail(world: MailWorld) -> None:
    """Three people and two robots: each turn resolves when the three have replied (the robots'
    orders on file as it opens), nothing is mailed for the robots, the final result shows them as
    robots, and the game replays exactly from its stored orders."""
    tag = world.domain.split(".")[0]
    addresses = {seat: world.player(f"{seat}-{tag}") for seat in PEOPLE}
    gm = world.player(f"gm-{tag}")
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rr1",
            players=[PlayerSpec(s, a, s.title()) for s, a in addresses.items()],
            gm_address=gm,
            deadline="48h",
            seed=5,
            robot_seats=("robo", "tin"),
        )
    world.app.service.send()
    for turn in range(1, 5):
        for seat, address in addresses.items():
            sheet = _latest_sheet(world, address)
            assert f"Turn {turn} of 5" in body_of(sheet), (seat, turn)
            world.dovecot.deliver(world.bot, reply_to(sheet, "USE 1" if turn == 1 else "CRUISE", sender=address))
            cycle(world)
        cycle(world)
    cycle(world)  # the final sprint needs no orders
    for seat, address in addresses.items():
        final = read_inbox(world, address)[-1]
        assert "Final result" in str(final["Subject"]), (seat, final["Subject"])
        text = body_of(final)
        assert "robo (robot)" in text and "tin (robot)" in text
        assert "Defaulted" not in text
    bodies = "\n".join(body_of(m) for m in read_inbox(world, gm))
    assert "robo (robot)" in bodies
    assert _recipients(world) == {*addresses.values(), gm}, "nothing for the robots"
    with world.app.db.read() as session:
        assert all(not r.differences for r in replay_game(session, "rr1"))


def test_a_practice_race_by_real_mail(world: MailWorld) -> None:
    """A stranger mails PRACTICE racecraft, answers the code, and races to the finish against the
    robots: every turn resolves as soon as the person's orders are in (at the soonest `[practice]
    turn_minutes` after it opened); every subject carries the
    practice tag; no mail goes to anyone else."""
    tag = world.domain.split(".")[0]
    pat = world.player(f"pat-{tag}")
    world.dovecot.deliver(world.bot, plain_mail(pat, world.bot, "a race?", "PRACTICE racecraft"))
    cycle(world)
    code_mail = read_inbox(world, pat)[-1]
    assert "[confirm practice." in str(code_mail["Subject"])
    world.dovecot.deliver(world.bot, reply_to(code_mail, "Yes", sender=pat))
    cycle(world)
    for turn in range(1, 5):
        sheet = _latest_sheet(world, pat)
        assert str(sheet["Subject"]).startswith("[practice1]") and f"Turn {turn} of 5" in body_of(sheet), turn
        world.dovecot.deliver(world.bot, reply_to(sheet, "USE 2" if turn == 1 else "CRUISE", sender=pat))
        cycle(world)  # confirmed; the turn waits only for its pace ([practice] turn_minutes)
        world.clock.advance(timedelta(minutes=world.app.settings.practice.turn_minutes))
        cycle(world)  # resolved: the person is the only one the turn waits for
    cycle(world)
    mails = read_inbox(world, pat)
    final = mails[-1]
    assert "Final result" in str(final["Subject"]) and "[practice1]" in str(final["Subject"])
    assert "ada (robot)" in body_of(final)
    assert all("practice" in str(m["Subject"]) for m in mails)
    assert _recipients(world) == {pat}, "a practice game has no GM: nothing goes anywhere else"
    client = world.dovecot.imap_client(world.bot)
    try:
        assert client.search(["ALL"]) == [], "no GM copy came back to the bot's own address"
    finally:
        client.logout()
