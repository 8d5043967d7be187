"""A mail's lines -> player commands, GM commands and orders (mail-interface.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.commands import (
    GM_COMMANDS,
    PLAYER_COMMANDS,
    Address,
    Confirm,
    Help,
    Join,
    ListGames,
    Observe,
    Press,
    Resign,
    ShowOrders,
    ShowRules,
    Status,
    Timezone,
    Unobserve,
    Vacation,
    parse_commands,
)
from bot.commands.grammar import MAX_PRESS_CHARS, MAX_PRESS_LINES, Extend, Order, Practice, Start
from bot.mail_in import tokens
from rules.api import RobotLevel


def test_player_commands_and_orders_are_told_apart() -> None:
    parsed = parse_commands("HELP\nUSE 3\nstatus\nORDERS\nJOIN rc2 Roger Federer\nRESIGN rc1")
    assert parsed.player == (Help(), Status(), ShowOrders(), Join("rc2", "Roger Federer"), Resign("rc1"))
    assert parsed.orders_text == "USE 3"


def test_gm_lines_count_only_for_games_the_sender_is_gm_of() -> None:
    """commands.py: SpeedPhreakz's START 2,4 FACING N is an order; START rc1 is the GM's."""
    text = "START 2,4 FACING N\nSTART rc1\nEXTEND rc1 24h\nORDER rc1 seb USE 3; CRUISE"
    as_gm = parse_commands(text, gm_games={"rc1"})
    assert as_gm.gm == (
        Start("rc1", (), "START rc1"),
        Extend("rc1", ("24h",), "EXTEND rc1 24h"),
        Order("rc1", ("seb", "USE 3; CRUISE"), "ORDER rc1 seb USE 3; CRUISE"),
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
    command's, so they cannot drift: each player command class has a handler, each GM command class
    too, in the one table of bot.commands.registry (no handler registers itself on import)."""
    from bot.commands import PLAYER_COMMANDS, registry

    assert set(registry.PLAYER_HANDLERS) == set(PLAYER_COMMANDS)
    assert set(registry.GM_HANDLERS) == set(GM_COMMANDS)
    for command in PLAYER_COMMANDS:
        assert command.verb == command.syntax.split()[0] and command.summary and command.example
        assert parse_commands(command.example).player[0].verb == command.verb, command.example


def test_help_lists_every_player_command_from_its_class(tmp_path: object) -> None:
    """HELP is generated from the command classes: each one's syntax and summary, the commands
    for anyone first (a stranger may send those), then the ones for players, each list in order."""
    from bot.commands import PLAYER_COMMANDS
    from bot.mail_out.render import Renderer

    anyone = [c for c in PLAYER_COMMANDS if c.for_anyone]
    players = [c for c in PLAYER_COMMANDS if not c.for_anyone]
    text = (
        Renderer()
        .render(
            "help",
            {
                "bot": {"name": "Flagman", "address": "flagman@example.org"},
                "greeting": "",
                "game_name": "",
                "game_title": "",
                "game_help": "",
                "turn_label": "",
                "games": [],
                "stranger": False,
                "anyone_help": anyone,
                "player_help": players,
                "gm_help": [],
                "gm_games": [],
            },
        )
        .body
    )
    # A command's line starts two columns in; its explanation, broken to 78 columns, goes on further in.
    listed = [line.split(maxsplit=1)[0] for line in text.splitlines() if line.startswith("  ") and line[2:3].strip()]
    assert listed == [c.verb for c in anyone + players]
    assert text.index("Commands for anyone:") < text.index("Commands for the players of a game:")
    said = " ".join(text.split())
    for command in PLAYER_COMMANDS:
        assert f"{command.syntax} {command.summary}" in said, command.syntax
    assert all(len(line) <= 78 for line in text.splitlines())


def test_greetings_and_sign_offs_around_the_orders_are_left_out_quietly() -> None:
    """ "Hi Flagman, / USE 3 / Cheers, Steve" is USE 3 -- the greeting and the
    sign-off are not orders refused, they are what people write around orders."""
    assert parse_commands("Hi Flagman,\n\nUSE 3\n\nCheers,\nSteve").orders_text == "USE 3"
    assert parse_commands("Dear GM,\nUSE 1\nThank you very much!").orders_text == "USE 1"
    assert parse_commands("Good morning all!\nPATH B B A\nSPEED 80\nKind regards, Mary Ann").orders_text == (
        "PATH B B A\nSPEED 80"
    )
    assert parse_commands("Hello\nHELP\nThanks").player == (Help(),)


def test_a_courtesy_with_an_order_in_it_is_an_order_line_not_a_courtesy() -> None:
    """Only a line that is nothing but a greeting or sign-off is left out: one with a digit or a
    word in capitals in it ("hi USE 3", "Cheers OVERTAKE") goes to the game's parser, which
    refuses it with its reason if it is not an order; lines between orders are never touched."""
    for text in (
        "hi there USE 3",
        "Hi, OVERTAKE please",
        "HI FLAGMAN\nUSE 2",
        "USE 2\nthanks\nUSE 3",
        "Cheers\nOVERTAKE",
        "USE 3\nCheers 3",
    ):
        assert parse_commands(text).orders_text == text


_ORDER_LINES = st.lists(
    st.from_regex(r"[A-Za-z]{1,8} [0-9]{1,3}( [0-9A-Z,]{1,4}){0,2}|[0-9]{1,2}", fullmatch=True).filter(
        lambda line: line.split()[0].upper() not in {c.verb for c in PLAYER_COMMANDS}
    ),
    min_size=1,
    max_size=5,
)
_GREETINGS = st.sampled_from(["", "Hi Flagman,", "Hello", "Dear GM,", "Hey all!", "Good morning", "hi"])
_SIGN_OFFS = st.sampled_from(["", "Cheers,\nSteve", "Thanks!", "Kind regards, Mary Ann", "Best\nJo", "ta"])


@given(orders=_ORDER_LINES, greeting=_GREETINGS, sign_off=_SIGN_OFFS, blank=st.sampled_from(["\n", "\n\n"]))
def test_wrapping_orders_in_courtesies_changes_nothing(
    orders: list[str], greeting: str, sign_off: str, blank: str
) -> None:
    """Property: any greeting before the orders and any sign-off after them leave the orders as
    they are, and never take an order line with them."""
    wrapped = parse_commands(blank.join(p for p in (greeting, "\n".join(orders), sign_off) if p))
    assert wrapped.orders_text == "\n".join(orders)
    assert wrapped.player == () and wrapped.problems == ()


# -- the commands for anyone and the players' own settings ----------------------------------------


def test_the_commands_for_anyone_and_for_players_parse_with_their_arguments() -> None:
    """mail-interface.md: LIST, RULES <game>, OBSERVE <game> / UNOBSERVE <game> for anyone;
    PRESS <game> ALL|<seat>, TIMEZONE <zone>, ADDRESS <new address>, VACATION <from> <to>."""
    from datetime import date

    parsed = parse_commands(
        "list\nRULES RC1\nOBSERVE rc1\nUNOBSERVE\nUNOBSERVE sc1\nTIMEZONE Europe/Paris\n"
        "ADDRESS <Kelly@New.Example>\nVACATION 2026-07-01 2026-07-14\nVACATION off\n"
        "CONFIRM observe.rc1.20460.abcdefghijklmnop"
    )
    assert parsed.player == (
        ListGames(),
        ShowRules("rc1"),
        Observe("rc1"),
        Unobserve(""),
        Unobserve("sc1"),
        Timezone("Europe/Paris"),
        Address("kelly@new.example"),
        Vacation(date(2026, 7, 1), date(2026, 7, 14)),
        Vacation(None, None),
        Confirm("observe.rc1.20460.abcdefghijklmnop"),
    )
    assert parsed.problems == () and parsed.orders_text == ""


def test_bad_arguments_to_the_new_commands_are_reported_with_their_syntax() -> None:
    parsed = parse_commands(
        "RULES\nOBSERVE a b\nADDRESS nobody\nVACATION 2026-07-01\nVACATION 1.7.2026 14.7.2026\n"
        "PRESS rc1\nCONFIRM 1234\nTIMEZONE"
    )
    reasons = " | ".join(p.reason for p in parsed.problems)
    for syntax in (
        "RULES <game>",
        "OBSERVE <game>",
        "ADDRESS <new address>",
        "VACATION <from> <to>",
        "YYYY-MM-DD",
        "PRESS <game> ALL|<seat>",
        "CONFIRM <code>",
        "TIMEZONE <zone>",
    ):
        assert syntax in reasons, syntax
    assert len(parsed.problems) == 8


def test_the_lines_under_press_are_its_message_up_to_endpress() -> None:
    """PRESS <game> ALL|<seat> "followed by the message": the lines under it, to ENDPRESS (or
    the end of the mail), never commands or orders; after ENDPRESS, orders and commands again."""
    parsed = parse_commands("PRESS rc1 ALL Hi all,\nlet us all CRUISE\nSTATUS\n\nEND PRESS\nUSE 3\nSTATUS")
    assert parsed.player == (Press("rc1", "all", "Hi all,\nlet us all CRUISE\nSTATUS"), Status())
    assert parsed.orders_text == "USE 3"
    to_the_end = parse_commands("USE 2\nPRESS rc1 kelly\nsee you\nUSE 9")
    assert to_the_end.player == (Press("rc1", "kelly", "see you\nUSE 9"),) and to_the_end.orders_text == "USE 2"


def test_a_gm_command_line_ends_the_gms_press_message() -> None:
    """A GM's reply to the digest: PLOT, a one-line PRESS, then more GM commands. The press is
    its own line; the GM commands under it (of the GM's games) are commands, run and answered,
    never press sent to the player (the REPLACE's new address with them)."""
    text = (
        "PLOT rca seb USE 3\nPRESS rca seb Sure, I set a plot.\nEXTEND scc 12h\nPAUSE rcb\nREPLACE rca steve zoe@x.org"
    )
    parsed = parse_commands(text, gm_games={"rca", "rcb", "scc"})
    assert parsed.player == (Press("rca", "seb", "Sure, I set a plot."),)
    assert [(c.verb, c.game) for c in parsed.gm] == [
        ("PLOT", "rca"),
        ("EXTEND", "scc"),
        ("PAUSE", "rcb"),
        ("REPLACE", "rca"),
    ]
    # A player's press (no GM games) keeps every line under it, whatever it reads like.
    as_player = parse_commands(text)
    press = as_player.player[0]
    assert isinstance(press, Press) and "EXTEND scc 12h" in press.message


@given(lines=st.lists(st.text(max_size=300), max_size=200))
def test_a_press_message_is_capped_and_never_leaks_into_the_orders(lines: list[str]) -> None:
    """Property: whatever follows PRESS (text from a mail: any length, any characters), the
    message is at most MAX_PRESS_LINES lines and MAX_PRESS_CHARS characters, `cut` says whether
    anything was left out, and none of it becomes orders."""
    body = [line.replace("\r", " ") for line in lines]
    body = [line for line in body if line.strip().upper().replace(" ", "") != "ENDPRESS"]
    parsed = parse_commands("\n".join(["PRESS rc1 ALL", *body]))
    press = parsed.player[0]
    assert isinstance(press, Press) and parsed.orders_text == ""
    assert len(press.message.splitlines()) <= MAX_PRESS_LINES and len(press.message) <= MAX_PRESS_CHARS


@given(
    game=st.from_regex(r"[a-z0-9][a-z0-9_-]{0,29}", fullmatch=True),
    address=st.emails(),
    other=st.emails(),
    days=st.integers(0, 10),
)
def test_a_confirmation_code_stands_for_its_own_address_and_days_only(
    game: str, address: str, other: str, days: int
) -> None:
    """Property (bot.mail_in.tokens): a code reads back as itself through a CONFIRM line and a
    subject tag; it verifies for the address it was made for within VALID_DAYS, never for
    another address, another secret, or later."""
    from datetime import UTC, datetime, timedelta

    made = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    code = tokens.make("secret", tokens.OBSERVE, game, made, address)
    assert parse_commands(f"CONFIRM {code}").player == (Confirm(code),)
    assert tokens.in_subject(f"Re: {tokens.subject_tag(code)} Confirm: observe {game}") == code
    read = tokens.parse(code)
    assert read is not None and read.ref == game
    later = made + timedelta(days=days)
    assert tokens.verify(read, ("secret",), later, address.upper()) == (days <= tokens.VALID_DAYS)
    assert not tokens.verify(read, ("another secret",), made, address)
    if other.lower() != address.lower():
        assert not tokens.verify(read, ("secret",), made, other)


def test_a_practice_or_join_inside_a_short_greeting_line_is_read() -> None:
    """A stranger's first mail "Hi! PRACTICE racecraft please" asks for a practice race
    (mail-interface.md: "`PRACTICE <game kind>` (anyone)"): the command inside a short greeting
    line, its verb in capitals, with a please or thanks after it, is read as that command. A
    line whose words inside do not parse, a verb in lower case, or any other verb, is not."""
    assert parse_commands("Hi! PRACTICE racecraft please").player == (Practice("racecraft"),)
    assert parse_commands("Hi PRACTICE racecraft").player == (Practice("racecraft"),)
    assert parse_commands("Hello Flagman, PRACTICE racecraft EASY, thanks!").player == (
        Practice("racecraft", RobotLevel.EASY),
    )
    assert parse_commands("Hey! JOIN rc2 Roger. Thanks!").player == (Join("rc2", "Roger"),)
    assert parse_commands("Hey! JOIN rc2 please").player == (Join("rc2", ""),)
    for line in (
        "hi, practice racecraft please",
        "Hi! PRACTICE some other thing please",
        "Hi all, USE 3",
        "Hi! RESIGN rc1 please",
        "Hi! PRACTICE racecraft " + "x" * 200,
    ):
        assert parse_commands(line).player == (), line
