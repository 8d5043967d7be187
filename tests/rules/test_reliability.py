"""A person's reliability record (rules.reliability; docs/reliability.md), from counts alone.

The requirement: "A reliability record kept apart (on-time ratio, NMRs, games abandoned, seats taken
over as a substitute credited), visible to the player (`RECORD` by mail) and usable by a GM as
an entry gate (`--min-reliability`), as njudge's SET ONTIMERAT."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.reliability import HeldTurn, Reliability, admits, parse_minimum, record_of

ON_TIME = HeldTurn(on_time=True, nmr=False)
NMR = HeldTurn(on_time=False, nmr=True)
BY_GM = HeldTurn(on_time=False, nmr=False)  # the GM's ORDER stood in

turns_held = st.lists(st.sampled_from([ON_TIME, NMR, BY_GM]), max_size=60)


def test_the_on_time_ratio_is_own_orders_over_turns_held() -> None:
    # The task: "on-time ratio (turns with the person's own orders before the deadline / turns
    # they held a seat)".
    found = record_of([ON_TIME, ON_TIME, ON_TIME, NMR, BY_GM], abandoned=1, substituted=2, games=2)
    assert found == Reliability(turns=5, on_time=3, nmrs=1, abandoned=1, substitute=2, games=2)
    assert found.ratio == Fraction(3, 5)
    assert found.shown_ratio() == "0.60"


def test_a_person_with_no_turns_has_no_ratio_and_passes_every_gate() -> None:
    # docs/reliability.md: "a person with no record yet is let in".
    assert Reliability().ratio is None
    assert Reliability().shown_ratio() == "none yet"
    assert admits(Reliability(), Fraction(1))


def test_the_gate_refuses_below_its_minimum_and_admits_at_it() -> None:
    four_of_five = record_of([ON_TIME] * 4 + [NMR])
    assert admits(four_of_five, parse_minimum("0.8"))
    assert admits(four_of_five, parse_minimum("80%"))
    assert not admits(four_of_five, parse_minimum("0.81"))
    assert admits(four_of_five, None)


def test_the_shown_ratio_rounds_down_so_a_shown_pass_is_a_pass() -> None:
    two_of_three = record_of([ON_TIME, ON_TIME, NMR])
    assert two_of_three.shown_ratio() == "0.66"
    assert record_of([ON_TIME]).shown_ratio() == "1.00"


@pytest.mark.parametrize("text", ["", "x", "1.5", "-0.1", "120%", "1/0"])
def test_a_minimum_outside_0_to_1_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="from 0 to 1"):
        parse_minimum(text)


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        record_of([], abandoned=-1)


@given(turns_held)
def test_every_turn_held_is_on_time_an_nmr_or_the_gms_and_the_ratio_is_in_0_to_1(turns: list[HeldTurn]) -> None:
    found = record_of(turns)
    assert found.turns == len(turns)
    assert found.on_time + found.nmrs + sum(1 for t in turns if t == BY_GM) == found.turns
    assert found.ratio is None or 0 <= found.ratio <= 1


@given(st.data(), turns_held)
def test_the_record_does_not_depend_on_the_order_of_the_turns(data: st.DataObject, turns: list[HeldTurn]) -> None:
    shuffled = data.draw(st.permutations(turns))
    assert record_of(shuffled) == record_of(turns)


@given(turns_held, st.fractions(min_value=0, max_value=1))
def test_an_on_time_turn_never_lowers_the_ratio_nor_shuts_a_gate(turns: list[HeldTurn], minimum: Fraction) -> None:
    before, after = record_of(turns), record_of([*turns, ON_TIME])
    assert before.ratio is None or after.ratio is not None and after.ratio >= before.ratio
    assert not admits(before, minimum) or admits(after, minimum)


@given(turns_held, st.fractions(min_value=0, max_value=1), st.fractions(min_value=0, max_value=1))
def test_a_gate_that_admits_also_admits_under_any_lower_gate(turns: list[HeldTurn], a: Fraction, b: Fraction) -> None:
    low, high = sorted((a, b))
    found = record_of(turns)
    assert not admits(found, high) or admits(found, low)
    assert found.shown_ratio() == "none yet" or Fraction(found.shown_ratio()) <= (found.ratio or 0)
