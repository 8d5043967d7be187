"""Robot seats in games: "`flagman game new ... --robot NAME`
(repeatable) adds a robot seat; the GM's `REPLACE game seat ROBOT` (and the CLI) hands a dropped
seat to a robot; a robot's orders are on file as soon as a turn opens, so early resolution waits
only for the people. Robots are shown as robots in every standings table and result."
(docs/DESIGN.md, "Robot drivers".)"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.cli import main as cli_main
from bot.games import robots
from bot.games.turns import GameError, create_game
from bot.models import OrderSubmission, Outbox, Turn
from bot.ops.backup import replay_game
from bot.store import find_game_row, open_turn, turn_submissions
from bot.testing import TestApp, reply_to
from rules import find_game
from rules.api import RobotLevel, robot_rng, turn_seed
from tests.bot import gm_helpers
from tests.bot.gm_helpers import GM, RACERS, body_of, cycle, gm_says, last, mails, player_says, turns
from tests.helpers import fake_inbox

gapp = gm_helpers.gapp
RACECRAFT = find_game("racecraft")
PEOPLE = RACERS[:3]  # kelly, seb, steve
ADDRESS = {p.seat: p.address for p in RACERS}


@pytest.fixture
def rr(gapp: TestApp) -> TestApp:
    """Racecraft `rr1`: three people and two robots (robo, tin), started, mail sent."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rr1",
            players=PEOPLE,
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            seed=11,
            robot_seats=("Robo", "tin"),
        )
    gapp.service.send()
    return gapp


def _filed(app: TestApp, number: int) -> dict[str, list[tuple[str, str]]]:
    with app.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        turn = session.scalar(select(Turn).where(Turn.game_id == game.id, Turn.number == number))
        assert turn is not None
        names = {s.id: s.name for s in game.seats}
        return {
            names[seat_id]: [(s.source, s.text) for s in subs]
            for seat_id, subs in turn_submissions(session, turn).items()
        }


def _expected_robot_orders(app: TestApp, number: int, seat: str) -> str:
    """What the design says a robot files: `robot_orders` of the state the turn opened with, its
    rng `robot_rng(turn_seed(game seed, turn number), seat)`."""
    with app.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        turn = session.scalar(select(Turn).where(Turn.game_id == game.id, Turn.number == number))
        assert turn is not None
        state = RACECRAFT.load_state(turn.state)
        return RACECRAFT.format_orders(
            RACECRAFT.robot_orders(state, seat, robot_rng(turn_seed(game.seed, number), seat))
        )


def test_robot_seats_are_made_never_mailed_and_file_their_orders_as_the_turn_opens(rr: TestApp) -> None:
    """ "adds a robot seat (no address; never mailed)"; "a robot's orders are on file as soon as
    a turn opens", computed from a value fixed when it opens (the game's seed and the turn's
    number), stored as the seat's own orders."""
    with rr.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        seats = {s.name: s for s in game.seats}
        assert [s.name for s in game.seats if s.robot] == ["robo", "tin"]  # names checked like a player's
        assert all(seats[n].player.address == robots.ROBOT_ADDRESS for n in ("robo", "tin"))
        assert not any(seats[p.seat].robot for p in PEOPLE)
    recipients = {str(m["To"]) for m in mails(rr)}
    assert not any("robot" in r for r in recipients), recipients
    assert {ADDRESS[p.seat] for p in PEOPLE} <= {r.split("<")[-1].strip(">") for r in recipients}
    filed = _filed(rr, 1)
    for seat in ("robo", "tin"):
        assert filed[seat] == [("robot", _expected_robot_orders(rr, 1, seat))]
    assert set(filed) == {"robo", "tin"}  # nobody else has orders yet


def test_early_resolution_waits_only_for_the_people_and_robots_play_on(rr: TestApp) -> None:
    """ "so early resolution waits only for the people": the turn resolves once the three people
    ordered; the next turn opens with the robots' orders on file again; replay is exact."""
    for seat in ("kelly", "seb"):
        player_says(rr, seat, "USE 2", game="rr1")
    assert len(turns(rr, "rr1")) == 1  # steve has not ordered: the robots do not make it due
    player_says(rr, "steve", "USE 3", game="rr1")
    assert len(turns(rr, "rr1")) == 2 and turns(rr, "rr1")[0].resolved_at is not None
    filed = _filed(rr, 1)
    assert not any(source in ("default", "plot") for subs in filed.values() for source, _ in subs)
    assert _filed(rr, 2)["robo"] == [("robot", _expected_robot_orders(rr, 2, "robo"))]
    results = body_of(last(rr, ADDRESS["kelly"]))
    assert "robo (robot)" in results and "tin (robot)" in results
    assert "Defaulted" not in results
    with rr.db.read() as session:
        assert all(not r.differences for r in replay_game(session, "rr1"))


def test_a_robots_set_counts_as_submitted_at_the_deadline_after_every_persons(rr: TestApp) -> None:
    """ "A robot's set counts as submitted at the deadline (or last)" (docs/DESIGN.md, "Robot
    drivers"): the robots' orders are filed as the turn opens, yet the order stored with the
    turn and handed to the rules (SpeedPhreakz S16: "the earliest submission wins") lists every
    person first, in the order they sent, then the robots in the order they were filed."""
    for seat in ("seb", "kelly", "steve"):
        player_says(rr, seat, "USE 2", game="rr1")
        rr.clock.advance(minutes=5)
    first = turns(rr, "rr1")[0]
    assert first.resolved_at is not None
    assert first.submitted == ["seb", "kelly", "steve", "robo", "tin"]


def test_a_robots_orders_do_not_depend_on_the_turns_dice_secret(gapp: TestApp, tmp_path: Path) -> None:
    """docs/DESIGN.md, "Robot drivers": the robot's rng is fixed when the turn opens and never
    depends on the dice seed, which comes from the turn's secret and the orders at resolution
    time. Two bots drawing different secrets file the same robot orders."""
    from bot.dice import SeededEntropy

    filed = []
    for number, app in enumerate((gapp, gm_helpers.new_app(tmp_path / "other"))):
        app.shell.entropy = SeededEntropy(number + 100)
        with app.db.transaction() as session:
            create_game(
                app.shell,
                session,
                kind="racecraft",
                name="rr1",
                players=PEOPLE,
                gm_address=GM,
                seed=11,
                robot_seats=("robo", "tin"),
            )
        filed.append(_filed(app, 1))
        secret = turns(app, "rr1")[0].secret
        assert secret is not None
    assert filed[0] == filed[1]
    assert turns(gapp, "rr1")[0].secret != secret


def test_robot_names_are_checked_like_players_and_count_towards_the_field(gapp: TestApp) -> None:
    """ "a name checked like a player's": a bad name, a name twice, too many seats are refused."""
    cases = [
        (("robo!",), "robot name"),
        (("kelly",), "same name"),
        (("robo", "robo"), "same name"),
        (("gm",), "not 'gm'"),
        (tuple(f"r{i}" for i in range(6)), "robots included"),
    ]
    for names, said in cases:
        with pytest.raises(GameError, match=said), gapp.db.transaction() as session:
            create_game(
                gapp.shell, session, kind="racecraft", name="rr9", players=PEOPLE, gm_address=GM, robot_seats=names
            )


def test_the_cli_adds_robots_and_shows_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman game new ... --robot NAME` (repeatable); `game list` and `game show` show them."""
    config = tmp_path / "flagman.toml"
    assert cli_main(["init", str(tmp_path), "--address", "flagman@example.org"]) == 0
    capsys.readouterr()
    assert (
        cli_main(
            [
                "--config",
                str(config),
                "game",
                "new",
                "racecraft",
                "--name",
                "rr1",
                "--player",
                "Kelly=kelly@example.org",
                "--player",
                "Seb=seb@example.org",
                "--player",
                "Steve=steve@example.org",
                "--robot",
                "Robo",
                "--robot",
                "tin",
            ]
        )
        == 0
    )
    assert "3 players and 2 robots" in capsys.readouterr().out
    assert cli_main(["--config", str(config), "game", "list"]) == 0
    assert "5 seats (2 robots)" in capsys.readouterr().out
    assert cli_main(["--config", str(config), "game", "show", "rr1"]) == 0
    shown = capsys.readouterr().out
    assert "robo         (robot)" in shown and "orders in" in shown
    assert "(robot)" in "\n".join(line for line in shown.splitlines() if line.startswith("    "))


def test_a_robot_seat_may_drive_at_the_easy_level(
    gapp: TestApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "a second, easier level for newcomers (`--robot NAME:easy`)". The level is
    stored with the seat (migration 0016_robots), the orders filed for it are the rules' easy robot's
    (`robot_orders(..., RobotLevel.EASY)` with the seat's rng), `game show` says so, and an
    unknown level is refused with the levels there are."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rr1",
            players=PEOPLE,
            gm_address=GM,
            seed=11,
            robot_seats=("Robo:easy", "tin:NORMAL"),
        )
    with gapp.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        assert {s.name: s.robot_level for s in game.seats if s.robot} == {"robo": "easy", "tin": "normal"}
        turn = session.scalar(select(Turn).where(Turn.game_id == game.id, Turn.number == 1))
        assert turn is not None
        state = RACECRAFT.load_state(turn.state)
    for seat, level in (("robo", RobotLevel.EASY), ("tin", RobotLevel.NORMAL)):
        rng = robot_rng(turn_seed(game.seed, 1), seat)
        assert _filed(gapp, 1)[seat] == [
            ("robot", RACECRAFT.format_orders(RACECRAFT.robot_orders(state, seat, rng, level)))
        ]
    with pytest.raises(GameError, match="the level is one of normal, easy"), gapp.db.transaction() as session:
        create_game(
            gapp.shell, session, kind="racecraft", name="rr9", players=PEOPLE, gm_address=GM, robot_seats=["r:hard"]
        )
    config = tmp_path / "flagman.toml"
    assert cli_main(["init", str(tmp_path), "--address", "flagman@example.org"]) == 0
    args = ["--config", str(config), "game", "new", "racecraft", "--name", "rr2"]
    for who in ("Kelly=kelly@example.org", "Seb=seb@example.org", "Steve=steve@example.org"):
        args += ["--player", who]
    assert cli_main([*args, "--robot", "Robo:easy", "--robot", "tin"]) == 0
    capsys.readouterr()
    assert cli_main(["--config", str(config), "game", "show", "rr2"]) == 0
    shown = capsys.readouterr().out
    assert "robo         (robot, easy)" in shown and "tin          (robot)" in shown


# -- REPLACE <game> <seat> ROBOT ------------------------------------------------------------------


def test_replace_robot_hands_the_seat_to_a_robot_and_tells_the_outgoing_player(rr: TestApp) -> None:
    """mail-interface.md, GM commands: "REPLACE <game> <seat> <address>|ROBOT"; "the GM's
    REPLACE game seat ROBOT hands a dropped seat to a robot". The outgoing player is told as for
    any REPLACE; the robot's orders for the open turn are on file at once; the seat is never
    mailed again, and the turn now waits only for the two people left."""
    before = len(mails(rr, ADDRESS["steve"]))
    gm_says(rr, "REPLACE rr1 steve ROBOT", game="rr1")
    confirmation = body_of(last(rr, GM))
    assert "run by a robot" in confirmation and "on file" in confirmation, confirmation
    told = mails(rr, ADDRESS["steve"])[before:]
    assert len(told) == 1 and "handed your seat (steve) in rr1 to a robot runner" in body_of(told[0])
    assert "handed seat steve to a robot runner" in body_of(last(rr, ADDRESS["kelly"])), "the others are told"
    filed = _filed(rr, 1)
    assert filed["steve"] == [("robot", _expected_robot_orders(rr, 1, "steve"))]
    for seat in ("kelly", "seb"):
        player_says(rr, seat, "USE 1", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is not None, "the two people left are all the turn waits for"
    assert len(mails(rr, ADDRESS["steve"])) == before + 1, "no results to the player who left"
    assert "steve (robot)" in body_of(last(rr, ADDRESS["kelly"]))
    gm_says(rr, "REPLACE rr1 steve ROBOT", game="rr1")
    assert "a robot already" in body_of(last(rr, GM))
    # And back to a person: the seat is a person's again, mailed again.
    gm_says(rr, "REPLACE rr1 steve stevie@example.org Stevie", game="rr1")
    assert "Turn 2" in str(last(rr, "stevie@example.org")["Subject"])
    with rr.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        assert [s.name for s in game.seats if s.robot] == ["robo", "tin"]


def test_replace_robot_takes_a_level_like_the_command_lines_robot_name_level(rr: TestApp) -> None:
    """ "a second, easier level for newcomers (`--robot NAME:easy`)"; the GM's
    REPLACE <game> <seat> ROBOT takes it too (ROBOT EASY, or ROBOT:easy as on the command
    line). The seat's robot then drives at that level: its orders on file are the easy
    level's. A level the game does not have is refused, naming the levels, and changes
    nothing."""
    gm_says(rr, "REPLACE rr1 steve ROBOT HARD", game="rr1")
    refusal = body_of(last(rr, GM))
    assert "NORMAL, EASY" in refusal and '"HARD"' in refusal, refusal
    with rr.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        assert not next(s for s in game.seats if s.name == "steve").robot
    gm_says(rr, "REPLACE rr1 steve ROBOT EASY", game="rr1")
    assert "run by a robot" in body_of(last(rr, GM))
    gm_says(rr, "REPLACE rr1 seb robot:easy", game="rr1")
    with rr.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        levels = {s.name: s.robot_level for s in game.seats if s.robot}
        assert levels == {"robo": "normal", "tin": "normal", "steve": "easy", "seb": "easy"}
        turn = open_turn(session, game)
        assert turn is not None
        state = RACECRAFT.load_state(turn.state)
        easy = RACECRAFT.format_orders(
            RACECRAFT.robot_orders(state, "steve", robot_rng(turn_seed(game.seed, 1), "steve"), RobotLevel.EASY)
        )
    assert _filed(rr, 1)["steve"] == [("robot", easy)]


def test_replace_robot_by_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`flagman gm replace GAME SEAT --robot` does what the mail command does."""
    from tests.helpers import init_site

    config = init_site(tmp_path / "site", "flagman@example.org")
    args = ["--config", str(config), "game", "new", "racecraft", "--name", "rc1", "--gm", "gm@example.org"]
    for name in ("kelly", "seb", "steve", "roger", "anna"):
        args += ["--player", f"{name}={name}@example.org"]
    assert cli_main(args) == 0
    assert cli_main(["--config", str(config), "gm", "replace", "rc1", "anna", "--robot", "--no-send"]) == 0
    assert "run by a robot" in capsys.readouterr().out
    assert cli_main(["--config", str(config), "gm", "replace", "rc1", "roger", "--robot", "easy", "--no-send"]) == 0
    assert "run by a robot" in capsys.readouterr().out
    assert cli_main(["--config", str(config), "game", "show", "rc1"]) == 0
    shown = capsys.readouterr().out
    assert "anna         (robot)" in shown and "roger        (robot, easy)" in shown, shown


def test_a_gms_set_makes_the_robot_drive_on_from_the_new_state(rr: TestApp) -> None:
    """A robot's orders come from what it can see when they are filed: after the GM's SET changes
    the open turn's state, each robot's orders are worked out again from it (after a CLEAR of the
    earlier ones), so what stands is always legal for the state the turn resolves."""
    gm_says(rr, "SET rr1 robo ep 1", game="rr1")
    filed = _filed(rr, 1)["robo"]
    assert [source for source, _ in filed] == ["robot", "clear", "robot"]
    assert filed[-1][1] == _expected_robot_orders(rr, 1, "robo")  # from the state as SET left it
    for seat in ("kelly", "seb", "steve"):
        player_says(rr, seat, "USE 1", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is not None
    with rr.db.read() as session:
        assert all(not r.differences for r in replay_game(session, "rr1"))


def test_a_gms_set_tells_the_gm_the_robots_orders_worked_out_again_and_they_are_used(rr: TestApp) -> None:
    """The robots' orders a PREVIEW or STATUS showed the GM no longer count after SET: the GM's
    answer says what each robot's orders are now (from the outlook, claimed), and the deadline
    uses exactly those (docs/DESIGN.md, "Robot drivers": orders from what the robot can see)."""
    gm_says(rr, "SET rr1 robo ep 1", game="rr1")
    answer = " ".join(body_of(last(rr, GM)).split())
    now = {seat: _expected_robot_orders(rr, 1, seat) for seat in ("robo", "tin")}
    assert (
        f"The robots' orders are worked out again from the new figures: robo {now['robo']}; tin {now['tin']}." in answer
    ), answer
    with rr.db.read() as session:
        row = session.scalars(select(Outbox).where(Outbox.recipient == GM).order_by(Outbox.id.desc())).first()
        assert row is not None
        said = {c["seat"]: (c["orders"], c["why"]) for claim in row.claimed for c in claim["counts"]}
    assert said == {"robo": (now["robo"], "own"), "tin": (now["tin"], "own")}, said
    for seat in ("kelly", "seb", "steve"):
        player_says(rr, seat, "USE 1", game="rr1")
    used = {seat: text for seat, pairs in _filed(rr, 1).items() for _, text in pairs[-1:]}
    assert turns(rr, "rr1")[0].resolved_at is not None
    assert used["robo"] == now["robo"] and used["tin"] == now["tin"]


def test_a_players_wait_holds_the_turn_no_more_once_a_robot_drives_the_seat(rr: TestApp) -> None:
    """WAIT holds the turn for the seat's player; a robot never waits: after REPLACE ... ROBOT the
    turn resolves as soon as every person's set is in."""
    player_says(rr, "kelly", "WAIT", game="rr1")
    gm_says(rr, "REPLACE rr1 kelly ROBOT", game="rr1")
    for seat in ("seb", "steve"):
        player_says(rr, seat, "USE 1", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is not None


def test_a_wait_keeps_the_turn_open_for_the_player_who_takes_the_seat(rr: TestApp) -> None:
    """Played by mail: anna sent "WAIT / USE 1", every other set was in, and the GM's REPLACE to a
    new player resolved the turn at once on anna's orders, while the new player's sheet said her
    orders were due by the deadline. Handed to a player, the WAIT stands: the turn waits for the
    new player's orders (or her NOWAIT, or the deadline)."""
    player_says(rr, "kelly", "WAIT\nUSE 1", game="rr1")
    for seat in ("seb", "steve"):
        player_says(rr, seat, "USE 1", game="rr1")
    gm_says(rr, "REPLACE rr1 kelly zoe@example.org Zoe", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is None
    sheet = mails(rr, "zoe@example.org")[-1]
    fake_inbox(rr).deliver(reply_to(sheet, "USE 2\nNOWAIT", sender="zoe@example.org", quote=False))
    cycle(rr)
    assert turns(rr, "rr1")[0].resolved_at is not None


_names = itertools.count(1)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["racecraft", "speed_circuit", "speedphreakz"]),
    seed=st.integers(0, 2**40),
    people=st.integers(1, 3),
    robot_count=st.integers(1, 4),
)
def test_robots_orders_are_complete_and_early_resolution_waits_for_the_people(
    gapp: TestApp, kind: str, seed: int, people: int, robot_count: int
) -> None:
    """Property ("a robot's orders are on file as soon as a turn opens, so early
    resolution waits only for the people"): in any game, for any field, at every turn opened the
    robots' filed orders are complete for the state the turn opened with; the turn is not all in
    while a person has sent nothing, and is once every person has."""
    from bot.games.deadline import resolve_now
    from bot.games.turns import PlayerSpec
    from bot.outlook import of_turn

    rules = find_game(kind)
    total = people + robot_count
    if not rules.min_players <= total <= rules.max_players:
        return
    name = f"prop{next(_names)}"
    specs = [PlayerSpec(f"p{i}", f"p{i}-{name}@example.org", f"P{i}") for i in range(people)]
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind=kind,
            name=name,
            players=specs,
            gm_address=GM,
            seed=seed,
            robot_seats=[f"r{i}" for i in range(robot_count)],
        )
    for _ in range(3):
        with gapp.db.transaction() as session:
            game = find_game_row(session, name, with_seats=True)
            assert game is not None
            turn = open_turn(session, game)
            if turn is None:
                return  # the race is over
            state = rules.load_state(turn.state)
            expected = set(rules.expected_players(state))
            subs = turn_submissions(session, turn)
            for seat in game.seats:
                if seat.robot and seat.name in expected:
                    (filed,) = [s for s in subs.get(seat.id, []) if s.source == "robot"]
                    assert rules.parse_orders(state, seat.name, filed.text).complete
            waiting = [s for s in game.seats if not s.robot and s.name in expected]
            if waiting:
                assert not of_turn(game, rules, state, turn_submissions(session, turn)).all_in
            for seat in waiting:
                session.add(
                    OrderSubmission(
                        turn_id=turn.id,
                        seat_id=seat.id,
                        source="mail",
                        received_at=gapp.shell.now(),
                        text=rules.format_orders(rules.default_orders(state, seat.name)),
                    )
                )
            session.flush()
            assert of_turn(game, rules, state, turn_submissions(session, turn)).all_in
            resolve_now(gapp.shell, session, game, turn)


def test_a_turn_only_robots_order_in_waits_for_its_deadline(rr: TestApp) -> None:
    """ "early resolution waits only for the people": with no person left in the race, a turn is
    not resolved early (one tick after another, mailing results each time) but at its deadline or
    by the GM's PROCESS (docs/DESIGN.md, "Robot drivers")."""
    for seat in ("kelly", "seb", "steve"):
        gm_says(rr, f"DROP rr1 {seat}", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is None, "every order is in, but only robots order"
    gm_says(rr, "PROCESS rr1", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is not None and len(turns(rr, "rr1")) == 2


def test_a_rollback_past_a_replace_robot_files_the_robots_orders(rr: TestApp) -> None:
    """ "a robot's orders are on file as soon as a turn opens, so early resolution waits only for
    the people", a turn reopened by ROLLBACK included: steve was defaulted in turn 1,
    handed to a robot in turn 2, then turn 1 rolled back. Its default is discarded (docs/DESIGN.md,
    "ROLLBACK"), so the robot's orders for turn 1 are filed at the ROLLBACK, and the turn is not
    left waiting for a robot to be defaulted again at its deadline."""
    from tests.bot.gm_helpers import cycle

    for seat in ("kelly", "seb"):
        player_says(rr, seat, "USE 2", game="rr1")
    rr.clock.advance(hours=49)
    cycle(rr)
    assert len(turns(rr, "rr1")) == 2
    assert any(source == "default" for source, _ in _filed(rr, 1)["steve"])
    gm_says(rr, "REPLACE rr1 steve ROBOT", game="rr1")
    gm_says(rr, "ROLLBACK rr1", game="rr1")
    assert len(turns(rr, "rr1")) == 1 and turns(rr, "rr1")[0].resolved_at is None
    assert _filed(rr, 1)["steve"][-1] == ("robot", _expected_robot_orders(rr, 1, "steve"))
    assert _filed(rr, 1)["robo"] == [("robot", _expected_robot_orders(rr, 1, "robo"))], "robo's stand, once"
    gm_says(rr, "PROCESS rr1", game="rr1")
    assert turns(rr, "rr1")[0].resolved_at is not None
    assert not any(source == "default" for source, _ in _filed(rr, 1)["steve"])


def test_replace_robot_refuses_a_seat_out_of_the_race(rr: TestApp) -> None:
    """ "Every statement in a mail must be true" (the brief's house rules): REPLACE ... ROBOT
    tells everyone a robot "drives it on"; for a seat still held but out of the race (here the
    rules' drop with the seat kept, as after a crash) that would be false, so it is refused and
    nobody is mailed."""
    from bot.games.seats import drop_seat
    from bot.models import ChangeWhy

    with rr.db.transaction() as session:
        game = find_game_row(session, "rr1")
        assert game is not None
        steve = next(s for s in game.seats if s.name == "steve")
        drop_seat(session, game, steve, ChangeWhy.DROPPED, rr.shell.now())
        steve.active = True  # still seated, out of the race
    before = len(mails(rr, ADDRESS["steve"])), len(mails(rr, ADDRESS["kelly"]))
    gm_says(rr, "REPLACE rr1 steve ROBOT", game="rr1")
    assert "out of the race" in body_of(last(rr, GM))
    assert (len(mails(rr, ADDRESS["steve"])), len(mails(rr, ADDRESS["kelly"]))) == before
    with rr.db.read() as session:
        game = find_game_row(session, "rr1")
        assert game is not None and not next(s for s in game.seats if s.name == "steve").robot


def test_a_gms_set_on_a_robot_does_not_say_the_robot_was_told(rr: TestApp) -> None:
    """A robot seat gets no mail (bot.store.mailed_seats): the GM's answer to SET on a robot says
    nothing about telling it, and nobody is mailed for it; SET on a person still says they were
    told, and they get the mail (docs/DESIGN.md, "Robot drivers"). Played by mail: "SET sv
    robbie wear 4" answered "robbie was told"."""
    before = len(mails(rr))
    gm_says(rr, "SET rr1 robo ep 1", game="rr1")
    answer = " ".join(body_of(last(rr, GM)).split())
    assert "robo: ep set to 1." in answer and "was told" not in answer, answer
    assert [str(m["To"]) for m in mails(rr)[before:] if GM not in str(m["To"])] == []
    gm_says(rr, "SET rr1 kelly ep 3", game="rr1")
    assert "kelly was told." in " ".join(body_of(last(rr, GM)).split())
    # PLOT and PLOT CLEAR on a robot seat: no "was told" either; on a person, as before.
    for command in ("PLOT rr1 robo USE 1", "PLOT rr1 robo CLEAR"):
        gm_says(rr, command, game="rr1")
        answer = " ".join(body_of(last(rr, GM)).split())
        assert "GM plot" in answer and "was told" not in answer, answer
    for command in ("PLOT rr1 kelly USE 1", "PLOT rr1 kelly CLEAR"):
        gm_says(rr, command, game="rr1")
        assert "kelly was told." in " ".join(body_of(last(rr, GM)).split())
