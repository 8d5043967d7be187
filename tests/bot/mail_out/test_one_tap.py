"""Orders in one tap: the orders of a reply whose body has
none are read from its subject, after the usual "Re:"/"AW:"/"[tag]" prefixes; the legal
one-line orders of a turn (`one_tap_orders`) and well-formed RFC 6068 ``mailto:`` links
(`mailto_link`) for them, each of which decodes to a legal order the bot then takes."""

from __future__ import annotations

import random
import re
import urllib.parse
from datetime import timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.intake import orders_in_subject
from bot.mail_in.auth import signed_address
from bot.mail_out.one_tap import mailto_link, one_tap_orders
from bot.testing import TestApp, body_of, plain_mail
from rules import find_game
from rules.api import AnyGame, GameState, turn_rng
from rules.speed_circuit import SpeedCircuit
from rules.speed_circuit.plot import limits
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, BOT, START, cycle, mails, turns
from tests.helpers import fake_inbox, moving_clock
from tests.rules.speed_circuit.test_options import _race_state

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures
RACECRAFT = find_game("racecraft")
SPEED_CIRCUIT = find_game("speed_circuit")
SPEED_CIRCUIT_GAME = SpeedCircuit()  # its own types: its states, orders and views as the game makes them
SIGNED = signed_address(BOT, "test-site-secret", "rc1", "kelly")
# RFC 6068 2: our mailto URLs hold unreserved characters and percent-encoded octets only.
MAILTO = re.compile(r"mailto:[A-Za-z0-9._~%-]+@[A-Za-z0-9._~%-]+\?subject=[A-Za-z0-9._~%-]*")


def reply(app: TestApp, seat: str, subject: str, text: str = "", *, n: list[int] = [0]) -> None:  # noqa: B006 - a counter
    n[0] += 1
    fake_inbox(app).deliver(
        plain_mail(
            ADDRESS[seat],
            signed_address(BOT, "test-site-secret", "rc1", seat),
            subject,
            text,
            message_id=f"<tap-{n[0]}@phone.example>",
        )
    )
    cycle(app)


def on_file(app: TestApp, seat: str) -> list[str]:
    from sqlalchemy import select

    from bot.models import OrderSubmission, Seat

    with app.db.read() as session:
        seat_id = session.scalars(select(Seat.id).where(Seat.name == seat)).one()
        return list(session.scalars(select(OrderSubmission.text).where(OrderSubmission.seat_id == seat_id)))


def test_the_prefixes_and_tags_are_taken_off_the_subject() -> None:
    assert orders_in_subject("USE 3") == "USE 3"
    assert orders_in_subject("Re: [rc1] USE 3") == "USE 3"
    assert orders_in_subject("AW: Re[2]: [rc1.kelly.abcdefghijkl] overtake") == "overtake"
    assert orders_in_subject("SV:  VS: Re: RE: cruise ") == "cruise"
    assert orders_in_subject("SPEED 100; PATH A A; PUSH YES") == "SPEED 100\nPATH A A\nPUSH YES"
    assert orders_in_subject("Re: [rc1]") == ""
    assert orders_in_subject("Report of the race") == "Report of the race", "only prefixes ending in ':' go"


def test_a_reply_with_the_order_in_the_subject_only_is_applied_and_confirmed(rc: TestApp) -> None:
    """The one-tap mail: an empty body, the order in the subject (after Re: and the game's tag)."""
    reply(rc, "kelly", "Re: [rc1] USE 4")
    confirmation = mails(rc, ADDRESS["kelly"])[-1]
    assert "[ERROR]" not in str(confirmation["Subject"])
    assert "USE 4" in body_of(confirmation)
    assert on_file(rc, "kelly") == ["USE 4"]


def test_the_body_wins_over_the_subject(rc: TestApp) -> None:
    """Only when the body holds no order and no command is the subject read."""
    reply(rc, "seb", "USE 9", "USE 2")
    assert on_file(rc, "seb") == ["USE 2"]
    reply(rc, "seb", "USE 9", "HELP")
    assert on_file(rc, "seb") == ["USE 2"], "a body with a command: the subject is not orders"
    assert "Help" in str(mails(rc, ADDRESS["seb"])[-1]["Subject"])


def test_an_empty_reply_to_the_bots_own_subject_is_still_an_empty_mail(rc: TestApp) -> None:
    """A plain reply's subject ("Re: [rc1] Racecraft: Turn 1 ...") holds no order: the mail is
    empty, as before, and nothing is put on file."""
    sheet = mails(rc, ADDRESS["anna"])[0]
    reply(rc, "anna", "Re: " + str(sheet["Subject"]))
    assert on_file(rc, "anna") == []
    assert "Nothing to do" in str(mails(rc, ADDRESS["anna"])[-1]["Subject"])


def test_a_subject_order_that_is_not_legal_is_refused_with_the_reason(rc: TestApp) -> None:
    """USE 11 is an order, not a legal one (EP are 0..10): refused with the reason, as from a body."""
    reply(rc, "steve", "Re: [rc1] USE 11")
    answer = mails(rc, ADDRESS["steve"])[-1]
    assert "[ERROR]" in str(answer["Subject"]) and "USE 11" in body_of(answer)
    assert on_file(rc, "steve") == []


def _decoded(link: str) -> tuple[str, str]:
    """(address, subject) of a mailto link, as a mail client opens it."""
    assert MAILTO.fullmatch(link), link
    url = urllib.parse.urlsplit(link)
    query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
    return urllib.parse.unquote(url.path), query["subject"][0]


def _every_link_is_a_legal_order(rules: AnyGame, state: GameState, seat: str) -> int:
    offered = one_tap_orders(rules, state, seat)
    for label, line in offered:
        address, subject = _decoded(mailto_link(SIGNED, line))
        assert address == SIGNED and label and "\n" not in line
        text = orders_in_subject("Re: [rc1] " + subject)
        parsed = rules.parse_orders(state, seat, text)
        assert parsed.ok and parsed.orders and rules.is_complete(state, seat, parsed.orders), (line, parsed.problems)
    return len(offered)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), turns_played=st.integers(0, 4))
def test_every_racecraft_link_decodes_to_a_legal_order(seed: int, turns_played: int) -> None:
    """Property: in any Racecraft turn, each one-tap link is a well-formed mailto whose subject
    the bot reads as a legal, complete order; USE n for every n the player can pay, CRUISE and
    OVERTAKE on tactical turns (OVERTAKE not at 0 EP); none on the final sprint."""
    rules = RACECRAFT
    players = ["a", "b", "c", "d", "e"]
    state = rules.new_game(players, {}, turn_rng(seed, 0))
    chooser = random.Random(seed)
    for n in range(turns_played):
        if rules.is_finished(state) or not rules.expected_players(state):
            break
        orders = {
            p: rules.parse_orders(state, p, chooser.choice([f"USE {chooser.randint(0, 3)}", "CRUISE"])).orders
            or rules.default_orders(state, p)
            for p in rules.expected_players(state)
        }
        state = rules.resolve(state, orders, turn_rng(seed, n + 1)).state
    for player in players:
        count = _every_link_is_a_legal_order(rules, state, player)
        expected = player in rules.expected_players(state)
        assert (count > 0) == expected
        lines = [line for _, line in one_tap_orders(rules, state, player)]
        ep = rules.figures(state, player).get("ep") if expected else None
        if isinstance(ep, int):
            assert [f"USE {n}" for n in range(ep + 1)] == [line for line in lines if line.startswith("USE")]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5), turns_played=st.integers(1, 8))
def test_every_speed_circuit_link_decodes_to_a_legal_plot_with_its_cost(
    seed: int, players: int, turns_played: int
) -> None:
    """Property: each legal speed of the seat's options is offered once, its label the cost the
    options give for its cheapest path ("free", "1 wear", ...), its link a legal plot; a car
    in the pits is offered every speed it may plot there (0 to the pit limit)."""
    state = _race_state(seed, players, turns_played, "harbour_loop", False)
    for player in sorted(SPEED_CIRCUIT_GAME.expected_players(state)):
        _every_link_is_a_legal_order(SPEED_CIRCUIT, GameState(state), player)
        options = SPEED_CIRCUIT_GAME.view(state, None, player).options
        offered = one_tap_orders(SPEED_CIRCUIT, GameState(state), player)
        car = state.car(player)
        if car.pit is not None:
            safe = limits(car, state.track).safe
            assert [line for _, line in offered] == [f"SPEED {n}" for n in range(0, safe + 1, 20)]
        if options is None:
            continue
        speeds = [(c.speed, c.cheapest) for c in options.choices if c.cheapest is not None]
        assert [label.split(":")[0] for label, _ in offered] == [f"{speed} mph" for speed, _ in speeds]
        for (label, _), (_, cheapest) in zip(offered, speeds, strict=True):
            assert label.endswith(cheapest.describe())


def test_speedphreakz_has_no_one_line_orders() -> None:
    rules = find_game("speedphreakz")
    state = rules.new_game(["a", "b"], {}, turn_rng(1, 0))
    assert all(one_tap_orders(rules, state, p) == [] for p in ("a", "b"))


@settings(max_examples=200, deadline=None)
@given(subject=st.text(min_size=1, max_size=80), local=st.from_regex(r"[a-z0-9][a-z0-9+._-]{0,30}", fullmatch=True))
def test_mailto_links_are_well_formed_and_decode_to_what_was_given(subject: str, local: str) -> None:
    """Property: RFC 6068 -- only allowed characters, the subject percent-encoded UTF-8 (a space
    %20, never "+"), and decoding gives back the address and the subject exactly."""
    address = f"{local}@example.org"
    link = mailto_link(address, subject)
    assert _decoded(link) == (address, subject)
    assert "+" not in link


def test_one_tap_links_work_end_to_end_through_the_intake(rc: TestApp) -> None:
    """The links of a real turn: the first one's subject, sent as a reply, is put on file."""
    rules = RACECRAFT
    with rc.db.read() as session:
        from bot.games.turns import current_state
        from bot.store import find_game_row

        game = find_game_row(session, "rc1", with_seats=True)
        assert game is not None
        _, state, _ = current_state(session, game)
    label, line = one_tap_orders(rules, state, "roger")[3]
    _, subject = _decoded(mailto_link(signed_address(BOT, "test-site-secret", "rc1", "roger"), line))
    reply(rc, "roger", subject)
    assert on_file(rc, "roger") == [line] and label.startswith(line)
    moving_clock(rc).set(START + timedelta(hours=49))
    cycle(rc)
    assert len(turns(rc)) == 2


def test_no_subject_of_the_bots_mail_is_read_as_orders(tmp_path: Path) -> None:
    """A reply with an empty body to any of the bot's mails (its subject as it is, "Re: "
    before it) stays an empty mail in every game and turn: no subject of ours holds an order,
    legal or not (testing.md: never an order line in the bot's own mail)."""
    from tests.bot.mail_out.test_templates import play_by_deadlines

    for kind in ("racecraft", "speed_circuit", "speedphreakz"):
        (tmp_path / kind).mkdir()
        app = gm_helpers.new_app(tmp_path / kind)
        try:
            msgs = play_by_deadlines(app, kind)
            rules = find_game(kind)
            with app.db.read() as session:
                from sqlalchemy import select

                from bot.models import Turn

                states = [rules.load_state(t.state) for t in session.scalars(select(Turn))]
            subjects = {str(m["Subject"]) for m in msgs}
            assert len(subjects) > 5
            for subject in subjects:
                text = orders_in_subject("Re: " + subject)
                for state in states:
                    for seat in rules.expected_players(state):
                        parsed = rules.parse_orders(state, seat, text)
                        assert not parsed.orders and all(p.kind.value == "invalid" for p in parsed.problems), (
                            kind,
                            subject,
                            parsed,
                        )
        finally:
            app.close()
