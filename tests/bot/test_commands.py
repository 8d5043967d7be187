"""A mail's lines -> player commands, GM commands and orders (mail-interface.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.commands import (
    GM_COMMANDS,
    GmCommand,
    Help,
    Join,
    Resign,
    ShowOrders,
    Status,
    parse_commands,
)


def test_player_commands_and_orders_are_told_apart() -> None:
    parsed = parse_commands("HELP\nUSE 3\nstatus\nORDERS\nJOIN rc2 Roger Federer\nRESIGN rc1")
    assert parsed.player == (Help(), Status(), ShowOrders(), Join("rc2", "Roger Federer"), Resign("rc1"))
    assert parsed.orders_text == "USE 3"


def test_gm_lines_count_only_for_games_the_sender_is_gm_of() -> None:
    """commands.py: SpeedPhreakz's START 2,4 FACING N is an order; START rc1 is the GM's."""
    text = "START 2,4 FACING N\nSTART rc1\nEXTEND rc1 24h\nORDER rc1 seb USE 3; CRUISE"
    as_gm = parse_commands(text, gm_games={"rc1"})
    assert as_gm.gm == (
        GmCommand("START", "rc1", (), "START rc1"),
        GmCommand("EXTEND", "rc1", ("24h",), "EXTEND rc1 24h"),
        GmCommand("ORDER", "rc1", ("seb", "USE 3; CRUISE"), "ORDER rc1 seb USE 3; CRUISE"),
    )
    assert as_gm.orders_text == "START 2,4 FACING N"
    as_player = parse_commands(text)
    assert as_player.gm == () and "EXTEND rc1 24h" in as_player.orders_text


def test_bad_arguments_to_a_command_are_reported() -> None:
    parsed = parse_commands("JOIN\nEXTEND rc1\nSET rc1 seb ep", gm_games={"rc1"})
    reasons = [p.reason for p in parsed.problems]
    assert any("JOIN <game>" in r for r in reasons)
    assert any("EXTEND <game> <duration>" in r for r in reasons)
    assert any("SET <game> <seat> <figure> <value>" in r for r in reasons)


def test_the_password_line_is_never_part_of_the_orders() -> None:
    assert parse_commands("USE 3\nPASSWORD hunter2").orders_text == "USE 3"


def test_every_gm_command_has_an_example_that_parses() -> None:
    """The digest shows one example per command: each must itself be a valid command."""
    for spec in GM_COMMANDS:
        parsed = parse_commands(spec.example, gm_games={spec.example.split()[1]})
        assert len(parsed.gm) == 1 and parsed.gm[0].verb == spec.verb, spec.example


def test_every_command_has_its_handler_and_every_handler_its_command() -> None:
    """Commands as objects (Mailman 3): the syntax HELP shows and the handler that runs are the same
    command's, so they cannot drift: each player command class has a handler, each GM verb too."""
    from bot.commands import PLAYER_COMMANDS, player
    from bot.gm.powers import HANDLERS as GM_HANDLERS

    assert set(player.HANDLERS) == set(PLAYER_COMMANDS)
    assert set(GM_HANDLERS) == {spec.verb for spec in GM_COMMANDS}
    for command in PLAYER_COMMANDS:
        assert command.verb == command.syntax.split()[0] and command.summary and command.example
        assert parse_commands(command.example).player[0].verb == command.verb, command.example


def test_help_lists_every_player_command_from_its_class(tmp_path: object) -> None:
    """HELP is generated from the command classes: each one's syntax and summary, in order."""
    from bot.commands import PLAYER_COMMANDS
    from bot.mail_out.render import Renderer

    text = Renderer().render("help", {
        "bot": {"name": "Flagman", "address": "flagman@example.org"}, "greeting": "", "game_name": "",
        "game_title": "", "game_help": "", "turn_label": "", "games": [], "player_help": list(PLAYER_COMMANDS),
        "gm_help": [], "gm_games": []}).body
    listed = [line.split(maxsplit=1)[0] for line in text.splitlines() if line.startswith("  ") and line.strip()]
    assert listed == [c.verb for c in PLAYER_COMMANDS]
    for command in PLAYER_COMMANDS:
        assert f"  {command.syntax:<21} {command.summary}" in text


def test_greetings_and_sign_offs_around_the_orders_are_left_out_quietly() -> None:
    """Issue 17: "Hi Flagman, / USE 3 / Cheers, Steve" is USE 3 -- the greeting and the
    sign-off are not orders refused, they are what people write around orders."""
    assert parse_commands("Hi Flagman,\n\nUSE 3\n\nCheers,\nSteve").orders_text == "USE 3"
    assert parse_commands("Dear GM,\nUSE 1\nThank you very much!").orders_text == "USE 1"
    assert parse_commands("Good morning all!\nPATH B B A\nSPEED 80\nKind regards, Mary Ann").orders_text == (
        "PATH B B A\nSPEED 80")
    assert parse_commands("Hello\nHELP\nThanks").player == (Help(),)


def test_a_courtesy_with_an_order_in_it_is_an_order_line_not_a_courtesy() -> None:
    """Only a line that is nothing but a greeting or sign-off is left out: one with a digit or a
    word in capitals in it ("hi USE 3", "Cheers OVERTAKE") goes to the game's parser, which
    refuses it with its reason if it is not an order; lines between orders are never touched."""
    for text in ("hi there USE 3", "Hi, OVERTAKE please", "HI FLAGMAN\nUSE 2", "USE 2\nthanks\nUSE 3",
                 "Cheers\nOVERTAKE", "USE 3\nCheers 3"):
        assert parse_commands(text).orders_text == text


_ORDER_LINES = st.lists(st.from_regex(r"[A-Za-z]{1,8} [0-9]{1,3}( [0-9A-Z,]{1,4}){0,2}|[0-9]{1,2}", fullmatch=True)
                        .filter(lambda line: line.split()[0].upper() not in {"HELP", "STATUS", "ORDERS", "JOIN", "RESIGN"}),
                        min_size=1, max_size=5)
_GREETINGS = st.sampled_from(["", "Hi Flagman,", "Hello", "Dear GM,", "Hey all!", "Good morning", "hi"])
_SIGN_OFFS = st.sampled_from(["", "Cheers,\nSteve", "Thanks!", "Kind regards, Mary Ann", "Best\nJo", "ta"])


@given(orders=_ORDER_LINES, greeting=_GREETINGS, sign_off=_SIGN_OFFS, blank=st.sampled_from(["\n", "\n\n"]))
def test_wrapping_orders_in_courtesies_changes_nothing(orders: list[str], greeting: str, sign_off: str,
                                                       blank: str) -> None:
    """Property: any greeting before the orders and any sign-off after them leave the orders as
    they are, and never take an order line with them."""
    wrapped = parse_commands(blank.join(p for p in (greeting, "\n".join(orders), sign_off) if p))
    assert wrapped.orders_text == "\n".join(orders)
    assert wrapped.player == () and wrapped.problems == ()
