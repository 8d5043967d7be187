"""Championship seasons (docs/championships.md; "A championship ... as a first-class
object: `flagman season new`, by CLI and by GM mail: its games ..., its tracks or maps in
rotation, its scoring table ..., dropped results, ... penalties"): made by the CLI and by a GM's
mail, their races, and the table worked out from the finished races."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.cli import main
from bot.db import Database
from bot.games import seasons
from bot.games.turns import PlayerSpec, create_game, current_state
from bot.models import GmAudit, Season
from bot.settings import load_settings
from bot.store import find_game_row
from bot.testing import TestApp, body_of
from rules.api import Viewer
from rules.season import F1_POINTS
from tests.bot.gm_helpers import GM, RACERS, bodies, gm_says, mails, new_app, player_says, to_the_finish
from tests.helpers import init_site


@pytest.fixture
def gapp(tmp_path: Path) -> Iterator[TestApp]:
    app = new_app(tmp_path)
    yield app
    app.close()


@pytest.fixture
def rc(gapp: TestApp) -> TestApp:
    """Racecraft `rc1`, five players, started; mail sent."""
    with gapp.db.transaction() as session:
        create_game(gapp.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, seed=7)
    gapp.service.send()
    return gapp


# -- by CLI --------------------------------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path) -> Path:
    config = init_site(tmp_path / "site", "flagman@example.org")
    for name in ("sc1", "sc2"):
        args = ["--config", str(config), "game", "new", "speed-circuit", "--name", name, "--gm", GM]
        args += ["--player", "kelly=kelly@example.org", "--player", "seb=seb@example.org"]
        assert main(args) == 0
    assert main(["--config", str(config), "game", "new", "racecraft", "--name", "rc1", "--signup", "--gm", GM]) == 0
    return config


def flagman(config: Path, *args: str) -> int:
    return main(["--config", str(config), *args])


def test_season_new_by_cli_keeps_its_settings_and_races(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = flagman(
        site, "season", "new", "spring", "--game-kind", "speed-circuit", "--gm", GM, "--scoring", "custom:10,6,4",
        "--drop", "1", "--no-show-penalty", "5", "--nmr-penalty", "3", "--races", "3",
        "--track", "quarry_ring", "--track", "harbour_loop", "--race", "sc1",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "season spring (speed_circuit) created: 3 races, scoring custom:10,6,4, 1 dropped" in out
    assert flagman(site, "season", "add", "spring", "sc2") == 0
    assert "sc2 is race 2 of season spring" in capsys.readouterr().out
    database = Database(load_settings(site, env={}).database_url)
    with database.read() as session:
        season = session.scalar(select(Season))
        assert season is not None
        assert (season.scoring, season.drop_results, season.no_show_penalty, season.nmr_penalty) == (
            "custom:10,6,4",
            1,
            5,
            3,
        )
        assert [(r.round, r.game.name) for r in season.races] == [(1, "sc1"), (2, "sc2")]
        assert seasons.track_for(season, 1) == {"track": "quarry_ring"}
        assert seasons.track_for(season, 3) == {"track": "quarry_ring"}
        assert seasons.track_for(season, 2) == {"track": "harbour_loop"}
    database.dispose()
    assert flagman(site, "season", "show", "spring") == 0
    shown = capsys.readouterr().out
    assert "Season spring (Speed Circuit), after 0 of 3 races" in shown
    assert "No race has finished yet." in shown
    assert "Races: sc1, sc2." in shown


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--scoring", "custom:3,5"], "never gives a place more points"),
        (["--scoring", "f9"], "the scoring table is f1, cfr, linear"),
        (["--drop", "3"], "would leave none to count"),
        (["--race", "rc1"], "rc1 is a game of racecraft"),
        (["--race", "nope"], "There is no game called nope"),
        (["--track", "mars"], "The track mars cannot be used"),
        (["--races", "0"], "A season runs 1 to 30 races"),
    ],
)
def test_season_new_refusals_exit_2_with_the_reason(
    site: Path, capsys: pytest.CaptureFixture[str], args: list[str], reason: str
) -> None:
    capsys.readouterr()
    assert flagman(site, "season", "new", "s1", "--game-kind", "speed-circuit", *args) == 2
    assert reason in capsys.readouterr().err
    database = Database(load_settings(site, env={}).database_url)
    with database.read() as session:
        assert session.scalar(select(Season)) is None, "nothing is made of a refused season"
    database.dispose()


def test_a_game_races_in_one_season_only(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "season", "new", "s1", "--game-kind", "speed_circuit", "--race", "sc1") == 0
    capsys.readouterr()
    assert flagman(site, "season", "new", "s2", "--game-kind", "speed_circuit", "--race", "sc1") == 2
    assert "sc1 is a race of a season already" in capsys.readouterr().err


def test_racecraft_has_no_tracks_to_rotate(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert flagman(site, "season", "new", "s1", "--game-kind", "racecraft", "--track", "monza") == 2
    assert "Racecraft has no tracks or maps to rotate" in capsys.readouterr().err


# -- by GM mail ----------------------------------------------------------------------------------


def test_season_new_by_gm_mail_makes_the_game_race_1_confirmed_and_audited(rc: TestApp) -> None:
    gm_says(rc, "SEASON rc1 NEW winter SCORING cfr DROP 1 NOSHOW 4 RACES 4")
    with rc.db.read() as session:
        season = seasons.find_season(session, "winter")
        assert season is not None
        assert (season.kind, season.gm_address, season.scoring, season.races_planned) == ("racecraft", GM, "cfr", 4)
        assert (season.drop_results, season.no_show_penalty) == (1, 4)
        assert [(r.round, r.game.name) for r in season.races] == [(1, "rc1")]
        row = session.scalars(select(GmAudit)).all()[-1]
    assert row.via == "mail" and row.outcome.startswith("done: season winter (Racecraft) created: 4 races")
    assert "season winter (Racecraft) created" in bodies(rc, GM), "the game's title, not its id"


def test_season_add_by_gm_mail_takes_only_a_season_of_that_gm(rc: TestApp) -> None:
    with rc.db.transaction() as session:
        for name, gm in (("rc2", GM), ("rc3", "other-gm@example.org")):
            create_game(rc.shell, session, kind="racecraft", name=name, players=RACERS, gm_address=gm, seed=3)
        seasons.create_season(
            rc.shell,
            session,
            seasons.SeasonSettings(name="theirs", kind="racecraft", gm_address="other-gm@example.org"),
        )
    gm_says(rc, "SEASON rc1 NEW mine")
    gm_says(rc, "SEASON rc2 ADD mine", game="rc2")
    gm_says(rc, "SEASON rc2 ADD theirs", game="rc2")
    with rc.db.read() as session:
        mine = seasons.find_season(session, "mine")
        theirs = seasons.find_season(session, "theirs")
        assert mine is not None and theirs is not None
        assert [r.game.name for r in mine.races] == ["rc1", "rc2"]
        assert theirs.races == []
    said = bodies(rc, GM)
    assert "rc2 is race 2 of season mine" in said
    assert "You run no season called theirs" in said


def test_season_by_gm_mail_refuses_what_it_cannot_read(rc: TestApp) -> None:
    gm_says(rc, "SEASON rc1 NEW s1 POINTS 3")
    gm_says(rc, "SEASON rc1 NEW s1 DROP many")
    gm_says(rc, "SEASON rc1 MAKE s1")
    said = bodies(rc, GM)
    assert "POINTS is not a season setting" in said
    assert "DROP takes a whole number, not many" in said
    assert "Write SEASON rc1 NEW <season>" in said
    with rc.db.read() as session:
        assert session.scalar(select(Season)) is None


# -- the table from finished races -----------------------------------------------------------------


def test_the_table_counts_a_finished_race_and_a_no_show(gapp: TestApp) -> None:
    people = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="racecraft", name="rc1", players=people, gm_address=GM, seed=5,
            deadline="24h", options={"turns": "3"},
        )  # fmt: skip
        seasons.create_season(
            gapp.shell,
            session,
            seasons.SeasonSettings(name="s1", kind="racecraft", gm_address=GM, no_show_penalty=5, games=("rc1",)),
        )
    gapp.service.send()
    for seat, use in (("kelly", 3), ("seb", 2), ("steve", 1), ("roger", 0)):  # anna never sends orders
        player_says(gapp, seat, f"USE {use}")
    to_the_finish(gapp, "rc1")
    with gapp.db.read() as session:
        season = seasons.find_season(session, "s1")
        assert season is not None
        table = seasons.table_of(session, season)
        game = find_game_row(session, "rc1")
        assert game is not None
        rules, state, _ = current_state(session, game)
        placed = {
            seat.player.name: placing.place
            for placing in rules.view(state, None, Viewer.PUBLIC).standings
            for seat in game.seats
            if seat.name in placing.players and not placing.note
        }
    assert table.races_run == 1
    by = {row.name: row for row in table.rows}
    assert set(by) == {"Kelly", "Seb", "Steve", "Roger", "Anna"}
    assert by["Anna"].points == -5 and by["Anna"].races[0] == "0-5"
    for name in ("Kelly", "Seb", "Steve", "Roger"):
        assert by[name].points == (F1_POINTS[placed[name] - 1] if name in placed else 0), name


def test_a_result_dropped_later_counts_while_a_driver_has_no_more_than_the_races_that_count(gapp: TestApp) -> None:
    """docs/championships.md, "Dropped results": each driver's best (races - drop) results count.
    Played by mail (playtest3): with DROP 1 of 3 races the final result of race 1 mailed every
    driver 0 points ("1* Steve 0 (25) - -")."""
    people = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="racecraft", name="rc1", players=people, gm_address=GM, seed=5,
            deadline="24h", options={"turns": "3"},
        )  # fmt: skip
        seasons.create_season(
            gapp.shell,
            session,
            seasons.SeasonSettings(name="s1", kind="racecraft", gm_address=GM, drop=1, races=3, games=("rc1",)),
        )
    gapp.service.send()
    for seat, use in (("kelly", 3), ("seb", 2), ("steve", 1), ("roger", 0), ("anna", 4)):
        player_says(gapp, seat, f"USE {use}")
    to_the_finish(gapp, "rc1")
    with gapp.db.read() as session:
        season = seasons.find_season(session, "s1")
        assert season is not None
        table = seasons.table_of(session, season)
    assert table.races_run == 1
    assert sorted((row.points for row in table.rows), reverse=True)[0] == 25, "the winner's 25 count"
    assert not any(cell.startswith("(") for row in table.rows for cell in row.races), "nothing dropped yet"
    final = [m for m in mails(gapp, "kelly@example.org") if "Final result" in str(m["Subject"])]
    table_text = body_of(final[0]).split("Season s1", 1)[1]
    assert "(25)" not in table_text and " 25  25 - -" in table_text


def test_every_results_mail_of_a_season_race_shows_the_table_and_the_final_counts_the_race(gapp: TestApp) -> None:
    people = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="racecraft", name="rc1", players=people, gm_address=GM, seed=5,
            deadline="24h", options={"turns": "3"},
        )  # fmt: skip
        create_game(gapp.shell, session, kind="racecraft", name="rc9", players=people, gm_address=GM, seed=5)
        seasons.create_season(
            gapp.shell, session, seasons.SeasonSettings(name="s1", kind="racecraft", gm_address=GM, games=("rc1",))
        )
    gapp.service.send()
    for seat in ("kelly", "seb", "steve", "roger", "anna"):
        player_says(gapp, seat, "USE 1")
    kelly = [m for m in mails(gapp, "kelly@example.org") if "Results of" in str(m["Subject"])]
    assert kelly, "a results mail"
    first = body_of(kelly[0])
    assert "Season s1 (Racecraft), after 0 of 3 races" in first
    to_the_finish(gapp, "rc1")
    final = [m for m in mails(gapp, "kelly@example.org") if "Final result" in str(m["Subject"])]
    assert len(final) == 1
    text = body_of(final[0])
    assert "Season s1 (Racecraft), after 1 of 3 races" in text
    assert "Kelly" in text.split("Season s1", 1)[1]
    html = final[0].get_body(("html",))
    assert html is not None and "after 1 of 3 races" in html.get_content()
    assert "after 1 of 3 races" in bodies(gapp, GM), "the GM's copy too"
    # A game of no season: no table.
    assert not any("Season s1" in body_of(m) for m in mails(gapp) if "[rc9]" in str(m["Subject"]))


def finished_season(tmp_path: Path, archive: bool = False) -> TestApp:
    """Season s1 of Racecraft: rc1 (race 1) run to its end with anna a no-show, rc2 (race 2)
    under way; with `archive`, the bot keeps the archive in tmp_path/site."""
    from dataclasses import replace

    app = new_app(tmp_path)
    if archive:
        app.close()
        settings = app.settings
        app = new_app(tmp_path, bot=replace(settings.bot, archive_dir=str(tmp_path / "site")))
    people = [PlayerSpec(s.seat, s.address, s.name, "UTC") for s in RACERS]
    with app.db.transaction() as session:
        for name, deadline in (("rc1", "24h"), ("rc2", "manual")):
            create_game(
                app.shell, session, kind="racecraft", name=name, players=people, gm_address=GM, seed=5,
                deadline=deadline, options={"turns": "3"},
            )  # fmt: skip
        seasons.create_season(
            app.shell,
            session,
            seasons.SeasonSettings(name="s1", kind="racecraft", gm_address=GM, no_show_penalty=5, games=("rc1", "rc2")),
        )
    app.service.send()
    for seat, use in (("kelly", 3), ("seb", 2), ("steve", 1), ("roger", 0)):
        player_says(app, seat, f"USE {use}")
    to_the_finish(app, "rc1")
    return app


def test_the_season_page_shows_the_table_and_links_its_races(tmp_path: Path) -> None:
    from bot.games.archive import write_season_page

    app = finished_season(tmp_path)
    try:
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            page = write_season_page(session, season, tmp_path / "page")
            table = seasons.table_of(session, season)
    finally:
        app.close()
    html = page.read_text(encoding="utf-8")
    assert "<h1>Season s1</h1>" in html and "after 1 of 3 races" in html
    for row in table.rows:
        assert f'<th scope="row">{row.name}</th><td>{row.points}</td>' in html
    assert '<a href="../../rc1/index.html">rc1</a> (finished)' in html
    assert "<script" not in html and (tmp_path / "page" / "style.css").exists()
    # The chart of points over races: inline SVG, a line per driver, a legend with the points.
    assert html.count("<polyline ") == len(table.rows) and "Points over races" in html
    for row in table.rows:
        assert row.after == (row.points,)
        assert f"{row.place}{'=' if row.shared else ''}. {row.name}, {row.points}</li>" in html


def test_the_bot_keeps_the_season_page_in_its_archive(tmp_path: Path) -> None:
    app = finished_season(tmp_path, archive=True)
    app.close()
    page = tmp_path / "site" / "_seasons" / "s1" / "index.html"
    assert page.exists(), "written as the race finished"
    html = page.read_text(encoding="utf-8")
    assert "after 1 of 3 races" in html and "Anna" in html and "0-5" in html
    assert (tmp_path / "site" / "rc1" / "index.html").exists()


def test_season_archive_by_cli(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert flagman(site, "season", "new", "s1", "--game-kind", "speed_circuit", "--race", "sc1") == 0
    capsys.readouterr()
    assert flagman(site, "season", "archive", "s1", str(tmp_path / "out")) == 0
    assert "season page written" in capsys.readouterr().out
    assert "No race has finished yet." in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert flagman(site, "season", "archive", "nope", str(tmp_path / "out")) == 2
    assert "There is no season called nope" in capsys.readouterr().err


# -- the next race ---------------------------------------------------------------------------------


def test_the_next_race_is_made_and_started_when_the_last_ends_its_grid_from_the_table(tmp_path: Path) -> None:
    app = finished_season(tmp_path)  # rc1 over; rc2 race 2 under way (manual deadlines)
    try:
        with app.db.transaction() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            season.races_planned = 3
            rc2 = find_game_row(session, "rc2")
            assert rc2 is not None
            rc2.deadline_spec = "24h"
        gm_says(app, "PROCESS rc2", game="rc2")
        to_the_finish(app, "rc2")
        app.service.tick()
        app.service.send()
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            assert [r.game.name for r in season.races] == ["rc1", "rc2", "s1-r3"]
            table = seasons.table_of(session, season)
            third = season.races[2].game
            assert third.status == "active" and third.gm_address == GM and third.options == {"turns": "3"}
            order = [seat.player.name for seat in third.seats]
        assert order == [row.name for row in table.rows], "the grid is the table, leader first"
        sheet = [m for m in mails(app, "kelly@example.org") if "[s1-r3]" in str(m["Subject"])]
        assert sheet, "every driver gets the new race's sheet"
        assert "This is race 3 of 3 of season s1" in body_of(sheet[0])
        app.service.tick()
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None and len(season.races) == 3, "made once"
        to_the_finish(app, "s1-r3")
        app.service.tick()
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None and season.status == "finished" and len(season.races) == 3
    finally:
        app.close()


# -- sign-ups ----------------------------------------------------------------------------------------


def test_join_a_season_by_mail_takes_a_seat_in_its_race_open_for_sign_ups_after_the_code(gapp: TestApp) -> None:
    from tests.bot.gm_helpers import last, stranger_joins, stranger_says

    with gapp.db.transaction() as session:
        create_game(gapp.shell, session, kind="racecraft", name="opener", players=[], gm_address=GM, signup=True)
        seasons.create_season(gapp.shell, session, seasons.SeasonSettings(name="cup", kind="racecraft", gm_address=GM))
    stranger_says(gapp, "early@example.net", "JOIN cup Early")
    refused = body_of(last(gapp, "early@example.net"))
    assert "Season cup has no race open for sign-ups now" in refused
    with gapp.db.transaction() as session:
        season = seasons.find_season(session, "cup")
        assert season is not None
        seasons.add_race(session, season, "opener")
    stranger_says(gapp, "kim@example.net", "JOIN cup Kim")
    with gapp.db.read() as session:
        game = find_game_row(session, "opener")
        assert game is not None and game.seats == [], "no seat before the code comes back (double opt-in)"
    stranger_joins(gapp, "kim@example.net", "JOIN cup Kim")
    with gapp.db.read() as session:
        game = find_game_row(session, "opener")
        assert game is not None
        assert [(s.name, s.player.address) for s in game.seats] == [("kim", "kim@example.net")]


def test_a_race_corrected_by_rollback_counts_as_corrected_in_the_table_and_its_mail(tmp_path: Path) -> None:
    app = finished_season(tmp_path)
    try:
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            before = {row.name: row for row in seasons.table_of(session, season).rows}
        assert before["Anna"].races[0] == "0-5", "a no-show at first"
        gm_says(app, "ROLLBACK rc1")
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            assert seasons.table_of(session, season).races_run == 0, "reopened: no result to count"
        gm_says(app, "ORDER rc1 anna USE 3\nPROCESS rc1")
        with app.db.read() as session:
            season = seasons.find_season(session, "s1")
            assert season is not None
            after = seasons.table_of(session, season)
        assert after.races_run == 1
        anna = next(row for row in after.rows if row.name == "Anna")
        assert not anna.races[0].endswith("-5"), "driven by the GM's ORDER: no longer a no-show"
        finals = [m for m in mails(app, "kelly@example.org") if "inal result" in str(m["Subject"])]
        assert len(finals) == 2, "the race's final result, then the corrected one"
        assert "0-5" in body_of(finals[0]).split("Season s1", 1)[1]
        table = body_of(finals[1]).split("Season s1", 1)[1]
        assert "Anna" in table and "0-5" not in table
    finally:
        app.close()
