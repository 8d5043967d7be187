"""A championship season through a real Dovecot and a real SMTP relay (issue 42, "Measured": "a
3-race season of 8 drivers ..., with a no-show, a substitute, a dropped result and a tie on
points broken by countback, to the final table").

Eight drivers race three Racecraft races of a season (scoring custom:10,6,4: the top three
score, so the drivers behind them are level on points and placed by countback; one result
dropped; a no-show loses 3 points). One driver never orders in race 1 (the no-show); in race 2
the GM hands a seat to a substitute by mail (REPLACE), who drives it on and into race 3. The bot
makes races 2 and 3 itself as the one before ends, seats them in grid order from the table, and
every final result carries the table; the last one's table is the one worked out from the three
races' final results as the players were mailed them.

Two tiers, and the substitutes bench, are not built yet (docs/championships.md): this season is
one tier, and the substitute comes by the GM's REPLACE."""

from __future__ import annotations

import re
from datetime import timedelta
from email.message import EmailMessage

from bot.games import seasons
from bot.games.turns import PlayerSpec, create_game
from bot.testing import FakeClock, body_of, reply_to
from rules.season import Finish, Outcome, RaceResult, ScoringTable, SeasonRules, standings
from tests.e2e.conftest import MailWorld
from tests.e2e.test_game_by_mail import cycle, read_inbox

DRIVERS = ("ada", "ben", "cyd", "dov", "eli", "fay", "gus", "hal")
NO_SHOW = "hal"  # never orders in race 1
REPLACED, SUBSTITUTE = "gus", "sub"  # race 2: gus's seat to sub


def _sheets(world: MailWorld, address: str, game: str) -> list[EmailMessage]:
    return [
        m
        for m in read_inbox(world, address)
        if f"[{game}]" in str(m["Subject"]) and m["Reply-To"] is not None and "received" not in str(m["Subject"])
    ]


def _final_places(text: str) -> list[tuple[int, list[str], bool]]:
    """The final result a mail carries: (place, seats, did not finish) a line."""
    block = text.replace("\r\n", "\n").split("\nFinal result:\n")[-1].split("\n\n", 1)[0]
    found = []
    for place, seats, note in re.findall(r"(\d+)\. ([a-z]+(?:, [a-z]+)*)( \([^)]*\))?", block):
        found.append((int(place), seats.split(", "), bool(note)))
    return found


def test_a_three_race_season_of_eight_drivers_by_real_mail(world: MailWorld) -> None:
    tag = world.domain.split(".")[0]
    address = {d: world.player(f"{d}-{tag}") for d in (*DRIVERS, SUBSTITUTE)}
    gm = world.player(f"gm-{tag}")
    clock = world.app.clock
    assert isinstance(clock, FakeClock)
    with world.app.db.transaction() as session:
        create_game(
            world.app.shell, session, kind="racecraft", name="cup-r1", gm_address=gm, deadline="48h", seed=11,
            options={"turns": "3"}, players=[PlayerSpec(d, address[d], d.title()) for d in DRIVERS],
        )  # fmt: skip
        seasons.create_season(
            world.app.shell,
            session,
            seasons.SeasonSettings(
                name="cup",
                kind="racecraft",
                gm_address=gm,
                scoring="custom:10,6,4",
                drop=1,
                no_show_penalty=3,
                races=3,
                games=("cup-r1",),
            ),  # fmt: skip
        )
    world.app.service.send()
    holder = {d: d for d in DRIVERS}  # seat -> who drives it (by driver name)
    mailed: dict[int, list[tuple[int, list[str], bool]]] = {}
    seat_of_round: dict[int, dict[str, str]] = {}
    for round_ in (1, 2, 3):
        game = f"cup-r{round_}"
        with world.app.db.read() as session:
            row = seasons.find_season(session, "cup")
            assert row is not None and len(row.races) == round_, f"race {round_} made by the bot"
            seats = {s.name: s.player.address for s in row.races[-1].game.seats}
        seat_of_round[round_] = {seat: next(d for d, a in address.items() if a == addr) for seat, addr in seats.items()}
        for turn in (1, 2):
            if round_ == 2 and turn == 2:  # the GM hands gus's seat to a substitute, by mail
                copy = [m for m in read_inbox(world, gm) if f"[{game}]" in str(m["Subject"])][-1]
                world.dovecot.deliver(
                    world.bot, reply_to(copy, f"REPLACE {game} {REPLACED} {address[SUBSTITUTE]} Sub", sender=gm)
                )
                cycle(world)
                holder[REPLACED] = SUBSTITUTE
                seat_of_round[round_][REPLACED] = SUBSTITUTE
            for seat, driver in seat_of_round[round_].items():
                if round_ == 1 and driver == NO_SHOW:
                    continue
                sheet = _sheets(world, address[driver], game)[-1]
                orders = f"USE {(DRIVERS.index(seat) * (round_ + 2)) % 8}" if turn == 1 else "CRUISE"
                world.dovecot.deliver(world.bot, reply_to(sheet, orders, sender=address[driver]))
                cycle(world)
            if round_ == 1:  # the no-show's deadline
                clock.advance(timedelta(hours=49))
                cycle(world)
        cycle(world)  # the final sprint needs no orders
        cycle(world)  # the next race, made at the tick after
        final = [m for m in read_inbox(world, address["ada"]) if f"[{game}] Final result" in str(m["Subject"])]
        assert len(final) == 1, game
        text = body_of(final[0])
        assert f"Season cup (Racecraft), after {round_} of 3 races" in text
        mailed[round_] = _final_places(text)

    # The season's table as the last final result mailed it ...
    last_text = body_of(
        [m for m in read_inbox(world, address["ada"]) if "[cup-r3] Final result" in str(m["Subject"])][0]
    )
    table_text = last_text.replace("\r\n", "\n").split("Season cup (Racecraft)", 1)[1]
    shown = re.findall(r"^(\d+)([=*]?)\s+(\S+)\s+(-?\d+)  (.+)$", table_text, re.M)
    assert len(shown) == len(DRIVERS) + 1, table_text  # eight drivers and the substitute

    # ... is the one worked out from the three races' final results as mailed.
    results = []
    for round_, places in mailed.items():
        finishes = []
        for place, seats, dnf in places:
            for seat in seats:
                driver = seat_of_round[round_][seat]
                if round_ == 1 and driver == NO_SHOW:
                    finishes.append(Finish(driver, Outcome.NO_SHOW))
                else:
                    finishes.append(
                        Finish(driver, Outcome.DID_NOT_FINISH) if dnf else Finish(driver, Outcome.FINISHED, place)
                    )
        results.append(RaceResult(round_, 0, tuple(finishes)))
    expected = standings(SeasonRules(ScoringTable.parse("custom:10,6,4"), drop=1, no_show_penalty=3), results)
    assert sorted((str(r.place), r.driver.title(), str(r.points)) for r in expected) == sorted(
        (place, name, points) for place, _, name, points, _ in shown
    )
    by = {name: cells for _, _, name, _, cells in shown}
    assert by["Hal"].split()[0] in ("0-3", "(0)-3"), "the no-show lost 3 points in race 1 (its 0 may be dropped)"
    assert by["Sub"].split()[0] == "-" and by["Sub"].split()[1] != "-", "the substitute from race 2"
    assert by["Gus"].split()[1:] == ["-", "-"], "gus's seat went to the substitute in race 2"
    assert any("(" in cells for cells in by.values()), "a dropped result"
    # A tie on points broken by countback: level drivers at different places.
    level = [r for r in expected if r.tied and sum(1 for o in expected if o.place == r.place) == 1]
    assert level, "a tie on points placed by countback"
    assert any(mark == "*" for _, mark, _, _, _ in shown)
    with world.app.db.read() as session:
        season = seasons.find_season(session, "cup")
        assert season is not None and season.status == "finished" and len(season.races) == 3
