"""A series in tiers (docs/championships.md, "Tiers: promotion and relegation"; "Tiers
with promotion and relegation between seasons (N up, N down, settings), and the next season's
tiers drawn by the bot, the GM confirming from the digest"): two tiers of one race each; once
both have ended the draw is in the GM's digest and answers SEASON <game> NEXT; nothing is made
until SEASON <game> NEXT CONFIRM (or `flagman season next --confirm`), which makes each tier's
next season and starts its first race with the drawn drivers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.clock import as_utc
from bot.games import season_tiers, seasons
from bot.games.turns import PlayerSpec, create_game
from bot.gm import digest
from bot.models import Game, GmAudit, Player, Season, SeasonDraw, SeriesEntry, Substitute
from bot.testing import TestApp, body_of, reply_to, words_of
from tests.bot.gm_helpers import (
    GM,
    Played,
    bodies,
    copy_of,
    cycle,
    game_row,
    gm_says,
    last,
    mails,
    new_app,
    played_once,
    player_says,
    to_the_finish,
)
from tests.helpers import moving_clock

TOP = tuple((s, f"{s}@example.org") for s in ("kelly", "seb", "steve", "roger", "anna"))
LOW = tuple((s, f"{s}@example.org") for s in ("uma", "vic", "walt", "xia", "zed"))


def _play_tiers(app: TestApp) -> None:
    """Series cup: tier 1 (top1, game a1: five drivers), tier 2 (low1, game b1: five others), one
    race each, one up and one down; both races run to their end, and the seasons
    marked finished by the tick after."""
    with app.db.transaction() as session:
        for game, people in (("a1", TOP), ("b1", LOW)):
            create_game(
                app.shell, session, kind="racecraft", name=game, gm_address=GM, seed=3, deadline="24h",
                options={"turns": "3"}, players=[PlayerSpec(s, a, s.title(), "UTC") for s, a in people],
            )  # fmt: skip
        for name, tier, game in (("top1", 1, "a1"), ("low1", 2, "b1")):
            seasons.create_season(
                app.shell,
                session,
                seasons.SeasonSettings(
                    name=name,
                    kind="racecraft",
                    gm_address=GM,
                    races=1,
                    games=(game,),
                    series="cup",
                    tier=tier,
                    promote=1,
                    relegate=1,
                ),  # fmt: skip
            )
    app.service.send()
    for game, people in (("a1", TOP), ("b1", LOW)):
        for use, (seat, address) in enumerate(people):
            player_says(app, seat, f"USE {use}", game=game, address=address)
    to_the_finish(app, "a1")
    to_the_finish(app, "b1")
    app.service.tick()


@pytest.fixture(scope="module")
def played_tiers(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """`_play_tiers`, played once for the module's tests to copy."""
    return played_once(tmp_path_factory.mktemp("tiers"), _play_tiers)


@pytest.fixture
def tiers(played_tiers: Played, tmp_path: Path) -> Iterator[TestApp]:
    """A copy of the two tiers played to their end (`_play_tiers`)."""
    app = copy_of(played_tiers, tmp_path / "played")
    yield app
    app.close()


def last_body(app: TestApp) -> str:
    return body_of(last(app, GM))


def _tables(app: TestApp) -> dict[str, list[str]]:
    with app.db.read() as session:
        out = {}
        for name in ("top1", "low1"):
            season = seasons.find_season(session, name)
            assert season is not None and season.status == "finished"
            out[name] = [row.name for row in seasons.table_of(session, season).rows]
        return out


def test_the_draw_waits_in_the_digest_and_by_mail_and_nothing_is_made_until_confirmed(tiers: TestApp) -> None:
    tables = _tables(tiers)
    top, low = tables["top1"], tables["low1"]
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None
        draw = found[0]
    assert [[d.name for d in t.drivers] for t in draw.tiers] == [[*top[:4], low[0]], [top[4], *low[1:]]]
    assert [t.season for t in draw.tiers] == ["cup-2-t1", "cup-2-t2"]
    # The GM has no game running, but the draw brings the digest.
    assert digest.send_due_digests(tiers.shell, force=True) == 1
    tiers.service.send()
    text = [words_of(m) for m in mails(tiers, GM) if "GM digest" in str(m["Subject"])][-1]
    assert "the draw for season 2" in text and f"{low[0]} (up from tier 1)" not in text
    assert f"{low[0]} (up from tier 2)" in text and f"{top[4]} (down from tier 1)" in text
    assert "SEASON b1 NEXT CONFIRM" in text
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    assert "the draw for season 2" in bodies(tiers, GM)
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 2, "nothing made by the draw"
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    with tiers.db.read() as session:
        made = {s.name: s for s in session.scalars(select(Season).where(Season.edition == 2))}
        assert set(made) == {"cup-2-t1", "cup-2-t2"}
        first = made["cup-2-t1"].races[0].game
        assert (made["cup-2-t1"].tier, made["cup-2-t1"].promote, made["cup-2-t1"].relegate) == (1, 1, 1)
        assert first.status == "active" and first.name == "cup-2-t1-r1" and first.options == {"turns": "3"}
        assert [s.player.name for s in first.seats] == [*top[:4], low[0]], "those who stay, then those come up"
        second = made["cup-2-t2"].races[0].game
        assert [s.player.name for s in second.seats] == [top[4], *low[1:]], "those come down first"
        row = session.scalars(select(GmAudit)).all()[-1]
        assert row.outcome.startswith("done: Series cup (Racecraft): season 2 is made")
        assert season_tiers.draw_of(session, "cup") is None, "made once: the new edition runs"
    sheet = [m for m in mails(tiers, "zed@example.org") if "[cup-2-t" in str(m["Subject"])]
    assert sheet and "This is race 1 of 1 of season cup-2-t" in body_of(sheet[0])


def test_a_digest_with_only_a_draw_waiting_says_so_and_prints_no_empty_section(tiers: TestApp) -> None:
    """A digest names what waits for the GM in its subject: with no game running or just
    finished, "a draw to confirm", not "0 games"; a section with nothing in it is not printed."""
    assert digest.send_due_digests(tiers.shell, force=True) == 1  # the races' finish: listed once
    moving_clock(tiers).advance(timedelta(days=3))
    assert digest.send_due_digests(tiers.shell, force=True) == 1
    tiers.service.send()
    first, sent = [m for m in mails(tiers, GM) if "GM digest" in str(m["Subject"])]
    assert str(first["Subject"]).startswith("[GM digest] 2 games, a draw to confirm, "), first["Subject"]
    subject = str(sent["Subject"])
    assert subject.startswith("[GM digest] a draw to confirm, "), subject
    assert "0 games" not in subject
    text = body_of(sent)
    assert "the draw for season 2" in text
    assert "Your GM reply address per game" not in text


def test_a_new_seasons_first_sheet_says_the_grid_is_the_draw_and_who_moved(tiers: TestApp) -> None:
    """docs/championships.md: "the first sheet of a race of a new season (after a draw) says the
    same for that season" -- which race it is and the grid, here the draw's ("those coming down
    first, then those staying, then those coming up"). Played by mail (playtest3): it said "The
    grid is drawn from the season's table" of a season with no race yet, and the promoted and
    the relegated were never told they had moved."""
    tables = _tables(tiers)
    top, low = tables["top1"], tables["low1"]
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    address = {name: f"{name.lower()}@example.org" for name in (*top, *low)}
    up = [m for m in mails(tiers, address[low[0]]) if "[cup-2-t1-r1]" in str(m["Subject"])]
    text = words_of(up[0])
    assert "This is race 1 of 1 of season cup-2-t1: tier 1 of series cup's season 2." in text
    assert f"{low[0]} (up from tier 2)" in text and "drawn from the season's table" not in text
    down = [m for m in mails(tiers, address[top[4]]) if "[cup-2-t2-r1]" in str(m["Subject"])]
    text = words_of(down[0])
    assert "The grid is the draw from the last season's final tables" in text
    assert f"{top[4]} (down from tier 1), {low[1]}" in text


def test_a_second_confirm_and_a_confirm_by_another_gm_are_refused(tiers: TestApp) -> None:
    with tiers.db.transaction() as session:
        game = session.scalar(select(Game).where(Game.name == "a1"))
        assert game is not None
        with pytest.raises(seasons.SeasonRequestError):
            season_tiers.confirm_next(tiers.shell, session, "cup", gm_address="other@example.org")
        season_tiers.confirm_next(tiers.shell, session, "cup")
    with tiers.db.transaction() as session:
        with pytest.raises(seasons.SeasonRequestError, match="no next season to draw"):
            season_tiers.confirm_next(tiers.shell, session, "cup")


def test_season_next_by_cli_shows_the_draw_and_makes_it_with_confirm(
    tiers: TestApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main
    from tests.helpers import init_site

    config = init_site(tmp_path / "site", "flagman@example.org")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"sqlite:///flagman.sqlite"', f'"{tiers.settings.database_url}"'), encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(config), "season", "next", "top1"]) == 0, "a season names its series"
    shown = capsys.readouterr().out
    assert "Series cup (Racecraft): the draw for season 2" in shown and "--confirm" in shown
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 2
    assert main(["--config", str(config), "season", "next", "cup", "--confirm"]) == 0
    assert "season 2 is made" in capsys.readouterr().out
    assert main(["--config", str(config), "season", "next", "cup"]) == 2
    assert "no next season to draw" in capsys.readouterr().err
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 4


def test_a_tier_is_taken_once_and_a_series_is_of_one_kind(tmp_path: Path) -> None:
    app = new_app(tmp_path)
    try:
        with app.db.transaction() as session:
            made = seasons.create_season(
                app.shell, session, seasons.SeasonSettings("t1", "racecraft", GM, series="league", promote=2)
            )
            assert (made.series, made.tier, made.edition) == ("league", 1, 1)
            alone = seasons.create_season(app.shell, session, seasons.SeasonSettings("solo", "racecraft", GM))
            assert (alone.series, alone.tier) == ("solo", 1), "a season alone is a series of its own"
        for settings, reason in (
            (seasons.SeasonSettings("t1b", "racecraft", GM, series="league"), "Tier 1 of series league is season t1"),
            (seasons.SeasonSettings("t2", "speed-circuit", GM, series="league", tier=2), "a series of racecraft"),
            (seasons.SeasonSettings("t2", "racecraft", GM, series="league", tier=11), "A tier is a number from 1"),
            (seasons.SeasonSettings("t2", "racecraft", GM, series="league", relegate=99), "0 to 20 down"),
        ):
            with app.db.transaction() as session, pytest.raises(seasons.SeasonRequestError, match=reason):
                seasons.create_season(app.shell, session, settings)
    finally:
        app.close()


def test_season_new_by_gm_mail_takes_series_tier_up_and_down(tmp_path: Path) -> None:
    from tests.bot.conftest import RACERS

    app = new_app(tmp_path)
    try:
        with app.db.transaction() as session:
            create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, seed=7)
        app.service.send()
        gm_says(app, "SEASON rc1 NEW low SERIES league TIER 2 UP 2 DOWN 1")
        with app.db.read() as session:
            season = seasons.find_season(session, "low")
            assert season is not None
            assert (season.series, season.tier, season.promote, season.relegate) == ("league", 2, 2, 1)
        assert "series league, tier 2, its top 2 go up, its bottom 1 go down" in bodies(app, GM)
        gm_says(app, "SEASON rc1 NEXT")
        assert "Series league has no next season to draw" in bodies(app, GM)
    finally:
        app.close()


def test_a_driver_without_a_seat_at_the_end_leaves_and_the_next_moves_in_their_place(tiers: TestApp) -> None:
    """docs/championships.md: "the drivers going on are the people holding a seat of their
    tier's last race at its end ...; a leaver is never moved and does not count: the next
    driver in the table moves in their place"."""
    top, low = _tables(tiers)["top1"], _tables(tiers)["low1"]
    with tiers.db.transaction() as session:
        b1 = session.scalar(select(Game).where(Game.name == "b1"))
        assert b1 is not None
        leaving = next(seat for seat in b1.seats if seat.player.name == low[0])
        leaving.active = False  # tier 2's winner resigned at the end
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None
    draw = found[0]
    assert draw.leavers == (low[0],)
    assert [[d.name for d in t.drivers] for t in draw.tiers] == [[*top[:4], low[1]], [top[4], *low[2:]]]


def test_the_draw_is_stored_when_first_shown_and_confirming_makes_the_stored_draw(tiers: TestApp) -> None:
    """docs/championships.md, "The GM confirms": "the draw shown is the draw made": the draw is
    stored when it is first shown, and confirming makes that draw, not a recomputation."""
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(SeasonDraw)) == 0, "not shown yet: nothing stored"
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    with tiers.db.transaction() as session:
        stored = session.scalars(select(SeasonDraw)).one()
        assert (stored.series, stored.edition, stored.made_at) == ("cup", 2, None)
        # Swap the two tiers' lists in the stored draw: confirming must make the draw stored.
        stored.drawn = [stored.drawn[1], stored.drawn[0]]
        swapped = [[d["driver"] for d in tier] for tier in stored.drawn]
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(SeasonDraw)) == 1, "shown again: the same draw"
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    with tiers.db.read() as session:
        made = {s.tier: s for s in session.scalars(select(Season).where(Season.edition == 2))}
        seated = [[seasons.driver_of(seat) for seat in made[t].races[0].game.seats] for t in (1, 2)]
        assert seated == swapped
        assert session.scalars(select(SeasonDraw)).one().made_at is not None


def test_a_correction_after_the_draw_is_shown_makes_it_stale_until_the_gm_draws_again(tiers: TestApp) -> None:
    """docs/championships.md, "The GM confirms": a race result corrected after the draw was
    shown makes the draw stale; the digest and SEASON <game> NEXT say so, confirming is refused,
    and the GM draws again (NEXT REDRAW) once the race has its result again."""
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    assert "stale" not in bodies(tiers, GM)
    gm_says(tiers, "ROLLBACK a1", game="a1")
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None and found[0].stale, "a race reopened: the draw shown is stale"
    gm_says(tiers, "SEASON b1 NEXT REDRAW", game="b1")
    assert "cannot be drawn again yet: a race of its last season is reopened" in last_body(tiers)
    gm_says(tiers, "PROCESS a1", game="a1")
    with tiers.db.read() as session:
        assert str(game_row(tiers, "a1").status) == "finished"
        found = season_tiers.draw_of(session, "cup")
        assert found is not None and found[0].stale, "resolved again: still the draw shown, still stale"
    assert digest.send_due_digests(tiers.shell, force=True) == 1
    tiers.service.send()
    text = [words_of(m) for m in mails(tiers, GM) if "GM digest" in str(m["Subject"])][-1]
    assert "This draw is stale" in text and "SEASON b1 NEXT REDRAW" in text
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    assert "the draw shown for its next season is stale" in last_body(tiers)
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 2, "nothing made"
    gm_says(tiers, "SEASON b1 NEXT REDRAW", game="b1")
    assert "the draw for season 2" in last_body(tiers) and "stale" not in last_body(tiers)
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None and not found[0].stale
        assert session.scalar(select(func.count()).select_from(SeasonDraw)) == 1
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    assert "season 2 is made" in last_body(tiers)


def test_season_next_redraw_by_cli(tiers: TestApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main
    from tests.helpers import init_site

    config = init_site(tmp_path / "site", "flagman@example.org")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"sqlite:///flagman.sqlite"', f'"{tiers.settings.database_url}"'), encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(config), "season", "next", "cup"]) == 0
    with tiers.db.transaction() as session:
        stored = session.scalars(select(SeasonDraw)).one()
        first = stored.drawn
        stored.drawn = [first[1], first[0]]  # a draw that the tables now would not give
    assert main(["--config", str(config), "season", "next", "cup", "--redraw", "--confirm"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["--config", str(config), "season", "next", "cup", "--redraw"]) == 0
    assert "the draw for season 2" in capsys.readouterr().out
    with tiers.db.read() as session:
        assert session.scalars(select(SeasonDraw)).one().drawn == first, "drawn again, stored in its place"


def test_newcomers_who_joined_and_the_bench_opted_in_go_to_the_lowest_tier_and_robots_fill_a_least_field(
    tiers: TestApp,
) -> None:
    """docs/championships.md, "Newcomers and robots": a known player's JOIN <series> with no race
    open enters the next season; the bench volunteers of the kind too when the lowest tier takes
    them (BENCH ON); they are drawn into the lowest tier behind its drivers; robots fill a tier's
    first race only up to the least field its GM set, and the draw names them as robots."""
    newcomer = PlayerSpec("nia", "nia@example.org", "Nia", "UTC")
    volunteer = PlayerSpec("oli", "oli@example.org", "Oli", "UTC")
    with tiers.db.transaction() as session:
        create_game(
            tiers.shell, session, kind="racecraft", name="x1", gm_address=GM, seed=5, deadline="24h",
            players=[*(PlayerSpec(s, a, s.title(), "UTC") for s, a in TOP[:3]), newcomer, volunteer],
        )  # fmt: skip
    tiers.service.send()
    player_says(tiers, "nia", "JOIN cup Nia", game="x1", address=newcomer.address)
    assert "You have joined series cup for its next season" in bodies(tiers, newcomer.address)
    player_says(tiers, "nia", "JOIN top1", game="x1", address=newcomer.address)  # a season names its series
    with tiers.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(SeriesEntry)) == 1, "one entry, joined twice"
        oli = session.scalar(select(Player).where(Player.address == volunteer.address))
        assert oli is not None
        session.add(Substitute(player_id=oli.id, kind="racecraft", since=tiers.shell.now()))
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None
    assert [d.name for d in found[0].tiers[1].drivers][-1] == "Nia", "the bench is not drawn in unless opted in"
    with tiers.db.transaction() as session:
        low = seasons.find_season(session, "low1")
        assert low is not None
        low.bench_newcomers, low.min_field = True, 8
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    text = words_of(last(tiers, GM))
    assert "Nia (new to the series), Oli (new to the series), robot-1 (a robot)." in text
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1")
    with tiers.db.read() as session:
        second = next(s for s in session.scalars(select(Season).where(Season.edition == 2)) if s.tier == 2)
        seats = second.races[0].game.seats
        assert [(s.name, s.robot) for s in seats][-3:] == [("nia", False), ("oli", False), ("robot-1", True)]
        assert len(seats) == 8 and (second.min_field, second.bench_newcomers) == (8, True), "settings go on"
        assert session.scalar(select(func.count()).select_from(SeriesEntry)) == 0, "drawn in: the entry is done"
        first = next(s for s in session.scalars(select(Season).where(Season.edition == 2)) if s.tier == 1)
        assert not any(s.robot for s in first.races[0].game.seats), "no least field set: no robots"


def test_a_stale_draw_with_a_race_still_reopened_names_that_race_and_waits_for_its_result(tiers: TestApp) -> None:
    """docs/championships.md, "The GM confirms": the draw is drawn again "once every race has its
    result". Played by mail (playtest3): while the other tier's race was reopened, the digest,
    SEASON <game> NEXT and the refused CONFIRM told the GM to REDRAW now -- refused in turn --
    without naming the race they wait for."""
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    gm_says(tiers, "ROLLBACK b1", game="b1")
    gm_says(tiers, "SEASON a1 NEXT", game="a1")
    text = " ".join(last_body(tiers).split())
    assert "This draw is stale" in text and "b1 of tier 2, reopened by its GM with a ROLLBACK" in text
    assert "can be drawn again only once that race has a result again" in text
    gm_says(tiers, "SEASON a1 NEXT CONFIRM", game="a1")
    text = " ".join(last_body(tiers).split())
    assert "is stale" in text and "b1 of tier 2" in text and "once that race has a result again" in text
    gm_says(tiers, "SEASON a1 NEXT REDRAW", game="a1")
    assert "reopened (a ROLLBACK: b1 of tier 2)" in " ".join(last_body(tiers).split())
    gm_says(tiers, "PROCESS b1", game="b1")
    gm_says(tiers, "SEASON a1 NEXT", game="a1")
    text = " ".join(last_body(tiers).split())
    assert "This draw is stale: a race result it was drawn from was corrected" in text and "b1 of tier" not in text


def test_a_join_after_the_draw_is_shown_makes_it_stale(tiers: TestApp) -> None:
    """docs/championships.md: a newcomer joining after the draw was shown makes it stale."""
    gm_says(tiers, "SEASON b1 NEXT", game="b1")
    with tiers.db.transaction() as session:
        kim = Player(address="kim@example.org", name="Kim", timezone="UTC", created_at=tiers.shell.now())
        session.add(kim)
        session.flush()
        assert season_tiers.enter_series(session, "cup", kim, tiers.shell.now()) == "cup"
    with tiers.db.read() as session:
        found = season_tiers.draw_of(session, "cup")
        assert found is not None and found[0].stale
    gm_says(tiers, "SEASON b1 NEXT REDRAW", game="b1")
    assert "Kim (new to the series)." in words_of(last(tiers, GM))


def test_season_new_takes_a_least_field_and_the_bench_by_mail_and_cli(tmp_path: Path) -> None:
    from tests.bot.conftest import RACERS

    app = new_app(tmp_path)
    try:
        with app.db.transaction() as session:
            create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, seed=7)
        app.service.send()
        gm_says(app, "SEASON rc1 NEW low SERIES league TIER 2 FIELD 9")
        assert "A least field (FIELD, --min-field) is 0 (no robots) to 8" in body_of(last(app, GM))
        gm_says(app, "SEASON rc1 NEW low SERIES league TIER 2 BENCH yes")
        assert "BENCH takes ON or OFF" in body_of(last(app, GM))
        gm_says(app, "SEASON rc1 NEW low SERIES league TIER 2 FIELD 6 BENCH ON")
        assert "robots fill its next race to 6 drivers; the substitutes bench drawn in" in words_of(last(app, GM))
        with app.db.read() as session:
            season = seasons.find_season(session, "low")
            assert season is not None and (season.min_field, season.bench_newcomers) == (6, True)
    finally:
        app.close()


GM2 = "gm2@example.org"


def _second_gm_runs_tier_2(app: TestApp) -> None:
    with app.db.transaction() as session:
        low = seasons.find_season(session, "low1")
        b1 = session.scalar(select(Game).where(Game.name == "b1"))
        assert low is not None and b1 is not None
        low.gm_address = b1.gm_address = GM2


def test_tiers_with_different_gms_each_confirm_by_mail_and_the_draw_is_made_when_all_have(tiers: TestApp) -> None:
    """docs/championships.md, "The GM confirms": "each tier's GM gets the draw in their own
    digest and confirms it by mail ...; the draw is made when the GMs of every tier have
    confirmed it"."""
    _second_gm_runs_tier_2(tiers)
    assert digest.send_due_digests(tiers.shell, force=True) == 2, "each tier's GM gets the draw in a digest"
    tiers.service.send()
    for address, race in ((GM2, "b1"), (GM, "a1")):
        text = [body_of(m) for m in mails(tiers, address) if "GM digest" in str(m["Subject"])][-1]
        assert "Its tiers have different GMs" in text and f"SEASON {race} NEXT CONFIRM" in text, address
        assert "No tier's GM has confirmed it yet." in text
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1", sender=GM2)
    answer = body_of(last(tiers, GM2))
    assert "Confirmed so far by the GM of tier 2; waiting for the GM of tier 1." in answer
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 2, "one tier confirmed: nothing made"
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1", sender=GM2)
    assert "waiting for the GM of tier 1" in body_of(last(tiers, GM2)), "confirming twice changes nothing"
    told = len(mails(tiers, GM2))
    gm_says(tiers, "SEASON a1 NEXT CONFIRM", game="a1")
    assert "season 2 is made" in body_of(last(tiers, GM))
    # The GM who confirmed first is told the other GM's confirm made the season.
    told_made = [m for m in mails(tiers, GM2)[told:] if "season 2 is made" in str(m["Subject"])]
    assert len(told_made) == 1, [str(m["Subject"]) for m in mails(tiers, GM2)[told:]]
    assert "The draw you confirmed is made" in body_of(told_made[0]) and "cup-2-t2-r1" in body_of(told_made[0])
    assert not [m for m in mails(tiers, GM)[-3:] if "season 2 is made" in str(m["Subject"])], "not twice"
    with tiers.db.read() as session:
        made = {s.tier: s.gm_address for s in session.scalars(select(Season).where(Season.edition == 2))}
        assert made == {1: GM, 2: GM2}, "each tier keeps its GM"


def test_a_redraw_starts_the_confirmations_again_and_a_gm_of_no_tier_is_refused(tiers: TestApp) -> None:
    _second_gm_runs_tier_2(tiers)
    gm_says(tiers, "SEASON b1 NEXT CONFIRM", game="b1", sender=GM2)
    with tiers.db.transaction() as session:
        assert session.scalars(select(SeasonDraw)).one().confirmed == [2]
        with pytest.raises(seasons.SeasonRequestError, match="You run no season called cup"):
            season_tiers.confirm_next(tiers.shell, session, "cup", gm_address="other@example.org")
    gm_says(tiers, "SEASON a1 NEXT REDRAW", game="a1")
    assert "No tier's GM has confirmed it yet." in body_of(last(tiers, GM))
    gm_says(tiers, "SEASON a1 NEXT CONFIRM", game="a1")
    assert "waiting for the GM of tier 2" in body_of(last(tiers, GM))
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Season)) == 2


def test_bonus_points_only_for_an_honour_the_game_defines(tmp_path: Path) -> None:
    """docs/championships.md, "Bonus points": Speed Circuit's races have a pole, Racecraft's
    none: a Racecraft season with +pole is refused, saying what the game has."""
    from tests.bot.conftest import RACERS

    app = new_app(tmp_path)
    try:
        with app.db.transaction() as session:
            create_game(app.shell, session, kind="racecraft", name="rc1", players=RACERS, gm_address=GM, seed=7)
        app.service.send()
        gm_says(app, "SEASON rc1 NEW spring SCORING f1+pole:1")
        assert "Racecraft reports no pole: its races have no honour to give bonus points for" in body_of(last(app, GM))
        with app.db.transaction() as session:
            made = seasons.create_season(
                app.shell, session, seasons.SeasonSettings("sc", "speed-circuit", GM, scoring="cfr+pole:2")
            )
            assert made.scoring == "cfr+pole:2"
    finally:
        app.close()


def test_a_strangers_join_of_a_series_between_seasons_is_double_opt_in_under_the_name_given(tiers: TestApp) -> None:
    """docs/championships.md, "Newcomers and robots": a stranger's JOIN <series> gets a code
    first, and is in the next season only once the code comes back from that address; they are
    named as JOIN <game> names them: the name given after the series (case kept; refused, with
    no code, when it does not read as a name), else the name of their mail's From, else their
    address's first part, written as a name ("Lee")."""
    from bot.testing import plain_mail
    from tests.bot.gm_helpers import stranger_says
    from tests.helpers import fake_inbox

    stranger_says(tiers, "kim@example.net", "JOIN cup Kim")
    code_mail = last(tiers, "kim@example.net")
    assert "[confirm series." in str(code_mail["Subject"]) and "series cup" in str(code_mail["Subject"])
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(SeriesEntry)) == 0, "nothing before the code"
    tiers.inbox.deliver(reply_to(code_mail, "Yes please", sender="kim@example.net"))
    cycle(tiers)
    assert "You have joined series cup for its next season" in body_of(last(tiers, "kim@example.net"))
    # A forged or stale code does nothing: another address sending it back is refused.
    tiers.inbox.deliver(reply_to(code_mail, "Yes", sender="eve@example.net"))
    cycle(tiers)
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(SeriesEntry)) == 1
    stranger_says(tiers, "spam@example.net", "JOIN cup http://buy.example")
    refused = last(tiers, "spam@example.net")
    assert "must be a name, not a link or an address" in body_of(refused)
    assert "buy.example" not in body_of(refused) and "[confirm" not in str(refused["Subject"])
    for sender, text in (
        ("Ann-Marie O'Neil <amo@example.net>", "JOIN cup"),  # the From's name
        ("kdv@example.net", "JOIN cup Kim de Vries"),  # the name given
        ("Robin <x@example.net>", "JOIN cup Xu"),  # the name given, before the From's
        ("<lee@example.net>", "JOIN cup"),  # no name: the address's first part
    ):
        fake_inbox(tiers).deliver(plain_mail(sender, "flagman@example.org", "hello", text))
        cycle(tiers)
    address = ("amo@example.net", "kdv@example.net", "x@example.net", "lee@example.net")
    codes = {a: last(tiers, a) for a in address}
    assert all("[confirm series." in str(m["Subject"]) for m in codes.values())
    # Each code stands for its own request: kdv's, sent back by x, enters nobody.
    tiers.inbox.deliver(reply_to(codes["kdv@example.net"], "Yes", sender="x@example.net"))
    cycle(tiers)
    with tiers.db.read() as session:
        assert session.scalar(select(func.count()).select_from(SeriesEntry)) == 1, "kim alone"
    for a in address:
        tiers.inbox.deliver(reply_to(codes[a], "Yes", sender=a))
        cycle(tiers)
        assert "You have joined series cup for its next season" in body_of(last(tiers, a)), a
    # A code once used stands no more.
    tiers.inbox.deliver(reply_to(codes["lee@example.net"], "Yes", sender="lee@example.net"))
    cycle(tiers)
    assert "You have joined" not in body_of(last(tiers, "lee@example.net"))
    with tiers.db.read() as session:
        names = {p.address: p.name for p in session.scalars(select(Player).where(Player.address.in_(address)))}
        found = season_tiers.draw_of(session, "cup")
        assert found is not None
    assert names == {
        "amo@example.net": "Ann-Marie O'Neil",
        "kdv@example.net": "Kim de Vries",
        "x@example.net": "Xu",
        "lee@example.net": "Lee",  # the address's first part, written as a name
    }
    # The draw names them so, first come first while the lowest tier's race has room.
    joined = ["Kim", "Ann-Marie O'Neil", "Kim de Vries", "Xu", "Lee"]
    drawn = [d.name for d in found[0].tiers[1].drivers if d.name in joined]
    assert drawn and drawn == joined[: len(drawn)], drawn


def _mornings(app: TestApp, days: int) -> None:
    """`days` days of the service as it runs: its jobs and the digest's job (`send_due_digests`,
    not forced: each GM's digest at 08:00 their time), every twelve hours."""
    for _ in range(days * 2):
        moving_clock(app).advance(timedelta(hours=12))
        cycle(app)
        digest.send_due_digests(app.shell)
        app.service.send()


def _listed_finished(app: TestApp, address: str, race: str) -> list[tuple[datetime, str]]:
    """The digests sent to `address` that list `race` as finished: when each was sent, and the
    block's words."""
    head = f"== {race} (Racecraft): finished =="
    found = []
    for mail in mails(app, address):
        text = words_of(mail)
        if "GM digest" in str(mail["Subject"]) and head in text:
            block = text.split(head, 1)[1]
            for end in ("==", "Since the last digest", "In the last day"):
                block = block.split(end, 1)[0]
            found.append((parsedate_to_datetime(str(mail["Date"])), block))
    return found


def _finished_at(app: TestApp, race: str) -> datetime:
    finished = game_row(app, race).finished_at
    assert finished is not None
    return as_utc(finished)


def test_each_gm_sees_a_finished_race_of_theirs_once_and_a_corrected_one_once_more(tmp_path: Path) -> None:
    """mail-interface.md, "The digest": a GM's digest lists the games they run. A race that
    finished is listed, for its own GM, in the first digest after it finished -- also when it
    was the GM's last game running -- and in no later one; resolved again after a ROLLBACK, it
    is listed once more, marked corrected. Played by mail (playtest3): tier 1 (GM) ended days
    before tier 2 (GM2), and only tier 2's race was listed as finished."""
    app = new_app(tmp_path)
    try:
        with app.db.transaction() as session:
            for game, people, gm, hours in (("a1", TOP, GM, "24h"), ("b1", LOW, GM2, "96h")):
                create_game(
                    app.shell, session, kind="racecraft", name=game, gm_address=gm, seed=3, deadline=hours,
                    options={"turns": "3"}, players=[PlayerSpec(s, a, s.title(), "UTC") for s, a in people],
                )  # fmt: skip
            for name, tier, game, gm in (("top1", 1, "a1", GM), ("low1", 2, "b1", GM2)):
                seasons.create_season(
                    app.shell,
                    session,
                    seasons.SeasonSettings(
                        name=name,
                        kind="racecraft",
                        gm_address=gm,
                        races=1,
                        games=(game,),
                        series="cup",
                        tier=tier,
                        promote=1,
                        relegate=1,
                    ),  # fmt: skip
                )
        app.service.send()
        _mornings(app, 4)
        assert str(game_row(app, "a1").status) == "finished" and str(game_row(app, "b1").status) == "active"
        _mornings(app, 10)
        assert str(game_row(app, "b1").status) == "finished"
        for gm, race, other in ((GM, "a1", "b1"), (GM2, "b1", "a1")):
            (listed,) = _listed_finished(app, gm, race)  # once, for its own GM
            assert listed[0] - _finished_at(app, race) <= timedelta(days=1), f"{race}: the next morning's digest"
            assert "corrected" not in listed[1]
            assert not _listed_finished(app, gm, other), "a GM sees the games they run"

        gm_says(app, "ROLLBACK b1", game="b1", sender=GM2)
        gm_says(app, "SEASON b1 NEXT", game="b1", sender=GM2)
        gm_says(app, "SEASON a1 NEXT", game="a1")
        _mornings(app, 1)
        gm_says(app, "PROCESS b1", game="b1", sender=GM2)
        assert str(game_row(app, "b1").status) == "finished"
        gm_says(app, "SEASON b1 NEXT REDRAW", game="b1", sender=GM2)
        gm_says(app, "SEASON b1 NEXT CONFIRM", game="b1", sender=GM2)
        gm_says(app, "SEASON a1 NEXT CONFIRM", game="a1")
        assert "season 2 is made" in body_of(last(app, GM))
        _mornings(app, 3)
        first, again = _listed_finished(app, GM2, "b1")  # once more, and no more
        assert again[0] - _finished_at(app, "b1") <= timedelta(days=1)
        assert "Finished again after a ROLLBACK" in again[1] and "corrected" not in first[1]
        assert len(_listed_finished(app, GM, "a1")) == 1, "tier 1's GM: still once"
        assert not _listed_finished(app, GM, "b1")
    finally:
        app.close()
