"""The stored ratings (docs/championships.md, "Ratings": "stored ..., updated at each rated
final, recomputable from the archive (`flagman rating rebuild`)", and "the stored ratings
equal a recomputation from the archived results in any order of results and ROLLBACKs")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.db import Database
from bot.games import ratings
from bot.games.turns import PlayerSpec, create_game
from bot.models import Game, GameStatus, Player, RatingKind, Seat, StoredRating
from bot.ratings import Rating, rate
from bot.settings import RatingSettings
from bot.testing import body_of, words_of
from rules import find_game
from rules.api import GameState
from rules.season import Finish, Outcome, RaceResult
from tests.bot.games.test_ratings_results import race
from tests.bot.gm_helpers import (
    ADDRESS,
    GM,
    RACERS,
    cycle,
    gm_says,
    mails,
    new_app,
    player_says,
    to_the_finish,
)
from tests.helpers import moving_clock
from tests.settled import examples

T0 = datetime(2026, 12, 1, tzinfo=UTC)
PEOPLE = 5
GAMES = 5


def stored(session: Session, kind: str) -> dict[str, Rating]:
    rows = session.scalars(select(StoredRating).where(StoredRating.kind == kind))
    return {str(r.player_id): Rating(r.mu, r.sigma, r.races) for r in rows}


def recomputed(session: Session, kind: str) -> dict[str, Rating]:
    """The ratings worked out from the archived results alone, ignoring what is stored."""
    return rate(ratings.rated_races(session, kind))


def close(a: dict[str, Rating], b: dict[str, Rating]) -> bool:
    return a.keys() == b.keys() and all(
        a[p].races == b[p].races and abs(a[p].mu - b[p].mu) < 1e-9 and abs(a[p].sigma - b[p].sigma) < 1e-9 for p in a
    )


# One step: finish game g in an order of its people (a permutation's seed), or roll it back.
STEPS = st.lists(
    st.tuples(st.sampled_from(["finish", "rollback"]), st.integers(0, GAMES - 1), st.permutations(range(PEOPLE))),
    max_size=14,
)


@settings(max_examples=examples(20, 30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS, robot=st.integers(-1, GAMES - 1))
def test_the_stored_ratings_equal_a_recomputation_whatever_the_order_of_results_and_rollbacks(
    db_url: str, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int, list[int]]], robot: int
) -> None:
    """Finals (each stored as it comes, `final_changes`) and ROLLBACKs of finished races (the
    kind worked out again, `rebuild`) in any order, a race finishing again with another
    result, one race with a robot seat: after every step the stored ratings, and the ratings
    read, equal a recomputation from the archived results in the order the races ended."""
    results: dict[int, RaceResult] = {}
    monkeypatch.setattr(ratings, "race_result", lambda session, game, penalty: results[game.id])
    monkeypatch.setattr(ratings, "driven_seats", lambda session, game: {})
    monkeypatch.setattr(ratings, "result_from", lambda game, rules, state, driven, a, b: results[game.id])
    db = Database(db_url)
    try:
        with db.read() as session:  # rolled back at the end: each example starts from nothing
            people = [Player(address=f"p{i}@example.org", name=f"P{i}", created_at=T0) for i in range(PEOPLE)]
            session.add_all(people)
            session.flush()
            games = []
            for g in range(GAMES):
                game = Game(
                    name=f"r{g}", kind="racecraft", status=GameStatus.ACTIVE, gm_address="gm@example.org",
                    gm_secret="s", seed=g, deadline_spec="24h", created_at=T0,
                )  # fmt: skip
                game.seats = [
                    Seat(name=f"s{i}", player_id=p.id, secret="x", joined_at=T0, robot=(g == robot and i == 0))
                    for i, p in enumerate(people)
                ]
                games.append(game)
            session.add_all(games)
            session.flush()
            now = T0
            for step, (what, g, order) in enumerate(steps):
                game = games[g]
                now += timedelta(hours=1)
                if what == "finish" and game.status != GameStatus.FINISHED:
                    cut = 2 + step % (PEOPLE - 1)  # the first `cut` of the order finish, by place
                    results[game.id] = RaceResult(
                        0,
                        0,
                        tuple(
                            Finish(str(people[i].id), Outcome.FINISHED if k < cut else Outcome.DID_NOT_FINISH, k + 1)
                            for k, i in enumerate(order)
                        ),
                    )
                    game.status, game.finished_at = GameStatus.FINISHED, now
                    # the game and state are not read: result_from, replaced above, gives the result
                    _, writes = ratings.final_changes(session, game, find_game("racecraft"), GameState(None))
                    session.flush()
                    if writes is not None:
                        ratings.write(session, writes)
                elif what == "rollback" and game.status == GameStatus.FINISHED:
                    game.status, game.finished_at = GameStatus.PAUSED, None
                    ratings.rebuild(session, "racecraft")  # what ROLLBACK does
                else:
                    continue
                truth = recomputed(session, "racecraft")
                assert close(stored(session, "racecraft"), truth), (step, what, g)
                assert close(ratings.ratings_of(session, "racecraft"), truth)
                counted = session.get(RatingKind, "racecraft")
                now_rated = ratings.rated_ids(session, "racecraft")
                if counted is None:  # only races never rated finished so far
                    assert now_rated == []
                else:
                    assert (counted.races, counted.digest) == (len(now_rated), ratings.digest(now_rated)), (
                        step,
                        what,
                        counted.races,
                        now_rated,
                    )
            if robot >= 0:
                assert games[robot].id not in ratings.rated_ids(session, "racecraft")
    finally:
        db.dispose()


def test_stale_stored_ratings_are_never_read(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stored ratings that do not count the record's rated races (a race finished or rolled back
    behind the store's back) are worked out again, not read."""
    results: dict[int, RaceResult] = {}
    monkeypatch.setattr(ratings, "race_result", lambda session, game, penalty: results[game.id])
    db = Database(db_url)
    try:
        with db.read() as session:
            people = [Player(address=f"p{i}@example.org", name=f"P{i}", created_at=T0) for i in range(3)]
            session.add_all(people)
            session.flush()
            game = Game(
                name="r0", kind="racecraft", status=GameStatus.FINISHED, gm_address="gm@example.org", gm_secret="s",
                seed=1, deadline_spec="24h", created_at=T0, finished_at=T0,
            )  # fmt: skip
            game.seats = [Seat(name=f"s{i}", player_id=p.id, secret="x", joined_at=T0) for i, p in enumerate(people)]
            session.add(game)
            session.flush()
            results[game.id] = RaceResult(
                0, 0, tuple(Finish(str(p.id), Outcome.FINISHED, k + 1) for k, p in enumerate(people))
            )
            assert stored(session, "racecraft") == {}
            truth = recomputed(session, "racecraft")
            assert close(ratings.ratings_of(session, "racecraft"), truth) and truth[str(people[0].id)].races == 1
            session.add(RatingKind(kind="racecraft", races=0, digest=ratings.digest([])))
            session.flush()
            assert close(ratings.ratings_of(session, "racecraft"), truth), "counts no race: not read"
            ratings.rebuild(session, "racecraft")
            assert close(stored(session, "racecraft"), truth)
            row = session.get(StoredRating, ("racecraft", people[0].id))
            assert row is not None
            row.mu = 99.0  # a stored figure the record does not give is read only if the digest says so
            session.flush()
            assert ratings.ratings_of(session, "racecraft")[str(people[0].id)].mu == 99.0
            game.status = GameStatus.PAUSED
            session.flush()
            assert ratings.ratings_of(session, "racecraft") == {}
    finally:
        db.dispose()


def test_rated_finals_and_a_rollback_of_a_finished_race_keep_the_stored_ratings_true(tmp_path: Path) -> None:
    """Through the bot: two rated finals store the ratings; the GM's ROLLBACK of the finished
    rc2 takes it out of them (its kind worked out again); rc2 finishing again counts it last."""
    app = new_app(tmp_path)
    try:
        race(app, "rc1", 5)
        race(app, "rc2", 6)
        with app.db.read() as session:
            truth = recomputed(session, "racecraft")
            assert len(truth) == 5 and close(stored(session, "racecraft"), truth)
            assert ratings.rated_ids(session, "racecraft") == [game_id(session, "rc1"), game_id(session, "rc2")]
        gm_says(app, "ROLLBACK rc2", game="rc2")
        with app.db.read() as session:
            assert session.scalars(select(Game.status).where(Game.name == "rc2")).one() == GameStatus.PAUSED
            one = recomputed(session, "racecraft")
            assert close(stored(session, "racecraft"), one) and {r.races for r in one.values()} == {1}
        gm_says(app, "RESUME rc2", game="rc2")
        to_the_finish(app, "rc2")
        with app.db.read() as session:
            truth = recomputed(session, "racecraft")
            assert close(stored(session, "racecraft"), truth) and {r.races for r in truth.values()} == {2}
    finally:
        app.close()


def game_id(session: Session, name: str) -> int:
    return session.scalars(select(Game.id).where(Game.name == name)).one()


def test_a_race_a_robot_drove_a_seat_of_for_a_while_is_never_rated(tmp_path: Path) -> None:
    """docs/championships.md, "What is never rated": a race where any seat was driven by a
    robot for any turn. Anna's seat goes to a robot (the GM's REPLACE ... ROBOT, as a seat
    offered to the bench is driven meanwhile) and then to a person: no robot seat as the race
    ends, and still not rated; roger, opted in and shown after 1 race, reads no rating."""
    app = new_app(tmp_path, ratings=RatingSettings(shown_after=1))
    try:
        people = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]
        with app.db.transaction() as session:
            create_game(
                app.shell, session, kind="racecraft", name="rc1", players=people, gm_address=GM, seed=5,
                deadline="24h", options={"turns": "3"},
            )  # fmt: skip
        app.service.send()
        player_says(app, "roger", "RATING ON")
        gm_says(app, "REPLACE rc1 anna ROBOT")
        moving_clock(app).advance(timedelta(hours=25))
        cycle(app)  # a turn with the robot driving anna's seat
        gm_says(app, "REPLACE rc1 anna kim@example.net Kim")
        with app.db.read() as session:
            game = session.scalars(select(Game).where(Game.name == "rc1")).one()
            assert not any(seat.robot for seat in game.seats), "a person holds every seat again"
            assert ratings.robot_driven(session, game)
        to_the_finish(app, "rc1")
        final = [m for m in mails(app, ADDRESS["roger"]) if "[rc1] Final result" in str(m["Subject"])]
        assert len(final) == 1 and "Your rating" not in body_of(final[0])
        with app.db.read() as session:
            assert session.scalars(select(Game.status).where(Game.name == "rc1")).one() == GameStatus.FINISHED
            assert ratings.rated_ids(session, "racecraft") == [] and ratings.ratings_of(session, "racecraft") == {}
            assert stored(session, "racecraft") == {}
        # The same people racing without a robot: rated, and roger told.
        race(app, "rc2", 6)
        with app.db.read() as session:
            assert len(ratings.rated_ids(session, "racecraft")) == 1
        finals = [m for m in mails(app, ADDRESS["roger"]) if "[rc2] Final result" in str(m["Subject"])]
        assert "Your rating in Racecraft" in words_of(finals[0])
    finally:
        app.close()
