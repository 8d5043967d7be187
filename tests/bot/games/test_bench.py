"""The reliability record and the substitutes bench (docs/reliability.md).

The requirement: "A reliability record kept apart (on-time ratio, NMRs, games abandoned, seats taken
over as a substitute credited), visible to the player (`RECORD` by mail) and usable by a GM as
an entry gate (`--min-reliability`) ... A substitutes bench: players volunteer (`SUBSTITUTE ON
<game kind>`); when a seat is dropped or hits the NMR limit, the bot offers it to the bench by
mail (first to accept takes it, as REPLACE does today), a robot driving it meanwhile; the GM
sees it in the digest; the taker is credited."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm.attributes import set_committed_value

from bot.cli import main as cli_main
from bot.fate import Refused
from bot.games import bench, reliability
from bot.gm import digest
from bot.models import ChangeWhy, OfferStatus, Player, Seat, SeatChange, SeatOffer
from bot.store import find_game_row
from bot.testing import TestApp, reply_to, words_of
from rules.reliability import Reliability
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, audit, body_of, cycle, gm_says, last, mails, player_says, stranger_says
from tests.helpers import fake_inbox

gapp = gm_helpers.gapp
rc = gm_helpers.rc
SUB1, SUB2 = "sub1@example.net", "sub2@example.net"
ORDERING = ("kelly", "seb", "steve", "roger")  # anna sends nothing


def record_of(app: TestApp, address: str) -> Reliability:
    with app.db.read() as session:
        player = session.scalar(select(Player).where(Player.address == address))
        assert player is not None, address
        return reliability.record(session, player)


def seat_of(app: TestApp, name: str, game: str = "rc1") -> tuple[str, bool]:
    """The address holding seat `name` and whether a robot drives it."""
    with app.db.read() as session:
        row = find_game_row(session, game)
        assert row is not None
        seat = next(s for s in row.seats if s.name == name)
        return seat.player.address, seat.robot


def on_bench(app: TestApp, address: str, kind: str = "racecraft") -> None:
    """A stranger's SUBSTITUTE ON and the reply to its code mail (double opt-in)."""
    stranger_says(app, address, f"SUBSTITUTE ON {kind}")
    code_mail = last(app, address)
    assert "[confirm bench." in str(code_mail["Subject"]), str(code_mail["Subject"])
    fake_inbox(app).deliver(reply_to(code_mail, "yes", sender=address))
    cycle(app)
    assert "You are on the substitutes bench of Racecraft" in body_of(last(app, address))


def a_turn(app: TestApp, seats: tuple[str, ...] = ORDERING) -> None:
    """Each of `seats` sends USE 1; the deadline passes."""
    for seat in seats:
        player_says(app, seat, "USE 1")
    app.clock.advance(timedelta(hours=49))
    cycle(app)


def to_the_nmr_limit(app: TestApp) -> None:
    with app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.nmr_limit, game.nmr_action = 2, "drop"
    a_turn(app)
    a_turn(app)


def offers_to(app: TestApp, address: str) -> list[EmailMessage]:
    return [m for m in mails(app, address) if "A seat to take over" in str(m["Subject"])]


def test_a_stranger_is_on_the_bench_only_once_the_code_comes_back(gapp: TestApp) -> None:
    stranger_says(gapp, SUB1, "SUBSTITUTE ON racecraft")
    with gapp.db.read() as session:
        assert session.scalar(select(Player).where(Player.address == SUB1)) is None  # nothing yet
    assert "Nothing is done until this address confirms it" in words_of(last(gapp, SUB1))
    on_bench(gapp, SUB2)
    stranger_says(gapp, SUB2, "SUBSTITUTE OFF racecraft")
    assert "You are off the substitutes bench of Racecraft" in body_of(last(gapp, SUB2))


def test_a_newcomer_on_the_bench_is_named_as_join_names_one(gapp: TestApp) -> None:
    """The bench names a person new to the bot by JOIN's rule: the From's display name when it
    reads as a name, else the From's local part with its case kept (never lower-cased)."""
    for sender, address in (("Nina Grey <nina@example.org>", "nina@example.org"), ("Ola.Berg@example.org", None)):
        plain = address or sender.lower()
        stranger_says(gapp, sender, "SUBSTITUTE ON racecraft")
        code_mail = last(gapp, plain)
        fake_inbox(gapp).deliver(reply_to(code_mail, "yes", sender=sender))
        cycle(gapp)
        assert "You are on the substitutes bench of Racecraft" in body_of(last(gapp, plain))
    with gapp.db.read() as session:
        names = {p.address: p.name for p in session.scalars(select(Player))}
    assert names["nina@example.org"] == "Nina Grey"
    assert names["ola.berg@example.org"] == "Ola.Berg"


def test_a_player_is_on_the_bench_at_once_and_an_unknown_kind_is_refused(rc: TestApp) -> None:
    player_says(rc, "kelly", "SUBSTITUTE ON speed-circuit")
    assert "You are on the substitutes bench of Speed Circuit" in body_of(last(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "SUBSTITUTE ON chess")
    assert "kinds of game the bot runs" in body_of(last(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "RECORD")
    assert "You are on the substitutes bench of: speed_circuit" in words_of(last(rc, ADDRESS["kelly"]))


def test_a_seat_at_the_nmr_limit_goes_to_a_robot_and_is_offered_to_the_bench(rc: TestApp) -> None:
    on_bench(rc, SUB1)
    on_bench(rc, SUB2)
    player_says(rc, "kelly", "SUBSTITUTE ON racecraft")  # holds a seat of rc1: never offered one
    to_the_nmr_limit(rc)
    assert seat_of(rc, "anna") == ("robot", True)  # not dropped: a robot drives it meanwhile
    assert "offered to the substitutes bench" in body_of(last(rc, ADDRESS["anna"]))
    assert len(offers_to(rc, SUB1)) == 1 and len(offers_to(rc, SUB2)) == 1
    assert not offers_to(rc, ADDRESS["kelly"])
    offer = offers_to(rc, SUB1)[0]
    assert "CONFIRM offer." in body_of(offer) and "mailto:" in body_of(offer)  # the one-tap link
    gm_mail = bodies_of(rc, GM)
    assert "offered to the 2 people of the substitutes bench" in gm_mail
    # The first answer takes the seat, as REPLACE hands one over.
    fake_inbox(rc).deliver(reply_to(offer, "I'll take it", sender=SUB1))
    cycle(rc)
    assert seat_of(rc, "anna") == (SUB1, False)
    sheet = [m for m in mails(rc, SUB1) if "from the substitutes bench" in body_of(m)]
    assert sheet, "the taker gets the turn sheet"
    assert "took over seat anna" in body_of(last(rc, ADDRESS["seb"]))
    # The second is told clearly that it has gone, and nothing changes.
    fake_inbox(rc).deliver(reply_to(offers_to(rc, SUB2)[0], "me too", sender=SUB2))
    cycle(rc)
    assert "no longer on offer" in body_of(last(rc, SUB2))
    assert seat_of(rc, "anna") == (SUB1, False)
    # The GM sees the offer and the taker in the digest (the audit log).
    commands = [a.command for a in audit(rc)]
    assert "OFFER rc1 anna" in commands and "SUBSTITUTE rc1 anna" in commands
    digest.send_due_digests(rc.shell, force=True)
    rc.service.send()
    sent = body_of(last(rc, GM))
    assert "OFFER rc1 anna" in sent and "SUBSTITUTE rc1 anna" in sent and SUB1 in sent
    # The taker plays the turn, answering the sheet they got.
    fake_inbox(rc).deliver(reply_to(sheet[-1], "USE 1", sender=SUB1))
    cycle(rc)
    assert "USE 1" in body_of(last(rc, SUB1))
    a_turn(rc)
    taker = record_of(rc, SUB1)  # turn 3 with their orders (early resolution), turn 4 by the deadline without
    assert (taker.turns, taker.on_time, taker.nmrs) == (2, 1, 1)
    # Credited: the taker's record counts the seat; anna's counts the game she left.
    assert record_of(rc, SUB1).substitute == 1
    anna = record_of(rc, ADDRESS["anna"])
    assert (anna.turns, anna.on_time, anna.nmrs, anna.abandoned) == (2, 0, 2, 1)


def test_two_answers_at_once_give_the_seat_to_one_and_a_clear_answer_to_the_other(rc: TestApp) -> None:
    on_bench(rc, SUB1)
    on_bench(rc, SUB2)
    to_the_nmr_limit(rc)
    for address in (SUB2, SUB1):  # in the same poll: one batch
        fake_inbox(rc).deliver(reply_to(offers_to(rc, address)[0], "mine", sender=address))
    cycle(rc)
    holder, robot = seat_of(rc, "anna")
    assert not robot and holder in (SUB1, SUB2)
    other = SUB1 if holder == SUB2 else SUB2
    assert "no longer on offer" in body_of(last(rc, other))
    assert "is yours" in bodies_of(rc, holder)
    with rc.db.read() as session:
        offers = list(session.scalars(select(SeatOffer)))
        assert [(o.status, o.taken_by is not None) for o in offers] == [(OfferStatus.TAKEN, True)]


def bodies_of(app: TestApp, address: str) -> str:
    return "\n".join(f"{m['Subject']}\n{body_of(m)}" for m in mails(app, address))


def test_the_offer_is_taken_by_one_conditional_update_whatever_the_order(rc: TestApp) -> None:
    """Two takers of one offer, in two sessions, the second after the first committed: the second
    finds it taken (the update's condition), never a second change of holder."""
    on_bench(rc, SUB1)
    on_bench(rc, SUB2)
    to_the_nmr_limit(rc)
    with rc.db.transaction() as session:
        made = session.scalars(select(SeatOffer)).one()
        bench.take(rc.shell, session, made, SUB1)
    with rc.db.transaction() as session:
        made = session.scalars(select(SeatOffer)).one()
        seat = session.get_one(Seat, made.seat_id)
        # As a second process read them before the first wrote: the offer open, a robot's seat.
        set_committed_value(made, "status", OfferStatus.OPEN)
        set_committed_value(seat, "robot", True)
        with pytest.raises(Refused, match="no longer on offer"):
            bench.take(rc.shell, session, made, SUB2)
        session.rollback()
    assert seat_of(rc, "anna") == (SUB1, False)
    with rc.db.read() as session:
        changes = [c.why for c in session.scalars(select(SeatChange))]
    assert changes == [ChangeWhy.NMR_LIMIT, ChangeWhy.SUBSTITUTE]


def test_resign_under_way_offers_the_seat_and_without_a_bench_drops_it(rc: TestApp) -> None:
    player_says(rc, "steve", "RESIGN rc1")
    assert seat_of(rc, "steve")[0] == ADDRESS["steve"]  # nobody on the bench: dropped as before
    on_bench(rc, SUB1)
    player_says(rc, "roger", "RESIGN rc1")
    assert seat_of(rc, "roger") == ("robot", True)
    assert len(offers_to(rc, SUB1)) == 1
    assert "offered to the substitutes bench" in body_of(last(rc, ADDRESS["roger"]))
    assert record_of(rc, ADDRESS["roger"]).abandoned == 1
    assert record_of(rc, ADDRESS["steve"]).abandoned == 1


def test_the_record_counts_turns_held_on_time_and_nmrs_from_the_games(rc: TestApp) -> None:
    a_turn(rc, ("kelly", "seb"))
    a_turn(rc, ("kelly",))
    kelly, seb, anna = (record_of(rc, ADDRESS[s]) for s in ("kelly", "seb", "anna"))
    assert (kelly.turns, kelly.on_time, kelly.nmrs, kelly.games) == (2, 2, 0, 1)
    assert (seb.turns, seb.on_time, seb.nmrs) == (2, 1, 1)
    assert seb.shown_ratio() == "0.50"
    assert (anna.turns, anna.on_time, anna.nmrs, anna.abandoned) == (2, 0, 2, 0)
    # RECORD: the person's own record, to their own address.
    player_says(rc, "seb", "RECORD")
    answer = body_of(last(rc, ADDRESS["seb"]))
    assert (
        "On-time ratio: 0.50 (1 of the 2 turns" in answer and "NMRs (turns the default was used for you): 1" in answer
    )
    stranger_says(rc, "nobody@example.net", "RECORD")
    assert "On-time ratio: none yet" in body_of(last(rc, "nobody@example.net"))


def test_a_rollback_takes_the_turn_out_of_the_record_until_it_resolves_again(rc: TestApp) -> None:
    a_turn(rc, ("kelly",))
    assert record_of(rc, ADDRESS["seb"]).turns == 1
    gm_says(rc, "ROLLBACK rc1")
    assert record_of(rc, ADDRESS["seb"]) == Reliability()  # its defaults are discarded
    player_says(rc, "seb", "USE 1")
    gm_says(rc, "PROCESS rc1")
    seb = record_of(rc, ADDRESS["seb"])
    assert (seb.turns, seb.on_time) == (1, 1)


def test_replace_gives_the_turns_after_it_to_the_new_holder(rc: TestApp) -> None:
    a_turn(rc, ("kelly",))
    gm_says(rc, "REPLACE rc1 kelly kim@example.net Kim")
    a_turn(rc, ("seb",))
    player_says(rc, "kelly", "USE 1", address="kim@example.net")
    kelly, kim = record_of(rc, ADDRESS["kelly"]), record_of(rc, "kim@example.net")
    assert (kelly.turns, kelly.on_time, kelly.abandoned) == (1, 1, 0)  # replaced by the GM: not abandoned
    assert (kim.turns, kim.on_time) == (1, 0)


def test_the_entry_gate_refuses_a_join_below_it_with_the_figure_and_lets_a_newcomer_in(rc: TestApp) -> None:
    a_turn(rc, ("kelly",))
    with rc.db.transaction() as session:
        from bot.games.turns import create_game

        game = create_game(rc.shell, session, kind="racecraft", name="rc2", players=(), gm_address=GM, signup=True)
        game.min_reliability = "0.8"
    player_says(rc, "seb", "JOIN rc2 Seb")
    refusal = body_of(last(rc, ADDRESS["seb"]))
    assert "at least 0.8" in refusal and "yours is 0.00: 0 of the 1 turns" in refusal
    player_says(rc, "kelly", "JOIN rc2 Kelly")
    assert "Welcome" in str(last(rc, ADDRESS["kelly"])["Subject"])
    stranger_says(rc, "new@example.net", "JOIN rc2 Newbie")
    assert "[confirm join." in str(last(rc, "new@example.net")["Subject"])  # no record yet: let in


@pytest.mark.parametrize("verb", [["game", "new", "racecraft", "--name", "rc9"], ["gm", "configure", "rc1"]])
def test_the_cli_refuses_a_gate_outside_0_to_1(verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code: int | str | None
    try:
        code = cli_main([*verb, "--min-reliability", "1.5"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    assert "from 0 to 1" in capsys.readouterr().err


@given(st.lists(st.tuples(st.integers(1, 30), st.integers(2, 9)), max_size=8), st.integers(1, 40))
def test_each_turn_of_a_seat_has_one_holder_in_the_order_the_seat_changed_hands(
    steps: list[tuple[int, int]], number: int
) -> None:
    """`holder_at`: the holder at turn n is the one who left at the first change after n (else
    the holder now), so the seat's turns go to its holders in turn, none twice: whatever the
    changes, walking the turns up meets the chain of holders in order."""
    first = 1
    changes: list[SeatChange] = []
    holder = first
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for turn, successor in sorted(steps):  # changes are made as the turns go by
        changes.append(SeatChange(player_id=holder, successor_id=successor, turn=turn, at=at, why="replaced"))
        holder, at = successor, at + timedelta(days=1)
    seat = Seat(player_id=holder)
    chain = [first] + [c.successor_id for c in changes]
    seen = [reliability.holder_at(seat, changes, n)[0] for n in range(0, 41)]
    walked = [p for i, p in enumerate(seen) if i == 0 or p != seen[i - 1]]
    assert all(p in chain for p in walked)
    positions: list[int] = []
    for p in walked:  # each new holder comes later in the chain than the one before
        start = positions[-1] + 1 if positions else 0
        positions.append(chain.index(p, start))
    who, since = reliability.holder_at(seat, changes, number)
    after = [c for c in changes if c.turn > number]
    assert who == (after[0].player_id if after else holder)
    assert (since is None) == (len(changes) == len(after))


def test_in_a_season_the_driver_put_out_keeps_the_nmr_penalty_when_the_bench_takes_the_seat(rc: TestApp) -> None:
    """docs/championships.md: "out by the NMR limit ...: nothing, and the NMR penalty taken away",
    whether the seat was dropped or went on to the bench; the taker scores the seat's place."""
    from bot.games import seasons, turns
    from rules.season import Outcome

    on_bench(rc, SUB1)
    with rc.db.transaction() as session:
        seasons.create_season(
            rc.shell,
            session,
            seasons.SeasonSettings("spring", "racecraft", GM, nmr_penalty=3, games=("rc1",)),
        )
    to_the_nmr_limit(rc)
    fake_inbox(rc).deliver(reply_to(offers_to(rc, SUB1)[0], "mine", sender=SUB1))
    cycle(rc)
    with rc.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        rules, state, turn = turns.current_state(session, game)
        assert turn is not None
        anna, sub = (session.scalar(select(Player.id).where(Player.address == a)) for a in (ADDRESS["anna"], SUB1))
        assert seasons.left_seats(session, game) == {anna: Outcome.NMR_OUT}
        table = seasons.for_letters(session, game, rules, state, turn, finished=True)
        assert table is not None
        result = seasons.result_from(
            game, rules, state, seasons.driven_seats(session, game), 1, 0, seasons.left_seats(session, game)
        )
    outcomes = {f.driver: f.outcome for f in result.finishes}
    assert outcomes[str(anna)] is Outcome.NMR_OUT
    assert str(sub) in outcomes and outcomes[str(sub)] is not Outcome.NMR_OUT
    rows = {row.name: row.points for row in table.rows}
    assert rows["Anna"] == -3


def test_a_seat_taken_from_the_bench_reads_with_its_takers_name(rc: TestApp) -> None:
    """docs/DESIGN.md, "Seats that change hands": a seat the bench took reads "anna (<the taker's
    name>)" in the taker's turn sheet and in the next results, as after REPLACE."""
    on_bench(rc, SUB1)
    to_the_nmr_limit(rc)
    fake_inbox(rc).deliver(reply_to(offers_to(rc, SUB1)[0], "I'll take it", sender=SUB1))
    cycle(rc)
    with rc.db.read() as session:
        taker = session.scalar(select(Player).where(Player.address == SUB1))
        assert taker is not None
        label = f"anna ({taker.name})"
    sheet = [body_of(m) for m in mails(rc, SUB1) if "from the substitutes bench" in body_of(m)]
    assert sheet and f'You run as "{label}".' in sheet[-1]
    a_turn(rc)
    assert label in body_of(last(rc, ADDRESS["seb"]))


def test_in_a_season_the_bench_taker_of_a_seat_at_the_nmr_limit_drives_it_on_under_its_name_and_scores(
    rc: TestApp,
) -> None:
    """docs/championships.md, "Scoring": "out by the NMR limit (the seat ... went on without
    them, to the substitutes bench): nothing, and the NMR penalty taken away ... Whoever holds a
    seat when the race ends scores its place"; "A substitute in the next races": the seat goes on
    into the season's next race under its name, shown with its holder's, "anna (<taker>)"."""
    from bot.games import seasons
    from rules.season import Outcome
    from tests.bot.gm_helpers import to_the_finish

    on_bench(rc, SUB1)
    with rc.db.transaction() as session:
        seasons.create_season(
            rc.shell, session, seasons.SeasonSettings("spring", "racecraft", GM, nmr_penalty=3, games=("rc1",))
        )
    to_the_nmr_limit(rc)
    rc.inbox.deliver(reply_to(offers_to(rc, SUB1)[0], "mine", sender=SUB1))
    cycle(rc)
    sheet = [m for m in mails(rc, SUB1) if "[rc1]" in str(m["Subject"]) and "from the substitutes bench" in body_of(m)]
    rc.inbox.deliver(reply_to(sheet[-1], "USE 1", sender=SUB1))
    cycle(rc)
    to_the_finish(rc, "rc1")
    rc.service.tick()  # the next race, made by the bot
    rc.service.send()
    with rc.db.read() as session:
        taker = session.scalar(select(Player).where(Player.address == SUB1))
        assert taker is not None
        season = seasons.find_season(session, "spring")
        assert season is not None and len(season.races) == 2
        second = season.races[1].game
        seat = next(s for s in second.seats if s.player.address == SUB1)
        assert (seat.name, seat.handed_over) == ("anna", True), "the leaver's seat name, marked as taken over"
        assert not any(s.player.address == ADDRESS["anna"] for s in second.seats), "the leaver is out"
        table = {row.name: row for row in seasons.table_of(session, season).rows}
        first = seasons.race_result(session, season.races[0].game, 1)
        assert first is not None
    mine = next(f for f in first.finishes if f.driver == str(taker.id))
    assert mine.outcome is Outcome.FINISHED, "the taker drove it to the end"
    assert table[taker.name].races[0] == str((25, 18, 15, 12, 10)[mine.place - 1]), "the taker scores the place"
    assert table["Anna"].races[0] == "0-3" and table["Anna"].points == -3, "the leaver: the NMR penalty"
    sheets = [body_of(m) for m in mails(rc, SUB1) if "[spring-r2]" in str(m["Subject"])]
    assert sheets and f'You run as "anna ({taker.name})".' in sheets[0]


def test_in_a_season_the_leaver_the_bench_and_the_taker_are_told_the_seat_goes_on_in_its_next_races(
    rc: TestApp,
) -> None:
    """docs/championships.md, "A substitute in the table": the driver who left "runs no more races
    of the season"; the substitute has "a row of their own from that race on ... and whatever they
    score in the next races, which they drive in the same seat". Played by mail (playtest3): the
    RESIGN answer, the bench's offer and the taker's sheet never named the season, and the taker
    got the season's next race unannounced. A game of no season says none of it."""
    from bot.games import seasons

    on_bench(rc, SUB1)
    with rc.db.transaction() as session:
        seasons.create_season(rc.shell, session, seasons.SeasonSettings("spring", "racecraft", GM, games=("rc1",)))
    player_says(rc, "roger", "RESIGN rc1")
    leaver = words_of(last(rc, ADDRESS["roger"]))
    assert "rc1 is race 1 of 3 of season spring: you leave the season with it" in leaver
    assert "your results so far stay in its table" in leaver
    offer = words_of(offers_to(rc, SUB1)[0])
    assert "rc1 is race 1 of 3 of season spring: whoever takes the seat drives it in the season's next races" in offer
    fake_inbox(rc).deliver(reply_to(offers_to(rc, SUB1)[0], "mine", sender=SUB1))
    cycle(rc)
    (sheet,) = [words_of(m) for m in mails(rc, SUB1) if "You take over seat" in body_of(m)]
    assert "the seat goes on with you in its next races" in sheet
    player_says(rc, "steve", "RESIGN rc1")  # nobody left on the bench who may: dropped
    assert "season spring" in body_of(last(rc, ADDRESS["steve"]))


def test_a_resign_outside_a_season_names_no_season(rc: TestApp) -> None:
    player_says(rc, "roger", "RESIGN rc1")
    assert "season" not in body_of(last(rc, ADDRESS["roger"]))


def test_in_a_season_a_seat_the_gm_hands_over_tells_its_taker_it_goes_on(rc: TestApp) -> None:
    """docs/championships.md: after a REPLACE the new holder drives the seat on "in the next races"."""
    from bot.games import seasons

    with rc.db.transaction() as session:
        seasons.create_season(rc.shell, session, seasons.SeasonSettings("spring", "racecraft", GM, games=("rc1",)))
    gm_says(rc, "REPLACE rc1 kelly kim@example.org Kim")
    (sheet,) = [words_of(m) for m in mails(rc, "kim@example.org") if "You take over seat" in body_of(m)]
    assert "rc1 is race 1 of 3 of season spring: the seat goes on with you in its next races" in sheet
