"""Did you mean ...? ("Did-you-mean for commands, orders and GM verbs, with the syntax line")."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from bot.commands import GM_COMMANDS, PLAYER_COMMANDS
from bot.commands.suggest import gm_game_hint, vocabulary
from rules import find_game


def _help(name: str) -> str:
    game = find_game(name)
    state = game.new_game([f"p{i}" for i in range(game.min_players)], {}, random.Random(1))
    return game.order_help(state, "p0")


def test_a_near_miss_of_an_order_word_or_a_command_gets_the_word_and_its_syntax() -> None:
    racecraft = vocabulary(order_help=_help("racecraft"))
    assert (racecraft.suggest("USR 3") or "").startswith("did you mean USE? (USE n")
    assert (
        racecraft.suggest("STAUTS")
        == "did you mean STATUS? (STATUS [game]: standings, deadline, who has ordered (never what))"
    )
    assert (vocabulary(order_help=_help("speedphreakz")).suggest("ROUDN 3: F1") or "").startswith(
        "did you mean ROUND? (ROUND <n>:"
    )
    gm = vocabulary(gm=True, games=["sc1"])
    assert (
        gm.suggest("EXTNED sc1 24h") == "did you mean EXTEND? (EXTEND <game> <duration> [FORCE], e.g. EXTEND sc1 24h)"
    )
    assert gm.suggest("PROCES sc1") == "did you mean PROCESS? (PROCESS <game>, e.g. PROCESS sc1)"


def test_no_guess_for_prose_whose_first_word_has_an_apostrophe() -> None:
    """ "I'll put 40 in and stay on A" is prose: its "I'LL" is no near miss of SKILL."""
    circuit = vocabulary(order_help=_help("speed_circuit"))
    for line in ("I'll put 40 in and stay on A, cheers", "I’ll take it easy", "Don't wait for me", "It's 40"):
        assert circuit.suggest(line) is None, line
    assert (circuit.suggest("SKIL 2") or "").startswith("did you mean SKILL?")


def test_no_guess_for_a_line_that_is_simply_not_an_order() -> None:
    racecraft = vocabulary(order_help=_help("racecraft"))
    for line in ("FLY AWAY", "I will be away next week", "US", "", "Cheers OVERTAKE"):
        assert racecraft.suggest(line) is None, line


def test_a_gm_verb_without_its_game_says_which_game_it_needs() -> None:
    assert gm_game_hint("EXTEND 24h", ["sc1", "rc2"]) == (
        "EXTEND names the game first: EXTEND <game> <duration> [FORCE], e.g. EXTEND rc2 24h (your games: rc2, sc1)"
    )
    assert gm_game_hint("EXTEND sc1 24h", ["sc1"]) is None and gm_game_hint("USE 3", ["sc1"]) is None


_WORDS = [c.verb for c in PLAYER_COMMANDS] + [s.verb for s in GM_COMMANDS] + ["USE", "BID", "ROUND", "SPEED"]


@given(
    word=st.sampled_from(_WORDS),
    rest=st.sampled_from(["", " 3", " rc1", " sc1 24h"]),
    typo=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8),
)
def test_a_guess_is_always_a_known_word_and_a_known_word_is_never_corrected(word: str, rest: str, typo: str) -> None:
    """Property: the line's own word, when known, gets no guess; any guess names a word of the
    vocabulary, and is the beginning of the hint."""
    known = vocabulary(order_help=_help("racecraft") + "\n" + _help("speedphreakz"), gm=True, games=["sc1"])
    assert known.suggest(word + rest) is None or word not in known.words
    hint = known.suggest(typo + rest)
    if hint is not None:
        guessed = hint.removeprefix("did you mean ").split("?")[0]
        assert guessed in known.words and guessed != typo


def test_a_two_letter_word_inside_an_order_is_no_guess_for_a_line() -> None:
    """ "use 2 or 3" in SpeedPhreakz (which has no USE) got "did you mean SE?": a heading, a
    word inside START ... FACING <heading>, that no line starts with."""
    speedphreakz = vocabulary(order_help=_help("speedphreakz"))
    assert speedphreakz.suggest("use 2 or 3") is None
    assert speedphreakz.suggest("NWW") is None
    assert (speedphreakz.suggest("STRAT 3,5 FACING N") or "").startswith("did you mean START?")
