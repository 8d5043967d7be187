"""A championship season through a real Dovecot and a real SMTP relay ("a
3-race season of 8 drivers ..., with a no-show, a substitute, a dropped result and a tie on
points broken by countback, to the final table").

Eight drivers race three Racecraft races of a season (scoring custom:10,6,4: the top three
score, so the drivers behind them are level on points and placed by countback; one result
dropped; a no-show loses 3 points, a driver out by the NMR limit 2). One driver never orders in
race 1 (the no-show); in race 2 the GM hands a seat to a substitute by mail (REPLACE), who drives
it on and into race 3. In race 3 (NMR limit 1, the seat then dropped) a driver misses the first
turn: the seat is offered by mail to the substitutes bench, whose volunteer takes it by replying
and drives it to the end (docs/championships.md, "Scoring": the driver put out loses the NMR
penalty, the taker scores the seat's place; the taker's record credits the seat taken over).
The bot makes races 2 and 3 itself as the one before ends, seats them in grid order from the
table, and every final result carries the table; the last one's table is the one worked out from
the three races' final results as the players were mailed them.

The second test runs two tiers of four (Speed Circuit, two races a season) to the next season's tiers, drawn by the
bot and confirmed by the GM's reply to the digest, tier 2 scored F1 with a point for the pole
(`f1+pole:1`: the pole's holder's cell reads "25+1" when they also win, and the totals count
it), with a substitute from the bench: a stranger
mails SUBSTITUTE ON speed-circuit before the season; in tier 2's race 2 a driver RESIGNs by mail,
the bench is offered the seat by mail and the substitute takes it by replying, and drives it to
the end of that race, the season's last (a seat handed over driven on into a further race of the
season: the first test). The table counts the leaver as not finishing race 2 (no
penalty, docs/championships.md "Scoring") and the substitute as the seat's driver from then on;
the substitute, holding a seat of the last race, goes on into the next season's tiers and the
leaver does not; RECORD by mail credits the substitute with the seat taken over.

Each of the two runs on one database (the first on PostgreSQL, the second on SQLite): the
database cannot change a season's words, and the last test proves it, a small series in two
tiers (next races made under the season's lock, the draw stored, confirmed by each tier's GM,
the next season made) sending the same mails on SQLite and on PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.games import reliability, season_tiers, seasons
from bot.games.turns import PlayerSpec, create_game
from bot.models import Game, Player, Season, SeasonDraw, Seat
from bot.testing import FakeClock, FakeMailer, TestApp, body_of, plain_mail, reply_to, words_of
from rules import find_game
from rules.season import Finish, Outcome, RaceResult, ScoringTable, SeasonRules, standings
from tests.e2e.conftest import MailWorld
from tests.e2e.test_game_by_mail import cycle, read_inbox
from tests.servers import Postgres

DRIVERS = ("ada", "ben", "cyd", "dov", "eli", "fay", "gus", "hal")
NO_SHOW = "hal"  # never orders in race 1
REPLACED, SUBSTITUTE = "gus", "sub"  # race 2: gus's seat to sub
NMR_ROUND, PUT_OUT, VOLUNTEER = 3, "ben", "vol"  # race 3: ben out by the NMR limit, his seat to vol from the bench


def _sheets(world: MailWorld, address: str, game: str) -> list[EmailMessage]:
    return [
        m
        for m in read_inbox(world, address)
        if f"[{game}]" in str(m["Subject"]) and m["Reply-To"] is not None and "received" not in str(m["Subject"])
    ]


def _final_places(text: str, handed: dict[str, str] | None = None) -> list[tuple[int, list[str], bool]]:
    """The final result a mail carries: (place, seats, did not finish) a line. A seat handed to
    another person is named "seat (Holder)" there (docs/DESIGN.md, "Seats that change hands"):
    `handed` gives those seats' holders, each label must be in the result and reads as its seat,
    so that only a place's own note, "(did not finish)", marks a driver who did not finish."""
    block = text.replace("\r\n", "\n").split("\nFinal result:\n")[-1].split("\n\n", 1)[0]
    for seat, holder in (handed or {}).items():
        label = re.compile(rf"(?<![\w-]){re.escape(seat)} \({re.escape(holder)}\)")
        assert label.search(block), f"{seat} ({holder}) in the final result: {block}"
        block = label.sub(seat, block)
    found = []
    for place, seats, note in re.findall(r"(\d+)\. ([a-z]+(?:, [a-z]+)*)( \([^)]*\))?", block):
        found.append((int(place), seats.split(", "), bool(note)))
    return found


# One database each (the database cannot change a season's words: the small series at the end of
# this file proves it on both): this one on PostgreSQL, the two tiers on SQLite.
@pytest.mark.parametrize("world", ["sqlite"], indirect=True)
def test_a_three_race_season_of_eight_drivers_by_real_mail(world: MailWorld) -> None:
    tag = world.domain.split(".")[0]
    address = {d: world.player(f"{d}-{tag}") for d in (*DRIVERS, SUBSTITUTE, VOLUNTEER)}
    gm = world.player(f"gm-{tag}")
    clock = world.app.clock
    assert isinstance(clock, FakeClock)
    _sit_on_the_bench(world, address[VOLUNTEER], "racecraft")
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
                nmr_penalty=2,
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
        if round_ == NMR_ROUND:  # the GM's settings for the last race (`flagman gm configure`)
            with world.app.db.transaction() as session:
                row = seasons.find_season(session, "cup")
                assert row is not None
                row.races[-1].game.nmr_limit, row.races[-1].game.nmr_action = 1, "drop"
        for turn in (1, 2):
            if round_ == 2 and turn == 2:  # the GM hands gus's seat to a substitute, by mail
                copy = [m for m in read_inbox(world, gm) if f"[{game}]" in str(m["Subject"])][-1]
                world.dovecot.deliver(
                    world.bot, reply_to(copy, f"REPLACE {game} {REPLACED} {address[SUBSTITUTE]} Sub", sender=gm)
                )
                cycle(world)
                holder[REPLACED] = SUBSTITUTE
                seat_of_round[round_][REPLACED] = SUBSTITUTE
            if round_ == NMR_ROUND and turn == 2:  # ben's seat, put out, taken from the bench by mail
                _taken_from_the_bench(world, address[PUT_OUT], address[VOLUNTEER], game)
                seat_of_round[round_][PUT_OUT] = VOLUNTEER
            for seat, driver in seat_of_round[round_].items():
                if (round_, driver) in ((1, NO_SHOW), (NMR_ROUND, PUT_OUT)):
                    continue
                sheet = _sheets(world, address[driver], game)[-1]
                orders = f"USE {(DRIVERS.index(seat) * (round_ + 2)) % 8}" if turn == 1 else "CRUISE"
                world.dovecot.deliver(world.bot, reply_to(sheet, orders, sender=address[driver]))
                cycle(world)
            if round_ == 1 or (round_, turn) == (NMR_ROUND, 1):  # the no-show's, the NMR's deadline
                clock.advance(timedelta(hours=49))
                cycle(world)
        cycle(world)  # the final sprint needs no orders
        cycle(world)  # the next race, made at the tick after
        final = [m for m in read_inbox(world, address["ada"]) if f"[{game}] Final result" in str(m["Subject"])]
        assert len(final) == 1, game
        text = body_of(final[0])
        assert f"Season cup (Racecraft), after {round_} of 3 races" in " ".join(text.split())
        # The seat handed over reads "gus (Sub)" in the race it changed hands in and the next ones.
        handed = {REPLACED: SUBSTITUTE.title()} if round_ >= 2 else {}
        if round_ == NMR_ROUND:
            handed[PUT_OUT] = _name_of(world, address[VOLUNTEER])
        mailed[round_] = _final_places(text, handed)

    # The season's table as the last final result mailed it ...
    last_text = body_of(
        [m for m in read_inbox(world, address["ada"]) if "[cup-r3] Final result" in str(m["Subject"])][0]
    )
    table_text = last_text.replace("\r\n", "\n").split("Season cup (Racecraft)", 1)[1]
    shown = re.findall(r"^(\d+)([=*]?)\s+(\S+)\s+(-?\d+)  (.+)$", table_text, re.M)
    assert len(shown) == len(DRIVERS) + 2, table_text  # eight drivers, the substitute and the volunteer

    # ... is the one worked out from the three races' final results as mailed.
    results = []
    for round_, places in mailed.items():
        finishes = []
        for place, placed, dnf in places:
            for seat in placed:
                driver = seat_of_round[round_][seat]
                if round_ == 1 and driver == NO_SHOW:
                    finishes.append(Finish(driver, Outcome.NO_SHOW))
                else:
                    finishes.append(
                        Finish(driver, Outcome.DID_NOT_FINISH) if dnf else Finish(driver, Outcome.FINISHED, place)
                    )
        if round_ == NMR_ROUND:  # put out by the NMR limit, their seat gone on to the bench
            finishes.append(Finish(PUT_OUT, Outcome.NMR_OUT))
        results.append(RaceResult(round_, 0, tuple(finishes)))
    rules = SeasonRules(ScoringTable.parse("custom:10,6,4"), drop=1, no_show_penalty=3, nmr_penalty=2, races=3)
    expected = standings(rules, results)
    name_of = {d: d.title() for d in address} | {VOLUNTEER: _name_of(world, address[VOLUNTEER])}
    assert sorted((str(r.place), name_of[r.driver], str(r.points)) for r in expected) == sorted(
        (place, name, points) for place, _, name, points, _ in shown
    )
    by = {name: cells for _, _, name, _, cells in shown}
    assert by["Hal"].split()[0] in ("0-3", "(0)-3"), "the no-show lost 3 points in race 1 (its 0 may be dropped)"
    assert by["Sub"].split()[0] == "-" and by["Sub"].split()[1] != "-", "the substitute from race 2"
    assert by["Gus"].split()[1:] == ["-", "-"], "gus's seat went to the substitute in race 2"
    assert by["Ben"].split()[2] in ("0-2", "(0)-2"), "out by the NMR limit in race 3: 2 points lost"
    taker = by[name_of[VOLUNTEER]].split()
    assert taker[:2] == ["-", "-"] and taker[2] != "-" and "-" not in taker[2].strip("()"), "the seat's place"
    assert any("(" in cells for cells in by.values()), "a dropped result"
    # A tie on points broken by countback: level drivers at different places.
    level = [r for r in expected if r.tied and sum(1 for o in expected if o.place == r.place) == 1]
    assert level, "a tie on points placed by countback"
    assert any(mark == "*" for _, mark, _, _, _ in shown)
    with world.app.db.read() as session:
        season = seasons.find_season(session, "cup")
        assert season is not None and season.status == "finished" and len(season.races) == 3
        for who, line in ((VOLUNTEER, (1, 0)), (PUT_OUT, (0, 1))):  # the seat taken over; the game left
            person = session.scalars(select(Player).where(Player.address == address[who])).one()
            found = reliability.record(session, person)
            assert (found.substitute, found.abandoned) == line, who


def _taken_from_the_bench(world: MailWorld, leaver: str, volunteer: str, game: str) -> None:
    """The seat `leaver` held in `game`, dropped at the NMR limit, is offered by mail to the bench,
    whose `volunteer` takes it by replying; their sheet says so."""
    assert "offered to the substitutes bench" in words_of(read_inbox(world, leaver)[-1])
    offer = [m for m in read_inbox(world, volunteer) if "A seat to take over" in str(m["Subject"])]
    assert len(offer) == 1 and f"in {game}" in str(offer[0]["Subject"])
    world.dovecot.deliver(world.bot, reply_to(offer[0], "Mine", sender=volunteer))
    cycle(world)
    assert any("from the substitutes bench" in words_of(m) for m in _sheets(world, volunteer, game))


# -- two tiers, promotion and relegation ------------------------------------------------------------

TIERS = {"cup-a": ("ada", "ben", "cyd", "dov"), "cup-b": ("eli", "fay", "gus", "hal")}
TIER_NO_SHOW = "hal"  # tier 2, never orders in race 1
# Tier 1: two scoring places of four, so level drivers, placed by countback; tier 2: F1 points
# and a point for the pole (Speed Circuit's qualifying bid's winner), "25+1" in its cell.
TIER_SCORING = {"cup-a": "custom:3,1", "cup-b": "f1+pole:1"}
BENCH_ROUND, LEAVER, BENCH = 2, "gus", "sub"  # tier 2, race 2: gus resigns, sub takes his seat from the bench
TIER_RACES = 2  # a season of each tier: the bench's race the last, its taker going on into the next season


def _sit_on_the_bench(world: MailWorld, address: str, kind: str = "speed-circuit") -> None:
    """`address`, a stranger to the bot, on the bench of `kind` by mail: SUBSTITUTE ON, then the
    code sent back."""
    world.dovecot.deliver(world.bot, plain_mail(address, world.bot, "bench", f"SUBSTITUTE ON {kind}"))
    cycle(world)
    code_mail = read_inbox(world, address)[-1]
    assert "[confirm bench." in str(code_mail["Subject"])
    world.dovecot.deliver(world.bot, reply_to(code_mail, "Yes", sender=address))
    cycle(world)
    assert f"You are on the substitutes bench of {find_game(kind).title}" in words_of(read_inbox(world, address)[-1])


def _bench_substitute(world: MailWorld, address: dict[str, str], game: str, round_: int) -> None:
    """In tier 2's race 2, before its first orders, the leaver RESIGNs by mail: the seat goes to
    the robot and is offered by mail to the bench, whose one person takes it by replying, and
    drives it from its first orders to the season's end (and on into the next season)."""
    if game != f"cup-b-r{BENCH_ROUND}":
        return
    sheet = _sheets(world, address[LEAVER], game)[-1]
    world.dovecot.deliver(world.bot, reply_to(sheet, f"RESIGN {game}", sender=address[LEAVER]))
    cycle(world)
    assert "offered to the substitutes bench" in words_of(read_inbox(world, address[LEAVER])[-1])
    offer = [m for m in read_inbox(world, address[BENCH]) if "A seat to take over" in str(m["Subject"])]
    assert len(offer) == 1 and f"{LEAVER} in {game}" in str(offer[0]["Subject"])
    world.dovecot.deliver(world.bot, reply_to(offer[0], "I'll take it", sender=address[BENCH]))
    cycle(world)
    assert _seats(world, game)[LEAVER] == address[BENCH]
    assert any("from the substitutes bench" in words_of(m) for m in _sheets(world, address[BENCH], game))


def _deliver_all(world: MailWorld, address: dict[str, str], game: str, orders: str, skip: str | None) -> None:
    """`orders` from whoever holds each seat of `game` now, answering their newest turn sheet."""
    for seat, holder in _seats(world, game).items():
        if seat == skip:
            continue
        sheet = [m for m in _sheets(world, holder, game) if "Turn" in body_of(m)][-1]
        world.dovecot.deliver(world.bot, reply_to(sheet, orders, sender=holder))
    cycle(world)


def _pole(inbox: list[EmailMessage], game: str) -> str:
    """The seat first on `game`'s starting grid, as the results of its qualifying turn mailed it."""
    for mail in inbox:
        if f"[{game}]" in str(mail["Subject"]):
            found = re.search(r"Starting grid: 1\. ([a-z]+)", body_of(mail))
            if found:
                return found.group(1)
    raise AssertionError(f"no starting grid of {game} in the inbox")


def _total(cells: list[str]) -> int:
    """A driver's points as their cells of a table read (docs/championships.md, "The table"):
    each race's points and bonus (`18+1`) unless dropped (`(18+1)`), less every penalty (`-3`)."""
    total = 0
    for cell in cells:
        if cell == "-":
            continue
        found = re.fullmatch(r"(\()?(\d+)(?:\+(\d+))?\)?(?:-(\d+))?", cell)
        assert found, cell
        dropped, points, bonus, penalty = found.groups()
        total += (0 if dropped else int(points) + int(bonus or 0)) - int(penalty or 0)
    return total


def _seats(world: MailWorld, game: str) -> dict[str, str]:
    from bot.store import find_game_row

    with world.app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None, f"{game} made by the bot"
        return {s.name: s.player.address for s in row.seats}


def _name_of(world: MailWorld, address: str) -> str:
    with world.app.db.read() as session:
        return session.scalars(select(Player.name).where(Player.address == address)).one()


def _finished(world: MailWorld, game: str) -> bool:
    from bot.store import find_game_row

    with world.app.db.read() as session:
        row = find_game_row(session, game)
        return row is not None and str(row.status) == "finished"


@pytest.mark.parametrize("world", ["sqlite"], indirect=True)
def test_a_season_in_two_tiers_by_real_mail_to_the_next_seasons_tiers(world: MailWorld) -> None:
    """Eight drivers in two tiers of four (Speed Circuit, one lap; scoring custom:3,1 in tier 1,
    f1+pole:1 in tier 2; one result dropped, a no-show loses 3), two races each, made by the bot; the seasons made by the GM's
    mail (SERIES cup, TIER, UP 1 / DOWN 1); then the draw in the GM's digest, confirmed by
    replying SEASON <game> NEXT CONFIRM, makes the next season's tiers as worked out from the
    final tables mailed: the top of tier 2 up, the bottom of tier 1 down."""
    from bot.dice import SeededEntropy
    from bot.gm import digest
    from rules.season import TierSeason, draw_tiers

    # The dice's secrets fixed, as the games' seeds are: the same races every run, and so the
    # tie on points that countback breaks (tier 1's first two end level on 4 points).
    world.app.shell.entropy = SeededEntropy(0)
    tag = world.domain.split(".")[0]
    drivers = [d for tier in TIERS.values() for d in tier]
    address = {d: world.player(f"{d}-{tag}") for d in (*drivers, BENCH)}
    gm = world.player(f"gm-{tag}")
    clock = world.app.clock
    assert isinstance(clock, FakeClock)
    _sit_on_the_bench(world, address[BENCH])
    with world.app.db.transaction() as session:
        for i, (season, people) in enumerate(TIERS.items()):
            create_game(
                world.app.shell, session, kind="speed_circuit", name=f"{season}-r1", gm_address=gm, deadline="24h",
                seed=5 + i, options={"laps": "1"}, players=[PlayerSpec(d, address[d], d.title()) for d in people],
            )  # fmt: skip
    world.app.service.send()
    for tier, season in enumerate(TIERS, start=1):
        copy = [m for m in read_inbox(world, gm) if f"[{season}-r1]" in str(m["Subject"])][-1]
        moves = "DOWN 1" if tier == 1 else "UP 1"
        command = f"SEASON {season}-r1 NEW {season} SCORING {TIER_SCORING[season]} DROP 1 NOSHOW 3 RACES {TIER_RACES} SERIES cup TIER {tier} {moves}"
        world.dovecot.deliver(world.bot, reply_to(copy, command, sender=gm))
        cycle(world)
    answers = "\n".join(words_of(m) for m in read_inbox(world, gm) if "GM:" in str(m["Subject"]))
    assert "series cup, tier 1, its bottom 1 go down" in answers and "series cup, tier 2, its top 1 go up" in answers

    mailed: dict[str, dict[int, list[tuple[int, list[str], bool]]]] = {s: {} for s in TIERS}
    driver_at = {a: d for d, a in address.items()}
    holders: dict[str, dict[int, dict[str, str]]] = {s: {} for s in TIERS}  # seat -> its driver at the end
    poles: dict[str, dict[int, str]] = {s: {} for s in TIERS}  # the seat first on the grid
    for round_ in range(1, TIER_RACES + 1):
        games = {season: f"{season}-r{round_}" for season in TIERS}
        for game in games.values():
            _bench_substitute(world, address, game, round_)
            # The design turn: every driver orders (the no-show of race 1 never does), then the
            # deadlines run the race to its end.
            _deliver_all(world, address, game, "TYRES OPTION", TIER_NO_SHOW if round_ == 1 else None)
        for _ in range(40):
            if all(_finished(world, game) for game in games.values()):
                break
            clock.advance(timedelta(hours=25))
            cycle(world)
        cycle(world)  # the next races, made at the tick after
        for season, game in games.items():
            inbox = read_inbox(world, address["ada"] if season == "cup-a" else address["eli"])
            final = [m for m in inbox if f"[{game}] Final result" in str(m["Subject"])]
            assert len(final) == 1, game
            text = body_of(final[0])
            assert f"Season {season} (Speed Circuit), after {round_} of {TIER_RACES} races" in " ".join(text.split())
            # The seat taken from the bench reads "gus (<its holder>)" from then on.
            handed = {LEAVER: _name_of(world, address[BENCH])} if season == "cup-b" and round_ >= BENCH_ROUND else None
            mailed[season][round_] = _final_places(text, handed)
            poles[season][round_] = _pole(inbox, game)
            holders[season][round_] = {seat: driver_at[a] for seat, a in _seats(world, game).items()}
    cycle(world)  # the seasons end

    # Each tier's final table, as its last final result mailed it, is the one worked out from
    # the races' final results as mailed.
    with world.app.db.read() as session:  # the tables name people as the bot knows them
        name_of = {
            d: p.name for d, a in address.items() if (p := session.scalar(select(Player).where(Player.address == a)))
        }
    readings = []
    for tier, (season, people) in enumerate(TIERS.items(), start=1):
        text = body_of(
            [
                m
                for m in read_inbox(world, address[people[0]])
                if f"[{season}-r{TIER_RACES}] Final result" in str(m["Subject"])
            ][0]
        ).replace("\r\n", "\n")
        shown = re.findall(
            r"^(\d+)([=*]?)\s+(\S+)\s+(-?\d+)  (.+)$", text.split(f"Season {season} (Speed Circuit)", 1)[1], re.M
        )
        everyone = {d for held in holders[season].values() for d in held.values()}
        assert len(shown) == len(everyone) == (5 if season == "cup-b" else 4), text
        results = []
        for round_, places in mailed[season].items():
            finishes = []
            for place, seats, dnf in places:
                for seat in seats:
                    driver = holders[season][round_][seat]
                    if round_ == 1 and seat == TIER_NO_SHOW:
                        finishes.append(Finish(driver, Outcome.NO_SHOW))
                    else:
                        finishes.append(
                            Finish(driver, Outcome.DID_NOT_FINISH) if dnf else Finish(driver, Outcome.FINISHED, place)
                        )
            if season == "cup-b" and round_ == BENCH_ROUND:  # resigned, their seat gone on: did not finish
                finishes.append(Finish(LEAVER, Outcome.DID_NOT_FINISH))
            # The pole's holder at the end of the race scores its bonus (docs/championships.md).
            honours = (("pole", holders[season][round_][poles[season][round_]]),)
            results.append(RaceResult(round_, 0, tuple(finishes), honours))
        rules = SeasonRules(ScoringTable.parse(TIER_SCORING[season]), drop=1, no_show_penalty=3, races=TIER_RACES)
        expected = standings(rules, results)
        assert sorted((str(r.place), name_of[r.driver], str(r.points)) for r in expected) == sorted(
            (place, name, points) for place, _, name, points, _ in shown
        )
        by = {name: cells.split() for _, _, name, _, cells in shown}
        if season == "cup-b":
            assert by["Hal"][0] in ("0-3", "(0)-3"), "the no-show lost 3 points in race 1"
            # The pole's bonus, in its holder's cell of each race and in their total (the
            # qualifying bid's winner won the race at least once: "25+1").
            assert f"after {TIER_RACES} of {TIER_RACES} races; scoring {TIER_SCORING[season]}, 1 dropped." in " ".join(
                text.split()
            )
            pole_cells = [by[name_of[holders[season][r][poles[season][r]]]][r - 1] for r in range(1, TIER_RACES + 1)]
            assert all(c.strip("()").endswith("+1") for c in pole_cells), pole_cells
            assert "25+1" in pole_cells, pole_cells
            for _, _, name, points, cells in shown:
                assert int(points) == _total(cells.split()), (name, points, cells)
            # The leaver did not finish the race they resigned from (no penalty) and ran no more;
            # the substitute scored the seat's places from that race on.
            assert by[name_of[LEAVER]][BENCH_ROUND - 1] in ("0", "(0)")
            assert by[name_of[LEAVER]][BENCH_ROUND:] == ["-"] * (TIER_RACES - BENCH_ROUND)
            assert by[name_of[BENCH]][0] == "-" and "-" not in by[name_of[BENCH]][1:]
        assert all(any("(" in c for c in cells) for cells in by.values() if "-" not in cells), by
        going_on = frozenset(holders[season][TIER_RACES].values())  # the people holding a seat of the last race
        assert going_on == (set(people) - {LEAVER} | {BENCH} if season == "cup-b" else set(people))
        readings.append(
            TierSeason(tier, expected, tuple(results), going_on, 1 if tier == 2 else 0, 1 if tier == 1 else 0)
        )
    level = [r for t in readings for r in t.table if r.tied and sum(1 for o in t.table if o.place == r.place) == 1]
    assert level, "a tie on points placed by countback"

    # The leaver joins the series again for its next season by mail (a known player: no code
    # asked): a newcomer, drawn into the lowest tier behind its drivers.
    leaver_sheet = _sheets(world, address[LEAVER], "cup-b-r1")[-1]
    world.dovecot.deliver(world.bot, reply_to(leaver_sheet, "JOIN cup", sender=address[LEAVER]))
    cycle(world)
    assert "You have joined series cup for its next season" in words_of(read_inbox(world, address[LEAVER])[-1])

    # The draw waits in the GM's digest; nothing is made until the GM confirms it by mail.
    with world.app.db.read() as session:
        assert {s.name for s in session.scalars(select(Season))} == set(TIERS)
    assert digest.send_due_digests(world.app.shell, force=True) >= 1
    world.app.service.send()
    sheet = [m for m in read_inbox(world, gm) if str(m["Subject"]).startswith("[GM digest]")][-1]
    text = body_of(sheet)
    assert "Series cup (Speed Circuit): the draw for season 2" in " ".join(
        text.split()
    ) and f"SEASON cup-b-r{TIER_RACES} NEXT CONFIRM" in " ".join(text.split())
    # The digest showed it first: the draw is stored as shown, and that is the draw made.
    with world.app.db.read() as session:
        stored = session.scalars(select(SeasonDraw)).one()
        assert (stored.series, stored.edition, stored.made_at) == ("cup", 2, None)
        shown = [[d["driver"] for d in tier] for tier in stored.drawn]
    # Tier 2 run by a second GM (as if they had made it): each tier's GM gets the draw in their
    # own digest and confirms by mail the tiers they run; made once both have.
    gm2 = world.player(f"gm2-{tag}")
    with world.app.db.transaction() as session:
        low = session.scalars(select(Season).where(Season.name == "cup-b")).one()
        low.gm_address = gm2
        for race in low.races:
            race.game.gm_address = gm2
    assert digest.send_due_digests(world.app.shell, force=True) == 2
    world.app.service.send()
    for who, race_name in ((gm2, f"cup-b-r{TIER_RACES}"), (gm, f"cup-a-r{TIER_RACES}")):
        sheet = [m for m in read_inbox(world, who) if str(m["Subject"]).startswith("[GM digest]")][-1]
        text = body_of(sheet)
        assert "Its tiers have different GMs" in " ".join(
            text.split()
        ) and f"SEASON {race_name} NEXT CONFIRM" in " ".join(text.split()), who
        world.dovecot.deliver(world.bot, reply_to(sheet, f"SEASON {race_name} NEXT CONFIRM", sender=who))
        cycle(world)
        if who == gm2:
            assert "waiting for the GM of tier 1" in words_of(read_inbox(world, gm2)[-1])
            with world.app.db.read() as session:
                assert session.scalars(select(SeasonDraw)).one().confirmed == [2], "tier 2 confirmed, nothing made"
    assert "season 2 is made" in words_of(read_inbox(world, gm)[-1])
    # The next season's tiers are those worked out from the final tables as mailed.
    want = draw_tiers(readings, season_tiers.lot_for("cup", 1), [LEAVER], find_game("speed_circuit").max_players)
    assert [d.driver for d in want[1] if d.move.value == "new"] == [LEAVER]
    with world.app.db.read() as session:
        made = {s.tier: s for s in session.scalars(select(Season).where(Season.series == "cup", Season.edition == 2))}
        assert sorted(made) == [1, 2]
        for tier, drawn in enumerate(want, start=1):
            opening = made[tier].races[0].game
            # Who holds each seat (a seat keeps the name it had in the last race: the substitute's
            # is the leaver's).
            held = sorted(driver_at[seat.player.address] for seat in opening.seats)
            assert held == sorted(d.driver for d in drawn), f"tier {tier}"
            assert sorted(str(seat.player_id) for seat in opening.seats) == sorted(shown[tier - 1]), "the stored draw"
            assert opening.status == "active"
    moved = {d.driver: d.move.value for t in want for d in t if d.move.value in ("up", "down")}
    assert sorted(moved.values()) == ["down", "up"]
    for driver in moved:
        first = [m for m in read_inbox(world, address[driver]) if "[cup-2-t" in str(m["Subject"])]
        assert first and f"This is race 1 of {TIER_RACES} of season cup-2-t" in words_of(first[0])

    # The substitute is credited in their record, the leaver's shows the game abandoned: RECORD by
    # mail, answering a sheet of a seat they still hold (the race they last drove to its end).
    for who, game, line in (
        (BENCH, f"cup-b-r{TIER_RACES}", "Seats taken over from the substitutes bench: 1."),
        (LEAVER, "cup-b-r1", "Games abandoned (resigned, or put out by the NMR limit, while under way): 1."),
    ):
        world.dovecot.deliver(
            world.bot, reply_to(_sheets(world, address[who], game)[-1], "RECORD", sender=address[who])
        )
        cycle(world)
        assert line in words_of(read_inbox(world, address[who])[-1]), who


# -- what the database may change: the same small tiered series on SQLite and on PostgreSQL -------


def _small_series_by_mail(app: TestApp) -> list[tuple[str, str, str]]:
    """Series cup in two tiers of five (Racecraft, three turns), two races a season made by the
    bot (the season locked, its next race seated from the table), each tier run by its own GM;
    the draw in both GMs' digests, confirmed by each by mail (the tiers confirmed stored with the
    draw), then the next season's tiers made. Every mail the bot sent: (to, subject, its words with the passwords masked)."""
    from tests.bot import gm_helpers as on
    from tests.bot.gm_helpers import GM

    gm2 = "gm2@example.org"
    people = {
        "a": tuple((s, f"{s}@example.org") for s in ("kelly", "seb", "steve", "roger", "anna")),
        "b": tuple((s, f"{s}@example.org") for s in ("uma", "vic", "walt", "xia", "zed")),
    }
    with app.db.transaction() as session:
        for tier, (key, seated) in enumerate(people.items(), start=1):
            create_game(
                app.shell, session, kind="racecraft", name=f"{key}1", gm_address=GM if tier == 1 else gm2, seed=3,
                deadline="24h", options={"turns": "3"}, players=[PlayerSpec(s, a, s.title(), "UTC") for s, a in seated],
            )  # fmt: skip
            seasons.create_season(
                app.shell,
                session,
                seasons.SeasonSettings(
                    name=f"cup-{key}",
                    kind="racecraft",
                    gm_address=GM if tier == 1 else gm2,
                    scoring="custom:3,1",
                    races=2,
                    games=(f"{key}1",),
                    series="cup",
                    tier=tier,
                    promote=1 if tier == 2 else 0,
                    relegate=1 if tier == 1 else 0,
                ),  # fmt: skip
            )
    app.service.send()
    for round_ in (1, 2):
        for key, seated in people.items():
            game = f"{key}1" if round_ == 1 else f"cup-{key}-r2"
            for use, (seat, address) in enumerate(seated):
                on.player_says(app, seat, f"USE {(use * round_) % 8}", game=game, address=address)
            on.to_the_finish(app, game)
        on.cycle(app)  # the next races, then the seasons' end
    on.cycle(app)
    from bot.gm import digest

    assert digest.send_due_digests(app.shell, force=True) == 2, "each tier's GM gets the draw in a digest"
    app.service.send()
    on.gm_says(app, "SEASON cup-b-r2 NEXT CONFIRM", game="cup-b-r2", sender=gm2)
    with app.db.read() as session:
        assert session.scalars(select(SeasonDraw)).one().confirmed == [2], "tier 2 confirmed, nothing made"
    on.gm_says(app, "SEASON cup-a-r2 NEXT CONFIRM", game="cup-a-r2")
    with app.db.read() as session:
        made = session.scalars(select(Season).where(Season.series == "cup", Season.edition == 2)).all()
        assert sorted(s.tier for s in made) == [1, 2] and all(s.races[0].game.status == "active" for s in made)
    mailer = app.mailer
    assert isinstance(mailer, FakeMailer)
    with app.db.read() as session:  # the passwords, drawn by `secrets`, not by the game's dice
        drawn = [*session.scalars(select(Seat.secret)), *session.scalars(select(Game.gm_secret))]
    passwords = re.compile("|".join(re.escape(s) for s in drawn))
    return [(str(m["To"]), str(m["Subject"]), passwords.sub("*", words_of(m))) for m in mailer.messages()]


def test_a_small_tiered_series_writes_the_same_letters_on_sqlite_and_on_postgresql(
    tmp_path: Path, postgres: Postgres
) -> None:
    """The database cannot change a season's words: the same series (next races made by the bot
    under the season's lock, tables, the draw stored and shown, each tier's GM confirming it, the
    next season made) by mail on SQLite and on PostgreSQL sends the same mails, word for word.
    The seasons by real mail above run on one database each."""
    from dataclasses import replace

    from bot.db import Database
    from bot.dice import SeededEntropy
    from bot.mail_out.render import Renderer
    from bot.settings import DatabaseSettings
    from bot.testing import FakeInbox
    from tests.bot.conftest import make_settings
    from tests.bot.gm_helpers import START
    from tests.helpers import fresh_database

    sent = []
    for kind in ("sqlite", "postgresql"):
        where = tmp_path / kind
        where.mkdir()
        url = fresh_database(kind, where, postgres if kind == "postgresql" else None)
        settings = replace(make_settings(where), database=DatabaseSettings(url=url))
        app = TestApp(
            settings=settings, db=Database(url), clock=FakeClock(START), renderer=Renderer(), inbox=FakeInbox(),
            mailer=FakeMailer(), entropy=SeededEntropy(0),
        )  # fmt: skip
        try:
            sent.append(_small_series_by_mail(app))
        finally:
            app.close()
    on_sqlite, on_postgresql = sent
    assert len(on_sqlite) > 100 and any("season 2 is made" in subject for _, subject, _ in on_sqlite)
    assert on_sqlite == on_postgresql
