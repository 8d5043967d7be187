"""Sign-ups by mail (JOIN, OPEN, START), the welcome mail, RESIGN, and the NMR-streak limit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.games.signups import seat_name_for
from bot.games.turns import create_game
from bot.mail_in.auth import NAME_RE, signed_address
from bot.models import GameStatus
from bot.testing import TestApp
from rules import find_game
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
    stranger_joins,
    stranger_says,
    turns,
)
from tests.helpers import fake_inbox, moving_clock

RACECRAFT = find_game("racecraft")
gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


@pytest.fixture
def signup(gapp: TestApp) -> TestApp:
    """Racecraft `rc2`, open for sign-ups, nobody in yet."""
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=(),
            gm_address=GM,
            deadline="48h",
            timezone="Europe/London",
            signup=True,
            seed=11,
        )
    return gapp


def join_n(app: TestApp, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        stranger_joins(app, f"runner{i}@example.net", f"JOIN rc2 Runner {i}")


def test_a_stranger_joins_and_gets_a_welcome_with_rules_syntax_and_reply_address(signup: TestApp) -> None:
    """JOIN <game> [name] from anyone: a seat named after the name; the welcome mail carries the
    rules summary, the order syntax and the seat's reply address."""
    stranger_joins(signup, "kim@example.net", "JOIN rc2 Kim Lee")
    seat = game_row(signup, "rc2").seats[0]
    assert (seat.name, seat.player.address, seat.player.name) == ("kim-lee", "kim@example.net", "Kim Lee")
    welcome = last(signup, "kim@example.net")
    body = body_of(welcome)
    reply = signed_address(BOT, "test-site-secret", "rc2", "kim-lee")
    assert welcome["Reply-To"].addresses[0].addr_spec == reply
    assert reply in body
    assert "Racecraft is a middle-distance track race" in body
    assert "USE n" in body  # the order syntax
    assert f"PASSWORD {seat.secret}" in body
    assert "kim-lee joined rc2" in str(last(signup, GM)["Subject"])


def test_join_without_a_name_uses_the_address_and_names_are_unique(signup: TestApp) -> None:
    """The seat name comes from the address when no name is given, and is unique in the game."""
    stranger_joins(signup, "Kim.Lee@example.net", "JOIN rc2")
    stranger_joins(signup, "kim@example.org", "JOIN rc2 Kim Lee")
    stranger_joins(signup, "other@example.org", "JOIN rc2 Kim Lee")
    assert [s.name for s in game_row(signup, "rc2").seats] == ["kim-lee", "kim-lee-2", "kim-lee-3"]


@settings(max_examples=100, deadline=None)
@given(
    name=st.text(max_size=60),
    local=st.from_regex(r"[A-Za-z0-9._+-]{1,40}", fullmatch=True),
    taken=st.sets(st.from_regex(r"[a-z0-9][a-z0-9-]{0,10}", fullmatch=True), max_size=5),
)
def test_seat_names_are_always_valid_and_new(name: str, local: str, taken: set[str]) -> None:
    """A derived seat name is always a legal seat name (not 'gm') and never one already taken."""
    seat = seat_name_for(name, f"{local}@example.org", taken)
    assert NAME_RE.match(seat) and seat != "gm" and seat not in taken


def test_join_refusals_unknown_closed_and_already_joined(signup: TestApp, rc: TestApp) -> None:
    """Refusals with a reason: an unknown game, a game under way, an address already in (a full game
    starts by itself, so it is refused as under way: see the next test)."""
    stranger_says(signup, "x@example.net", "JOIN nosuch")
    refusal = last(signup, "x@example.net")
    assert "No game by that name" in str(refusal["Subject"])
    assert "nosuch" not in refusal.get_content() and "Reply-To" not in refusal  # no echo, nothing signed
    assert "rc2" in body_of(last(signup, "x@example.net"))  # the games open for sign-ups
    stranger_says(signup, "y@example.net", "JOIN rc1 Y")
    assert "not open for sign-ups" in str(last(signup, "y@example.net")["Subject"])
    stranger_joins(signup, "z@example.net", "JOIN rc2 Zed")
    # Now a registered player: a second JOIN must be authenticated like any of their mail...
    stranger_says(signup, "z@example.net", "JOIN rc2 Zed again")
    assert "not accepted" in str(last(signup, "z@example.net")["Subject"])
    # ...and, authenticated (a reply to the welcome), it is refused as already joined.
    from bot.testing import reply_to

    welcome = [m for m in mails(signup, "z@example.net") if "Welcome" in str(m["Subject"])][0]
    fake_inbox(signup).deliver(reply_to(welcome, "JOIN rc2", sender="z@example.net"))
    cycle(signup)
    assert "in rc2 already" in str(last(signup, "z@example.net")["Subject"])
    assert len(game_row(signup, "rc2").seats) == 1


def test_the_game_starts_by_itself_at_the_maximum_and_then_is_full(signup: TestApp) -> None:
    """Automatic start when the maximum is reached; a JOIN after that is refused as closed."""
    join_n(signup, RACECRAFT.max_players)
    game = game_row(signup, "rc2")
    assert game.status == GameStatus.ACTIVE and len(game.seats) == RACECRAFT.max_players
    assert "Turn 1 of 5" in str(last(signup, "runner0@example.net")["Subject"])
    stranger_says(signup, "late@example.net", "JOIN rc2 Late")
    assert "not open" in str(last(signup, "late@example.net")["Subject"])


def test_start_by_the_gm_needs_enough_players(signup: TestApp) -> None:
    """START <game>: refused below the game's minimum, then starts turn 1 for everyone."""
    join_n(signup, RACECRAFT.min_players - 1)
    gm_says(signup, "START rc2", game="rc2")
    assert "[ERROR]" in str(last(signup, GM)["Subject"])
    assert game_row(signup, "rc2").status == GameStatus.SIGNUP
    join_n(signup, 1, start=10)
    gm_says(signup, "START rc2", game="rc2")
    assert game_row(signup, "rc2").status == GameStatus.ACTIVE
    assert len(turns(signup, "rc2")) == 1
    gm_says(signup, "START rc2", game="rc2")
    assert "started already" in body_of(last(signup, GM))


def test_open_confirms_the_sign_up_state_and_refuses_a_running_game(signup: TestApp, rc: TestApp) -> None:
    """OPEN <game>: confirms who has joined and how to join; a started game cannot be opened."""
    join_n(signup, 2)
    gm_says(signup, "OPEN rc2", game="rc2")
    body = body_of(last(signup, GM))
    assert "open for sign-ups: 2 joined" in body and "JOIN rc2" in body
    gm_says(rc, "OPEN rc1")
    assert "[ERROR]" in str(last(rc, GM)["Subject"])


def test_resign_before_the_start_takes_the_player_off_the_list_and_they_may_rejoin(signup: TestApp) -> None:
    """RESIGN <game> before the start: off the list; a later JOIN reopens the same seat."""
    stranger_joins(signup, "kim@example.net", "JOIN rc2 Kim")
    welcome = last(signup, "kim@example.net")
    from bot.testing import reply_to

    fake_inbox(signup).deliver(reply_to(welcome, "RESIGN rc2", sender="kim@example.net"))
    cycle(signup)
    assert not game_row(signup, "rc2").seats[0].active
    assert "resigned" in str(last(signup, "kim@example.net")["Subject"])
    stranger_joins(signup, "kim@example.net", "JOIN rc2 Kim")
    seats = game_row(signup, "rc2").seats
    assert len(seats) == 1 and seats[0].active


def test_resign_during_the_game_drops_the_seat_through_the_rules(rc: TestApp) -> None:
    """RESIGN <game>: confirmed by mail, rules.drop_player on the open turn, the GM told, audited."""
    player_says(rc, "roger", "RESIGN rc1")
    state = RACECRAFT.load_state(turns(rc)[0].state)
    assert "roger" not in RACECRAFT.players(state)
    assert "resigned" in str(last(rc, ADDRESS["roger"])["Subject"])
    assert "roger resigned" in str(last(rc, GM)["Subject"])
    assert audit(rc)[-1].command.startswith("RESIGN rc1")


def test_resign_from_a_game_you_are_not_in_is_refused(rc: TestApp) -> None:
    player_says(rc, "roger", "RESIGN rc9")
    assert "No seat in rc9" in str(last(rc, ADDRESS["roger"])["Subject"])
    assert all(s.active for s in game_row(rc).seats)


# -- the NMR-streak limit ------------------------------------------------------------------------


def _limit(app: TestApp, limit: int, action: str) -> None:
    from bot.store import find_game_row

    with app.db.transaction() as session:
        game = find_game_row(session, "rc1")
        assert game is not None
        game.nmr_limit, game.nmr_action = limit, action


def _everyone_but_anna_orders(app: TestApp) -> None:
    for seat in ("kelly", "seb", "steve", "roger"):
        player_says(app, seat, "CRUISE" if len(turns(app)) > 1 else "USE 3")
    moving_clock(app).advance(hours=49)
    cycle(app)


def test_the_nmr_limit_warns_first_then_drops_the_seat(rc: TestApp) -> None:
    """After `nmr_limit - 1` missed turns a warning; at the limit the seat is dropped (action drop)."""
    _limit(rc, 2, "drop")
    _everyone_but_anna_orders(rc)
    warning = last(rc, ADDRESS["anna"])
    assert "Warning: 1 turn without orders" in str(warning["Subject"])
    assert "dropped" in body_of(warning)
    _everyone_but_anna_orders(rc)
    anna = [s for s in game_row(rc).seats if s.name == "anna"][0]
    assert not anna.active
    assert "anna" not in RACECRAFT.players(RACECRAFT.load_state(turns(rc)[-1].state))
    assert "NMR limit reached by anna" in str(last(rc, GM)["Subject"])


def test_the_nmr_limit_hands_the_seat_to_the_gm(rc: TestApp) -> None:
    """Action gm: the GM's address takes the seat and gets its turn sheet."""
    _limit(rc, 1, "gm")
    _everyone_but_anna_orders(rc)
    anna = [s for s in game_row(rc).seats if s.name == "anna"][0]
    assert anna.active and anna.player.address == GM
    sheets = [m for m in mails(rc, GM) if m["Reply-To"] and "anna" in str(m["Reply-To"])]
    assert sheets, "the GM gets the seat's turn sheet"
    assert "goes to the GM" in str(last(rc, ADDRESS["anna"])["Subject"])


def test_without_a_limit_nothing_happens(rc: TestApp) -> None:
    _everyone_but_anna_orders(rc)
    _everyone_but_anna_orders(rc)
    anna = [s for s in game_row(rc).seats if s.name == "anna"][0]
    assert anna.active and anna.nmr_streak == 2 and anna.player.address == ADDRESS["anna"]


def test_join_to_a_full_sign_up_list_is_refused(gapp: TestApp) -> None:
    """A game opened for sign-ups with its maximum already listed (game new --signup --player ...) is full."""
    from bot.games.turns import PlayerSpec

    listed = tuple(PlayerSpec(f"p{i}", f"p{i}@example.org", f"P{i}") for i in range(RACECRAFT.max_players))
    with gapp.db.transaction() as session:
        create_game(
            gapp.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=listed,
            gm_address=GM,
            deadline="48h",
            signup=True,
            seed=1,
        )
    stranger_says(gapp, "late@example.net", "JOIN rc2 Late")
    assert "rc2 is full" in str(last(gapp, "late@example.net")["Subject"])
    assert len(game_row(gapp, "rc2").seats) == RACECRAFT.max_players
