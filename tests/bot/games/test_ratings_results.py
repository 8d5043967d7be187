"""A rated race's final result (docs/championships.md, "Ratings": the rating "in their own final
result of each rated race", with the race's reason): in the own letter of a person
who opted in, once they have finished `[ratings] shown_after` rated races; never to the others,
never for a race with a robot driver."""

from __future__ import annotations

from pathlib import Path

from bot.games.ratings import ratings_of
from bot.games.turns import PlayerSpec, create_game
from bot.models import Player
from bot.settings import RatingSettings
from bot.testing import TestApp, body_of, words_of
from tests.bot.gm_helpers import ADDRESS, GM, RACERS, mails, new_app, player_says, to_the_finish

PEOPLE = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]


def race(app: TestApp, name: str, seed: int, *, robots: tuple[str, ...] = (), roger_says: str = "") -> str:
    """Race `name` to its end; the final result roger got."""
    people = [p for p in PEOPLE if p.seat not in robots]
    with app.db.transaction() as session:
        create_game(
            app.shell, session, kind="racecraft", name=name, players=people, gm_address=GM, seed=seed,
            deadline="24h", options={"turns": "3"}, robot_seats=robots,
        )  # fmt: skip
    app.service.send()
    if roger_says:
        player_says(app, "roger", roger_says, game=name)
        assert "Rating on" in str(mails(app, ADDRESS["roger"])[-1]["Subject"])
    for seat, use in (("kelly", 3), ("seb", 2), ("steve", 1), ("roger", 0), ("anna", 1)):
        if seat not in robots:
            player_says(app, seat, f"USE {use}", game=name)
    to_the_finish(app, name)
    finals = [m for m in mails(app, ADDRESS["roger"]) if f"[{name}] Final result" in str(m["Subject"])]
    assert len(finals) == 1
    html = finals[0].get_body(("html",))
    text = words_of(finals[0])  # words, whatever the wrapping
    assert html is not None  # the HTML part says what the text says
    assert ("Your rating in Racecraft" in html.get_content()) == ("Your rating in Racecraft" in text)
    return text


def test_the_rating_shows_in_the_own_final_result_after_the_races_set(tmp_path: Path) -> None:
    app = new_app(tmp_path, ratings=RatingSettings(shown_after=2))
    try:
        first = race(app, "rc1", 5, roger_says="RATING ON")
        assert "rating" not in first.lower(), "shown after 2 rated races, not 1"
        second = race(app, "rc2", 6)
        assert "Your rating in Racecraft: " in second and "after 2 rated races" in second
        assert "Rating change because " in second
        with app.db.read() as session:
            mine = ratings_of(session, "racecraft")
            roger = session.query(Player).filter_by(address=ADDRESS["roger"]).one()
            assert f"Racecraft: {mine[str(roger.id)].shown} after 2" in second
        kelly = [body_of(m) for m in mails(app, ADDRESS["kelly"]) if "[rc2] Final result" in str(m["Subject"])]
        assert kelly and "Your rating" not in kelly[0], "kelly never opted in"
        with_robots = race(app, "rc3", 7, robots=("anna",))
        assert "Your rating" not in with_robots, "a race with a robot driver is not rated"
    finally:
        app.close()


def test_a_race_a_robot_drove_a_seat_of_for_a_while_says_it_is_not_rated(tmp_path: Path) -> None:
    """ "A race with a robot driver ... is never rated" (docs/championships.md, "Ratings"): a
    race whose seat a robot drove for a while (offered to the bench, REPLACE ... ROBOT) ends
    with people alone, and the final result of a person who opted in says it is not rated."""
    from datetime import UTC, datetime

    from sqlalchemy import select

    from bot.games.robots import robot_player
    from bot.models import ChangeWhy, Game, SeatChange

    app = new_app(tmp_path, ratings=RatingSettings(shown_after=1))
    try:
        first = race(app, "rc1", 5, roger_says="RATING ON")
        assert "Your rating in Racecraft" in first and "not rated" not in first
        with app.db.transaction() as session:
            create_game(
                app.shell, session, kind="racecraft", name="rc2", players=PEOPLE, gm_address=GM, seed=6,
                deadline="24h", options={"turns": "3"},
            )  # fmt: skip
            game = session.scalars(select(Game).where(Game.name == "rc2")).one()
            anna = next(s for s in game.seats if s.name == "anna")
            robot = robot_player(session, datetime(2026, 1, 5, tzinfo=UTC))
            for holder, successor in ((anna.player_id, robot.id), (robot.id, anna.player_id)):
                session.add(
                    SeatChange(
                        seat_id=anna.id, game_id=game.id, player_id=holder, successor_id=successor, turn=1,
                        at=datetime(2026, 1, 5, tzinfo=UTC), why=ChangeWhy.ROBOT,
                    )
                )  # fmt: skip
        app.service.send()
        for seat, use in (("kelly", 3), ("seb", 2), ("steve", 1), ("roger", 0), ("anna", 1)):
            player_says(app, seat, f"USE {use}", game="rc2")
        to_the_finish(app, "rc2")
        finals = [m for m in mails(app, ADDRESS["roger"]) if "[rc2] Final result" in str(m["Subject"])]
        text = words_of(finals[0])
        assert "This race is not rated, so your Racecraft rating stays as it was" in text
        assert "Your rating in Racecraft" not in text
        kelly = [body_of(m) for m in mails(app, ADDRESS["kelly"]) if "[rc2] Final result" in str(m["Subject"])]
        assert kelly and "not rated" not in kelly[0], "kelly never opted in: nothing said of ratings"
    finally:
        app.close()
