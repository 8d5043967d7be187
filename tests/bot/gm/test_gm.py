"""The GM's override commands by mail (mail-interface.md, "GM commands"): each one, its
confirmation, its audit row, its announcement, and its refusals."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select

from bot.clock import as_utc
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.auth import signed_address
from bot.models import GameStatus, OrderSubmission, Outbox, Seat, Turn
from bot.ops.backup import replay_game
from bot.store import find_game_row, open_turn, seat_named
from bot.testing import TestApp, words_of
from rules import fair, find_game
from tests.bot import gm_helpers
from tests.bot.gm_helpers import (
    ADDRESS,
    BOT,
    GM,
    audit,
    body_of,
    cycle,
    game_row,
    gm_says,
    last,
    mails,
    player_says,
    turns,
)
from tests.helpers import fake_inbox, moving_clock

RACECRAFT = find_game("racecraft")
gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def deadline_of(app: TestApp) -> datetime:
    turn = turns(app)[-1]
    assert turn.deadline is not None
    return as_utc(turn.deadline)


def submissions(app: TestApp, turn_number: int) -> list[tuple[str, str, str]]:
    with app.db.read() as session:
        rows = session.execute(
            select(Seat.name, OrderSubmission.source, OrderSubmission.text)
            .join(Seat, Seat.id == OrderSubmission.seat_id)
            .join(Turn, Turn.id == OrderSubmission.turn_id)
            .where(Turn.number == turn_number)
            .order_by(OrderSubmission.id)
        ).all()
    return [(name, source, text) for name, source, text in rows]


# -- deadlines ---------------------------------------------------------------------------------


def test_extend_moves_the_deadline_and_tells_every_player_in_their_zone(rc: TestApp) -> None:
    """EXTEND <game> <duration>: the deadline moves, the players are told (each in their own zone),
    the GM gets a confirmation, and the audit row names the mail it came from."""
    before = deadline_of(rc)
    mid = gm_says(rc, "EXTEND rc1 24h")
    assert deadline_of(rc) == before + timedelta(hours=24)
    kelly = body_of(last(rc, ADDRESS["kelly"]))
    steve = body_of(last(rc, ADDRESS["steve"]))
    assert "extended" in kelly and "Thu 8 Jan 2026 09:00 GMT" in kelly
    assert "Thu 8 Jan 2026 04:00 EST" in steve
    confirmation = last(rc, GM)
    assert "GM: EXTEND done" in str(confirmation["Subject"])
    row = audit(rc)[-1]
    assert (row.actor, row.via, row.message_id, row.command) == (GM, "mail", mid.strip("<>"), "EXTEND rc1 24h")
    assert row.outcome.startswith("done")


def test_deadline_sets_a_time_in_the_games_zone_and_refuses_the_past(rc: TestApp) -> None:
    """DEADLINE <game> <when>: game time; a time in the past is refused and changes nothing."""
    gm_says(rc, "DEADLINE rc1 2026-06-10 18:00")
    moment = deadline_of(rc)
    assert moment.isoformat() == "2026-06-10T17:00:00+00:00"  # BST
    assert "Wed 10 Jun 2026 18:00 BST" in body_of(last(rc, ADDRESS["kelly"]))
    gm_says(rc, "DEADLINE rc1 2025-01-01 12:00")
    assert deadline_of(rc) == moment
    assert "[ERROR]" in str(last(rc, GM)["Subject"]) and "in the past" in body_of(last(rc, GM))
    assert audit(rc)[-1].outcome.startswith("refused")


def test_deadline_plus_duration_counts_from_now(rc: TestApp) -> None:
    """DEADLINE <game> +<duration>: that long from now."""
    gm_says(rc, "DEADLINE rc1 +6h")
    assert deadline_of(rc) == rc.clock.now() + timedelta(hours=6)


# -- orders and plots --------------------------------------------------------------------------


def test_order_enters_orders_for_a_player_and_they_count(rc: TestApp) -> None:
    """ORDER <game> <seat> <orders>: stored as the GM's, in canonical form, used at resolution."""
    gm_says(rc, "ORDER rc1 seb use 3")
    assert ("seb", "gm", "USE 3") in submissions(rc, 1)
    gm_says(rc, "PROCESS rc1")
    defaults = [s for s in submissions(rc, 1) if s[1] in ("default", "plot")]
    assert "seb" not in {s[0] for s in defaults}
    assert {s[0] for s in defaults} == {"kelly", "steve", "roger", "anna"}


def test_order_refuses_bad_orders_and_unknown_seats_with_the_reason(rc: TestApp) -> None:
    """A refused ORDER says why (the parser's own reason, the seat's choices) and stores nothing."""
    gm_says(rc, "ORDER rc1 seb USE 11")
    body = body_of(last(rc, GM))
    assert "[ERROR]" in str(last(rc, GM)["Subject"])
    assert '"USE 11"' in body and "What seb can order now" in body
    gm_says(rc, "ORDER rc1 nobody USE 1")
    assert "no seat 'nobody'" in body_of(last(rc, GM))
    assert submissions(rc, 1) == []


def test_plot_is_stored_canonical_and_is_the_seats_nmr_default(rc: TestApp) -> None:
    """PLOT <game> <seat> <orders>: the GM plot, validated and canonical, is the NMR default."""
    gm_says(rc, "PLOT rc1 kelly use 2")
    with rc.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        kelly = seat_named(game, "kelly")
        assert kelly is not None and kelly.gm_plot == "USE 2"
    moving_clock(rc).advance(hours=49)
    cycle(rc)
    assert ("kelly", "plot", "USE 2") in submissions(rc, 1)
    assert ("seb", "default", "USE 5") in submissions(rc, 1)


def test_plot_refuses_illegal_orders(rc: TestApp) -> None:
    """A plot the game's parser refuses is not stored."""
    gm_says(rc, "PLOT rc1 kelly FLY AWAY")
    assert "[ERROR]" in str(last(rc, GM)["Subject"])
    assert game_row(rc).seats[0].gm_plot is None


def test_a_plot_not_allowed_this_turn_is_kept_for_the_turns_that_allow_it(rc: TestApp) -> None:
    """Played by mail (playfix M4): "PLOT rc1 seb CRUISE" on turn 1 (the start takes only USE n)
    was refused, though a plot stands "while it is legal". It is kept; the GM and seb are told
    it is not allowed in turn 1 and what stands until then; it is used from turn 2."""
    gm_says(rc, "PLOT rc1 seb CRUISE")
    answer = words_of(last(rc, GM))
    assert "[ERROR]" not in str(last(rc, GM)["Subject"]), answer
    assert "It is not allowed in Turn 1 of 5: start" in answer and "> USE 5" in answer, answer
    told = words_of(last(rc, ADDRESS["seb"]))
    assert "in the turns that allow it" in told and "It is not allowed in Turn 1 of 5: start" in told, told
    moving_clock(rc).advance(hours=49)
    cycle(rc)
    assert ("seb", "default", "USE 5") in submissions(rc, 1)
    moving_clock(rc).advance(hours=49)
    cycle(rc)
    assert ("seb", "plot", "CRUISE") in submissions(rc, 2)


def test_multi_line_orders_are_separated_by_semicolons(rc: TestApp) -> None:
    """GM_COMMANDS: ';' separates the lines of the orders in a one-line ORDER."""
    gm_says(rc, "ORDER rc1 seb USE 3; USE 4")
    # Racecraft takes one order a turn: two lines are refused by its parser, whole.
    assert "[ERROR]" in str(last(rc, GM)["Subject"])


# -- resolving ---------------------------------------------------------------------------------


def test_process_resolves_now_with_defaults_for_the_missing(rc: TestApp) -> None:
    """PROCESS <game>: resolve the open turn now; everyone gets results; the GM a summary."""
    player_says(rc, "seb", "USE 2")
    gm_says(rc, "PROCESS rc1")
    rows = turns(rc)
    assert rows[0].resolved_at is not None and rows[1].number == 2
    assert "Results of Turn 1" in str(last(rc, ADDRESS["kelly"])["Subject"])
    body = body_of(mails(rc, GM)[-2]) + body_of(last(rc, GM))
    assert "defaulted: anna, kelly, roger, steve" in body


def test_a_seat_given_the_gms_plot_is_named_as_such_not_as_defaulted(rc: TestApp) -> None:
    """docs/design/mail-interface.md: "PLOT <game> <seat> <orders> (the GM plot: that seat's NMR
    default)". PROCESS and PREVIEW listed a seat given the GM's plot as
    "defaulted"; they name it under "the GM's plot", apart from the seats given the default."""
    gm_says(rc, "PLOT rc1 seb USE 3")
    gm_says(rc, "PREVIEW rc1")
    preview = words_of(last(rc, GM))
    assert "Defaulted: anna, kelly, roger, steve. The GM's plot: seb." in preview, preview
    gm_says(rc, "PROCESS rc1")
    body = " ".join((body_of(mails(rc, GM)[-2]) + body_of(last(rc, GM))).split())
    assert "resolved; defaulted: anna, kelly, roger, steve; the GM's plot: seb." in body, body


def test_the_results_name_a_seat_given_the_gms_plot_apart_from_the_defaulted(rc: TestApp) -> None:
    """mail-interface.md: "PLOT <game> <seat> <orders> (the GM plot: that seat's NMR default)".
    The results listed seb, whose orders the GM's plot filled in, under "Defaulted (no orders
    received)"; they say "The GM's plot (no orders received): seb", apart from the defaulted."""
    gm_says(rc, "PLOT rc1 seb USE 3")
    gm_says(rc, "PROCESS rc1")
    results = [m for m in mails(rc, ADDRESS["kelly"]) if "Results of" in str(m["Subject"])]
    body = words_of(results[-1])
    assert "Defaulted (no orders received): anna, kelly, roger, steve." in body, body
    assert "The GM's plot (no orders received): seb." in body, body
    seb = words_of([m for m in mails(rc, ADDRESS["seb"]) if "Results of" in str(m["Subject"])][-1])
    assert "you were given the GM's plot" in seb and "Defaulted (no orders received): anna, kelly, roger, steve." in seb


def test_preview_mails_the_gm_only_and_stores_nothing(rc: TestApp) -> None:
    """PREVIEW <game>: resolved on a copy; results to the GM only; no turn, order or state stored."""
    player_says(rc, "seb", "USE 7")

    def snapshot() -> tuple[object, ...]:
        with rc.db.read() as session:
            turn_rows = [
                (t.number, t.state, t.state_after, t.events, t.resolved_at, t.deadline)
                for t in session.scalars(select(Turn).order_by(Turn.id))
            ]
            subs = list(session.execute(select(OrderSubmission.id, OrderSubmission.text)).all())
            seats = list(session.execute(select(Seat.name, Seat.nmr_streak, Seat.gm_plot)).all())
            player_mail = session.scalar(select(func.count()).select_from(Outbox).where(Outbox.recipient != GM))
        return turn_rows, subs, seats, player_mail

    before = snapshot()
    gm_says(rc, "PREVIEW rc1")
    assert snapshot() == before
    preview = last(rc, GM)
    assert "preview" in str(preview["Subject"]).lower()
    body = body_of(preview)
    assert "seb" in body and "> USE 7" in body and "Nothing was stored" in body
    assert "(default)" in body  # the others would get the NMR default


# -- pause and resume --------------------------------------------------------------------------


def test_pause_stops_the_deadline_and_resume_restarts_the_clock_from_now(rc: TestApp) -> None:
    """PAUSE: no resolution while paused, however late; RESUME: a full turn from now."""
    gm_says(rc, "PAUSE rc1")
    assert game_row(rc).status == GameStatus.PAUSED
    assert "paused" in body_of(last(rc, ADDRESS["anna"]))
    moving_clock(rc).advance(days=5)
    cycle(rc)
    assert turns(rc)[0].resolved_at is None
    gm_says(rc, "RESUME rc1")
    assert game_row(rc).status == GameStatus.ACTIVE
    assert deadline_of(rc) == rc.clock.now() + timedelta(hours=48)
    gm_says(rc, "RESUME rc1")
    assert "not paused" in body_of(last(rc, GM))


def test_a_deadline_the_gm_sets_while_paused_is_the_one_resume_keeps(rc: TestApp) -> None:
    """Played by mail (playfix G1): "DEADLINE rc1 +2h" then "RESUME rc1" in one mail of a paused
    game: the GM was told the deadline is now 11:00, the players "a new deadline", and RESUME
    then set the turn due two days later. A deadline the GM set (DEADLINE, EXTEND) since the
    game was paused is the GM's choice for the resumed turn: RESUME keeps it."""
    gm_says(rc, "PAUSE rc1")
    moving_clock(rc).advance(hours=1)
    gm_says(rc, "DEADLINE rc1 +2h\nRESUME rc1")
    assert game_row(rc).status == GameStatus.ACTIVE
    assert deadline_of(rc) == rc.clock.now() + timedelta(hours=2)
    answer = words_of(last(rc, GM))
    assert answer.count("Mon 5 Jan 2026 12:00 GMT") == 2, answer  # DEADLINE's answer and RESUME's agree
    told = words_of(last(rc, ADDRESS["anna"]))
    assert "is now due Mon 5 Jan 2026 12:00 UTC" in told, told
    # Without such a choice the clock restarts from now, as before.
    gm_says(rc, "PAUSE rc1")
    gm_says(rc, "RESUME rc1")
    assert deadline_of(rc) == rc.clock.now() + timedelta(hours=48)


def test_an_extend_while_paused_tells_the_players_when_the_turn_is_due_once_resumed(rc: TestApp) -> None:
    """EXTEND of a paused game: RESUME keeps a deadline the GM set since the pause (above), so the
    players are told it. They were told "The GM has extended the deadline of Turn 1 of 5: start
    by 12h." and "no deadline runs" -- extended to when, they could not tell."""
    gm_says(rc, "PAUSE rc1")
    gm_says(rc, "EXTEND rc1 12h")
    told = words_of(last(rc, ADDRESS["anna"]))
    assert "no deadline runs until the GM resumes the game" in told, told
    assert "When the GM resumes the game, Turn 1 of 5: start is due Wed 7 Jan 2026 21:00 UTC" in told, told
    gm_says(rc, "RESUME rc1")
    assert "is now due Wed 7 Jan 2026 21:00 UTC" in words_of(last(rc, ADDRESS["anna"]))
    # A PAUSE alone names no deadline for later: RESUME restarts the clock from then.
    gm_says(rc, "PAUSE rc1")
    assert "When the GM resumes" not in body_of(last(rc, ADDRESS["anna"]))


def test_an_extend_is_told_in_words_not_in_the_gms_shorthand(rc: TestApp) -> None:
    """mail-interface.md, "EXTEND <game> <duration>" (24h, 2d, 1d12h): the players are told the
    time in words, exactly. Played by mail (playtest5 G4): "extended ... by 2d"."""
    gm_says(rc, "EXTEND rc1 2d")
    told = words_of(last(rc, ADDRESS["anna"]))
    assert "The GM has extended the deadline of Turn 1 of 5: start by 2 days." in told, told
    gm_says(rc, "EXTEND rc1 1d12h")
    assert "start by 1 day 12 hours." in words_of(last(rc, ADDRESS["anna"]))
    gm_says(rc, "EXTEND rc1 90m")
    assert "start by 1 hour 30 minutes." in words_of(last(rc, ADDRESS["anna"]))


# -- figures -----------------------------------------------------------------------------------


def test_set_adjusts_a_figure_of_the_open_turn(rc: TestApp) -> None:
    """SET <game> <seat> <figure> <value>: rules.set_figure on the open turn's state."""
    gm_says(rc, "SET rc1 seb ep 6")
    state = RACECRAFT.load_state(turns(rc)[0].state)
    assert RACECRAFT.figures(state, "seb") == {"ep": 6}
    assert "ep 6" in body_of(last(rc, GM))


def test_set_refuses_an_unknown_figure_or_a_bad_value(rc: TestApp) -> None:
    """FigureError becomes a refusal with the game's own reason; the state is untouched."""
    before = turns(rc)[0].state
    gm_says(rc, "SET rc1 seb wear 3")
    assert "unknown figure" in body_of(last(rc, GM))
    gm_says(rc, "SET rc1 seb ep 99")
    assert "0 to 10" in body_of(last(rc, GM))
    assert turns(rc)[0].state == before
    assert [a.outcome.split(":")[0] for a in audit(rc)] == ["refused", "refused"]


def test_set_warns_when_orders_on_file_became_illegal(rc: TestApp) -> None:
    """Lowering a figure below what a player ordered is allowed, with a warning to the GM."""
    player_says(rc, "seb", "USE 8")
    gm_says(rc, "SET rc1 seb ep 5")
    assert "no longer legal" in words_of(last(rc, GM))


# -- seats -------------------------------------------------------------------------------------


def test_replace_hands_the_seat_to_a_new_player_with_a_fresh_turn_sheet(rc: TestApp) -> None:
    """REPLACE <game> <seat> <address> [name]: the seat keeps its history, the new player gets a
    turn sheet and a new seat password; the old player is told."""
    player_says(rc, "anna", "USE 4")
    old_secret = game_row(rc).seats[-1].secret
    gm_says(rc, "REPLACE rc1 anna kim@example.org Kim")
    seat = [s for s in game_row(rc).seats if s.name == "anna"][0]
    assert seat.player.address == "kim@example.org" and seat.player.name == "Kim"
    assert seat.secret != old_secret
    sheet = last(rc, "kim@example.org")
    assert "Turn 1 of 5" in str(sheet["Subject"])
    # A new reply address: the MAC covers the seat's renewed reply salt, so the old one stops working.
    assert sheet["Reply-To"].addresses[0].addr_spec == signed_address(
        BOT, "test-site-secret", "rc1", "anna", seat.reply_salt
    )
    assert seat.reply_salt and sheet["Reply-To"].addresses[0].addr_spec != signed_address(
        BOT, "test-site-secret", "rc1", "anna"
    )
    assert "> USE 4" in body_of(sheet)  # the seat's orders on file stay
    assert "handed your seat" in body_of(last(rc, ADDRESS["anna"]))
    # The new player orders for the seat with the password they were given.
    from bot.testing import plain_mail

    fake_inbox(rc).deliver(plain_mail("kim@example.org", BOT, "[rc1]", f"PASSWORD {seat.secret}\nUSE 6"))
    cycle(rc)
    assert ("anna", "mail", "USE 6") in submissions(rc, 1)


def test_replace_refuses_a_bad_address_or_one_already_seated(rc: TestApp) -> None:
    """A REPLACE to a non-address, or to someone already in the game, is refused."""
    gm_says(rc, "REPLACE rc1 anna nobody")
    assert "not a plain mail address" in body_of(last(rc, GM))
    gm_says(rc, f"REPLACE rc1 anna {ADDRESS['seb']}")
    assert "already has a seat" in body_of(last(rc, GM))


def test_drop_takes_the_player_out_of_the_race(rc: TestApp) -> None:
    """DROP <game> <seat>: rules.drop_player on the open turn; the seat is closed; the turn
    resolves without them."""
    gm_says(rc, "DROP rc1 steve")
    state = RACECRAFT.load_state(turns(rc)[0].state)
    assert "steve" not in RACECRAFT.players(state)
    assert not [s for s in game_row(rc).seats if s.name == "steve"][0].active
    assert "removed you" in body_of(last(rc, ADDRESS["steve"]))
    for seat in ("kelly", "seb", "roger", "anna"):
        player_says(rc, seat, "USE 3")
    rows = turns(rc)
    assert rows[0].resolved_at is not None, "early resolution once the four remaining are in"
    assert "steve" not in RACECRAFT.players(RACECRAFT.load_state(rows[1].state))


def test_replace_of_a_seat_out_of_the_race_says_why_it_cannot_be_handed_over(rc: TestApp) -> None:
    """Played by mail (playtest M6): "REPLACE rc1 seb ROBOT" after seb's RESIGN was refused
    "seat seb of rc1 is out of the game", no reason a GM understands. DROP and RESIGN take the
    car out of the race (rules.drop_player): there is no car left to hand over; REPLACE hands
    over a seat before its player leaves."""
    player_says(rc, "seb", "RESIGN rc1")
    gm_says(rc, "REPLACE rc1 seb ROBOT")
    answer = words_of(last(rc, GM))
    assert "Refused, nothing was changed" in answer, answer
    assert "seb's car left the race with the seat" in answer, answer
    assert "REPLACE hands over a seat still in the race" in answer, answer


# -- rollback ------------------------------------------------------------------------------------


def test_rollback_restores_the_turn_and_re_resolving_gives_the_same_result(rc: TestApp) -> None:
    """ROLLBACK: the next turn and the defaults go, the resolved turn reopens with its orders;
    resolving it again with the same seed gives exactly the same state and events."""
    player_says(rc, "seb", "USE 2")
    player_says(rc, "kelly", "USE 4")
    gm_says(rc, "PROCESS rc1")
    first = turns(rc)
    after, events, seed = first[0].state_after, first[0].events, first[0].seed
    player_says(rc, "roger", "CRUISE")  # an order for turn 2, discarded by the rollback
    streaks = {s.name: s.nmr_streak for s in game_row(rc).seats}
    assert streaks["anna"] == 1 and streaks["seb"] == 0
    gm_says(rc, "ROLLBACK rc1")
    rows = turns(rc)
    assert [t.number for t in rows] == [1]
    assert rows[0].resolved_at is None and rows[0].state_after is None and rows[0].events is None
    assert rows[0].seed == seed
    assert submissions(rc, 1) == [("seb", "mail", "USE 2"), ("kelly", "mail", "USE 4")]
    assert {s.name: s.nmr_streak for s in game_row(rc).seats}["anna"] == 0
    undo = audit(rc)[-1].undo
    assert undo is not None
    discarded = undo["undone"][0]
    assert discarded["next_turn"]["number"] == 2
    assert discarded["next_turn"]["submissions"][0]["text"] == "CRUISE"
    assert {d["seat"] for d in discarded["defaults"]} == {"anna", "roger", "steve"}
    assert "reopened" in str(last(rc, ADDRESS["anna"])["Subject"])
    assert rows[0].deadline is not None and as_utc(rows[0].deadline) > rc.clock.now()
    gm_says(rc, "PROCESS rc1")
    again = turns(rc)
    assert again[0].state_after == after and again[0].events == events


def test_rollback_at_the_end_goes_back_past_the_sprint_and_reopens_the_game(rc: TestApp) -> None:
    """The final sprint needs no orders; rolling back the end reopens the last tactical turn,
    paused (the GM sets it right, then RESUMEs or PROCESSes)."""
    for _ in range(10):
        with rc.db.read() as session:
            game = find_game_row(session, "rc1")
            assert game is not None
            if game.status == GameStatus.FINISHED:
                break
        gm_says(rc, "PROCESS rc1")
    assert game_row(rc).status == GameStatus.FINISHED
    last_numbers = [t.number for t in turns(rc)]
    gm_says(rc, "ROLLBACK rc1")
    assert game_row(rc).status == GameStatus.PAUSED
    rows = turns(rc)
    assert len(rows) == len(last_numbers) - 1
    assert rows[-1].resolved_at is None
    assert RACECRAFT.expected_players(RACECRAFT.load_state(rows[-1].state))


def test_rollback_with_nothing_resolved_is_refused(rc: TestApp) -> None:
    gm_says(rc, "ROLLBACK rc1")
    assert "no resolved turn" in body_of(last(rc, GM))


# -- who may command ------------------------------------------------------------------------------


def test_a_player_cannot_give_gm_commands(rc: TestApp) -> None:
    """A GM command from a player is not a GM command: it is read as orders and refused."""
    before = deadline_of(rc)
    player_says(rc, "seb", "EXTEND rc1 24h")
    assert deadline_of(rc) == before
    assert audit(rc) == []
    assert "[ERROR]" in str(last(rc, ADDRESS["seb"])["Subject"])


def test_the_gm_of_one_game_cannot_command_another(rc: TestApp) -> None:
    """A GM of rc1 naming rc2 (another GM's game), or a game that does not exist: nothing
    happens, and the GM is told the lines were not understood."""
    others = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(5))
    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=others,
            gm_address="other@example.org",
            deadline="48h",
            seed=3,
        )
    rc.service.send()
    before = deadline_of(rc)
    gm_says(rc, "EXTEND rc2 24h\nPAUSE nosuch")
    assert game_row(rc, "rc2").status == GameStatus.ACTIVE
    assert audit(rc, "rc2") == [] and audit(rc) == []
    answer = body_of(last(rc, GM))
    assert "EXTEND rc2 24h" in answer and "PAUSE nosuch" in answer
    assert deadline_of(rc) == before


def test_a_mail_from_the_gm_address_without_proof_is_refused(rc: TestApp) -> None:
    """The GM authenticates like a player: From alone is not enough."""
    gm_says(rc, "PAUSE rc1", signed=False)
    assert game_row(rc).status == GameStatus.ACTIVE
    assert audit(rc) == []


def test_the_gm_password_authenticates_a_mail_to_the_plain_address(rc: TestApp) -> None:
    """A PASSWORD line with the GM secret works like the signed address."""
    secret = game_row(rc).gm_secret
    gm_says(rc, f"PASSWORD {secret}\nPAUSE rc1", signed=False)
    assert game_row(rc).status == GameStatus.PAUSED


def test_missing_arguments_get_the_syntax_and_an_example(rc: TestApp) -> None:
    """Bad arguments: the reply gives the command's syntax and an example (GM_COMMANDS)."""
    gm_says(rc, "EXTEND rc1")
    body = body_of(last(rc, GM))
    assert "EXTEND <game> <duration>" in body and "EXTEND rc1 24h" in body
    gm_says(rc, "EXTEND rc1 soon")
    assert "not a duration" in body_of(last(rc, GM))
    assert audit(rc)[-1].outcome.startswith("refused")


def test_commands_on_a_finished_game_are_refused(rc: TestApp) -> None:
    for _ in range(10):
        if game_row(rc).status == GameStatus.FINISHED:
            break
        gm_says(rc, "PROCESS rc1")
    gm_says(rc, "EXTEND rc1 24h")
    assert game_row(rc).status == GameStatus.FINISHED
    assert "rc1 is over" in body_of(last(rc, GM))
    assert audit(rc)[-1].outcome == "refused: rc1 is over"


def test_each_command_of_a_mail_is_confirmed_and_audited(rc: TestApp) -> None:
    """Several commands in one mail: each is carried out and audited on its own, and confirmed
    in the one answer to the mail (mail-interface.md: one answer per mail, in sections)."""
    before = len(mails(rc, GM))
    mid = gm_says(rc, "PLOT rc1 kelly USE 1\nORDER rc1 seb USE 3\nSET rc1 seb ep 9\nSET rc1 seb ep 99")
    rows = audit(rc)
    assert [r.command for r in rows] == [
        "PLOT rc1 kelly USE 1",
        "ORDER rc1 seb USE 3",
        "SET rc1 seb ep 9",
        "SET rc1 seb ep 99",
    ]
    assert {r.message_id for r in rows} == {mid.strip("<>")}
    assert len(mails(rc, GM)) == before + 1, "one answer to the mail"
    answer = last(rc, GM)
    assert str(answer["Subject"]) == "[rc1] Answers to your mail", "[ERROR] only when nothing was done"
    assert str(answer["In-Reply-To"]) == mid
    body = body_of(answer)
    done, _, not_done = body.partition("== Not done ==")
    headings = [line for line in done.splitlines() if line.startswith("--- ")]
    assert headings == ["--- GM: PLOT done ---", "--- GM: ORDER done ---", "--- GM: SET done ---"]
    assert "--- GM: SET refused ---" in not_done and "SET rc1 seb ep 99" in not_done
    assert body.count("Recorded in the audit log") == 4
    assert body.replace("\r\n", "\n").count("\n-- \n") == 1, "signed once"


def test_a_mail_of_which_nothing_was_done_is_the_only_error(rc: TestApp) -> None:
    """mail-interface.md, one answer in sections: "[ERROR]" heads the subject of a mail of which
    nothing was done; a mail with one command done among refused ones is not an error."""
    gm_says(rc, "SET rc1 seb ep 99\nDROP rc1 zed")
    assert str(last(rc, GM)["Subject"]) == "[ERROR] [rc1] Answers to your mail"
    gm_says(rc, "SET rc1 seb ep 9\nDROP rc1 zed")
    assert str(last(rc, GM)["Subject"]) == "[rc1] Answers to your mail"


def test_open_turn_is_untouched_by_a_refused_command(rc: TestApp) -> None:
    with rc.db.read() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        turn = open_turn(session, game)
        assert turn is not None
        state = turn.state
    gm_says(rc, "DROP rc1 zed")
    assert turns(rc)[0].state == state


def test_a_line_for_another_game_next_to_a_valid_command_is_reported_not_dropped(rc: TestApp) -> None:
    """product.md: nothing is silently dropped. The valid command is done; the other line comes back."""
    others = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(5))
    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=others,
            gm_address="other@example.org",
            deadline="48h",
            seed=3,
        )
    rc.service.send()
    gm_says(rc, "EXTEND rc1 24h\nPAUSE rc2")
    assert [a.command for a in audit(rc)] == ["EXTEND rc1 24h"]
    assert game_row(rc, "rc2").status == GameStatus.ACTIVE
    answer = last(rc, GM)  # one answer: the EXTEND done, the other line not
    assert str(answer["Subject"]) == "[rc1] Answers to your mail", "[ERROR] only when nothing was done"
    done, _, not_done = body_of(answer).partition("== Not done ==")
    assert "--- GM: EXTEND done ---" in done
    assert "--- Lines not understood ---" in not_done
    assert "> PAUSE rc2" in not_done and "(rc1)" in not_done


def test_a_seat_dropped_after_the_resolution_is_named_by_rollback_and_can_be_dropped_again(rc: TestApp) -> None:
    """ROLLBACK restores the turn exactly, so a player dropped after it is back in its state; the
    GM is told and may DROP them again."""
    gm_says(rc, "PROCESS rc1")
    gm_says(rc, "DROP rc1 steve")
    gm_says(rc, "ROLLBACK rc1")
    assert "Closed seats still in the race at this turn: steve" in words_of(last(rc, GM))
    assert "steve" in RACECRAFT.players(RACECRAFT.load_state(turns(rc)[0].state))
    gm_says(rc, "DROP rc1 steve")
    assert "steve" not in RACECRAFT.players(RACECRAFT.load_state(turns(rc)[0].state))
    gm_says(rc, "DROP rc1 steve")
    assert "out of rc1 already" in body_of(last(rc, GM))


def speedphreakz_game(app: TestApp) -> None:
    """SpeedPhreakz `sp1` with the fewest players, started; the turn sheets sent."""
    rules = find_game("speedphreakz")
    players = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(rules.min_players))
    with app.db.transaction() as session:
        create_game(
            app.shell, session, kind="speedphreakz", name="sp1", players=players, gm_address=GM, deadline="48h", seed=7
        )
    app.service.send()


def test_rollback_commits_the_dice_anew_and_the_turn_still_replays_exactly(gapp: TestApp) -> None:
    """The results revealed the turn's secret, so a reopened turn gets a fresh one (or
    anyone could work out the dice of any orders before sending them), and the players are told
    the new commitment; architecture.md: any turn still replays exactly from the database."""
    speedphreakz_game(gapp)
    for _ in range(3):
        gm_says(gapp, "PROCESS sp1", game="sp1")
    before = turns(gapp, "sp1")[2]
    rolls = [e["roll"] for e in before.events or [] if e.get("roll")]
    assert rolls, "the turn rolled dice"
    gm_says(gapp, "ROLLBACK sp1", game="sp1")
    reopened = turns(gapp, "sp1")[-1]
    assert reopened.number == 3 and reopened.resolved_at is None
    assert reopened.secret is not None and before.secret is not None and reopened.secret != before.secret
    with gapp.db.read() as session:
        told = [bytes(o.data) for o in session.scalars(select(Outbox).where(Outbox.kind == "rollback"))]
    assert told and all(fair.commitment(reopened.secret).encode() in mail for mail in told)
    gm_says(gapp, "PROCESS sp1", game="sp1")
    after = turns(gapp, "sp1")[2]
    assert after.secret == reopened.secret and after.seed != before.seed
    with gapp.db.read() as session:
        assert all(not r.differences for r in replay_game(session, "sp1"))


def test_a_speedphreakz_plot_without_a_round_number_stands_for_every_round(gapp: TestApp) -> None:
    """speedphreakz.md §5: the GM may set "a program without a round number (`PLOT g seat F1 F1
    VL`) that applies to every round the player leaves empty". PLOT takes it (a player's mail
    could not: it names no round), says what it stands for now, and each silent round of the
    seat runs it."""
    speedphreakz_game(gapp)
    gm_says(gapp, "PROCESS sp1", game="sp1")  # the set-up: every car on a start square
    gm_says(gapp, "PLOT sp1 p0 F1 F1", game="sp1")
    answer = body_of(last(gapp, GM))
    assert "[ERROR]" not in str(last(gapp, GM)["Subject"]), answer
    assert "> F1 F1" in answer and "ROUND" in answer.split("stands for", 1)[1]
    assert game_row(gapp, "sp1").seats[0].gm_plot == "F1 F1"
    for _ in range(2):
        gm_says(gapp, "PROCESS sp1", game="sp1")
    with gapp.db.read() as session:
        used = session.scalars(
            select(OrderSubmission.text)
            .join(Seat, Seat.id == OrderSubmission.seat_id)
            .where(Seat.name == "p0", OrderSubmission.source == "plot")
            .order_by(OrderSubmission.id)
        ).all()
    assert len(used) == 2 and all("F1 F1" in text for text in used), used
    gm_says(gapp, "PLOT sp1 p0 F9 F9", game="sp1")
    assert "[ERROR]" in str(last(gapp, GM)["Subject"]) and game_row(gapp, "sp1").seats[0].gm_plot == "F1 F1"


def test_a_gm_typo_gets_a_did_you_mean_and_a_verb_without_its_game_says_which(rc: TestApp) -> None:
    """`EXTNED rc1 24h`, `PROCES rc1` and `EXTEND 24h` (no game) are answered with what
    they most likely meant and the syntax, not only "not understood"; nothing is done."""
    gm_says(rc, "EXTNED rc1 24h\nPROCES rc1\nEXTEND 24h")
    body = words_of(last(rc, GM))
    assert "did you mean EXTEND? (EXTEND <game> <duration> [FORCE], e.g. EXTEND rc1 24h)" in body
    assert "did you mean PROCESS?" in body
    assert "EXTEND names the game first" in body and "your games: rc1" in body
    assert turns(rc)[-1].number == 1


def test_a_deadline_under_an_hour_away_needs_force_by_mail_as_on_the_command_line(rc: TestApp) -> None:
    """ "GM DEADLINE rc1 +2m by mail is taken with no warning while the CLI asks
    for --force under an hour": refused with the way to confirm it; with FORCE it is done."""
    before = turns(rc)[0].deadline
    gm_says(rc, "DEADLINE rc1 +2m")
    body = words_of(last(rc, GM))
    assert "less than an hour from now" in body and "DEADLINE rc1 +2m FORCE" in body
    assert turns(rc)[0].deadline == before
    gm_says(rc, "DEADLINE rc1 +2m FORCE")
    assert turns(rc)[0].deadline != before and "[ERROR]" not in str(last(rc, GM)["Subject"])


def test_a_replaced_seat_reads_with_its_new_holders_name_in_every_letter(rc: TestApp) -> None:
    """docs/DESIGN.md, "Seats that change hands": after REPLACE the rules still key the seat by
    its name, and every letter a person reads names it "anna (Kim McDonald)": the turn sheet's
    "You run as", the standings, what happened and the results; the name keeps its case."""
    gm_says(rc, "REPLACE rc1 anna kim@example.org Kim McDonald")
    seat = [s for s in game_row(rc).seats if s.name == "anna"][0]
    assert seat.handed_over and seat.player.name == "Kim McDonald"
    sheet = body_of(last(rc, "kim@example.org"))
    assert 'You run as "anna (Kim McDonald)".' in sheet
    assert "anna (Kim McDonald)" in sheet.split("You run as", 1)[1].split("Your private part", 1)[0]  # standings
    gm_says(rc, "PROCESS rc1")
    for address in (ADDRESS["seb"], "kim@example.org", GM):
        results = (
            body_of(mails(rc, address)[-1]) if address != GM else body_of(mails(rc, GM)[-2]) + body_of(last(rc, GM))
        )
        assert "anna (Kim McDonald)" in results, address
        table = results.replace("\r\n", "\n").split("Place  Player", 1)[1]
        assert "anna (Kim McDonald)" in table.split("\n\n", 1)[0], address
    seb = body_of(last(rc, ADDRESS["seb"])).replace("\r\n", "\n")
    happened = seb.split("What happened:", 1)[1].split("\n\n", 1)[0]
    assert "anna" not in happened.replace("anna (Kim McDonald)", "")  # what happened names the holder too
    assert "Kim McDonald" not in body_of(last(rc, ADDRESS["kelly"])).replace("anna (Kim McDonald)", "")


def test_a_seat_never_replaced_reads_as_its_name_alone(rc: TestApp) -> None:
    """Seats that never changed hands keep the bare seat name in the letters (no label)."""
    gm_says(rc, "PROCESS rc1")
    body = body_of(last(rc, ADDRESS["seb"])).replace("\r\n", "\n")
    table = body.split("Place  Player", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[1] for line in table.splitlines()[1:]] == ["anna", "kelly", "roger", "seb", "steve"]
    assert "Player           " in body  # the player column as wide as ever
