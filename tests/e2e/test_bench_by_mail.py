"""The substitutes bench through a real Dovecot and a real SMTP relay: a seat hits the
NMR limit, the bench is offered it, one of the bench accepts, and plays the next turn.

The requirement: "A substitutes bench: players volunteer (`SUBSTITUTE ON <game kind>`); when a seat is
dropped or hits the NMR limit, the bot offers it to the bench by mail (first to accept takes it,
as REPLACE does today), a robot driving it meanwhile; the GM sees it in the digest; the taker is
credited."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

from sqlalchemy import select

from bot.games import reliability
from bot.games.turns import PlayerSpec, create_game
from bot.models import Player
from bot.store import find_game_row
from bot.testing import body_of, plain_mail, reply_to
from tests.e2e.conftest import MailWorld
from tests.e2e.test_game_by_mail import cycle, read_inbox

PEOPLE = ("kelly", "seb", "steve")  # steve sends nothing


def _latest_sheet(world: MailWorld, address: str) -> EmailMessage:
    """The newest mail of the game that carries the seat's reply address (a sheet or results)."""
    return [
        m
        for m in read_inbox(world, address)
        if "[ERROR]" not in str(m["Subject"])
        and m["Reply-To"] is not None
        and "Orders received" not in str(m["Subject"])
    ][-1]


def _deadline(world: MailWorld) -> None:
    world.clock.advance(timedelta(hours=49))
    cycle(world)


def test_a_seat_at_the_nmr_limit_is_taken_from_the_bench_by_real_mail(world: MailWorld) -> None:
    tag = world.domain.split(".")[0]
    addresses = {seat: world.player(f"{seat}-{tag}") for seat in PEOPLE}
    gm = world.player(f"gm-{tag}")
    sub, late = world.player(f"sub-{tag}"), world.player(f"late-{tag}")
    for address in (sub, late):  # strangers: on the bench once the code comes back
        world.dovecot.deliver(world.bot, plain_mail(address, world.bot, "bench", "SUBSTITUTE ON racecraft"))
        cycle(world)
        code_mail = read_inbox(world, address)[-1]
        assert "[confirm bench." in str(code_mail["Subject"])
        world.dovecot.deliver(world.bot, reply_to(code_mail, "Yes", sender=address))
        cycle(world)
        assert "You are on the substitutes bench of Racecraft" in body_of(read_inbox(world, address)[-1])
    with world.app.db.transaction() as session:
        game = create_game(
            world.app.shell,
            session,
            kind="racecraft",
            name="rb1",
            players=[PlayerSpec(s, a, s.title()) for s, a in addresses.items()],
            gm_address=gm,
            deadline="48h",
            seed=5,
            robot_seats=("robo", "tin"),
        )
        game.nmr_limit, game.nmr_action = 2, "drop"
    world.app.service.send()
    for turn in (1, 2):
        for seat in ("kelly", "seb"):
            sheet = _latest_sheet(world, addresses[seat])
            assert f"Turn {turn} of 5" in body_of(sheet), (seat, turn)
            world.dovecot.deliver(world.bot, reply_to(sheet, "USE 1", sender=addresses[seat]))
            cycle(world)
        _deadline(world)  # steve misses it
    # Steve reached the limit: his seat goes to a robot and is offered to the bench.
    assert "offered to the substitutes bench" in body_of(read_inbox(world, addresses["steve"])[-1])
    offers = {
        a: [m for m in read_inbox(world, a) if "A seat to take over" in str(m["Subject"])][-1] for a in (sub, late)
    }
    assert "steve in rb1" in str(offers[sub]["Subject"])
    world.dovecot.deliver(world.bot, reply_to(offers[sub], "Mine, thanks", sender=sub))
    cycle(world)
    world.dovecot.deliver(world.bot, reply_to(offers[late], "Me too", sender=late))
    cycle(world)
    assert "no longer on offer" in body_of(read_inbox(world, late)[-1])
    sheet = next(m for m in reversed(read_inbox(world, sub)) if "from the substitutes bench" in body_of(m))
    assert "Turn 3 of 5" in body_of(sheet)
    # The taker plays the next turn, answering their sheet; the turn resolves with their orders.
    world.dovecot.deliver(world.bot, reply_to(sheet, "CRUISE", sender=sub))
    cycle(world)
    for seat in ("kelly", "seb"):
        world.dovecot.deliver(
            world.bot, reply_to(_latest_sheet(world, addresses[seat]), "CRUISE", sender=addresses[seat])
        )
        cycle(world)
    cycle(world)
    results = read_inbox(world, sub)[-1]
    assert "Turn 4 of 5" in body_of(results), results["Subject"]
    gm_mail = "\n".join(body_of(m) for m in read_inbox(world, gm))
    assert "offered to the 2 people of the substitutes bench" in gm_mail and sub in gm_mail
    with world.app.db.read() as session:
        rb1 = find_game_row(session, "rb1")
        assert rb1 is not None
        assert next(s for s in rb1.seats if s.name == "steve").player.address == sub
        taker = session.scalar(select(Player).where(Player.address == sub))
        assert taker is not None
        found = reliability.record(session, taker)
        assert (found.substitute, found.turns, found.on_time) == (1, 1, 1)
