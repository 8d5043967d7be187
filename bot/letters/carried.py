"""The words of the orders a ROLLBACK keeps (`bot.games.carried`): to each seat as the rollback
keeps or withdraws them, in its results when they are filed again or withdrawn, and to the GM
both times. Every sentence is a words template (`bot.letters.words`), given the facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.facts import Kept, Recheck, Refiled, Withdrawn
from bot.letters.defaults import gets
from bot.letters.words import say
from bot.outlook import Counts, Source


def _lines(kept: Kept) -> list[str]:
    return kept.text.splitlines()


def kept_to_seat(kept: Kept, *, next_label: str, reopened: str) -> str:
    """To the seat whose orders for `next_label` a ROLLBACK to `reopened` keeps."""
    return say("rollback_kept", orders=_lines(kept), next=next_label, reopened=reopened, by_gm=kept.source == "gm")


def withdrawn_to_seat(kept: Kept, *, label: str, reopened: str) -> str:
    """To the seat whose orders for `label` a ROLLBACK to `reopened` withdraws (the turn is gone)."""
    return say("rollback_withdrawn", orders=_lines(kept), label=label, reopened=reopened, by_gm=kept.source == "gm")


def rollback_to_gm(
    kept: Sequence[Kept], withdrawn: Sequence[tuple[Kept, str]], *, next_label: str, reopened: str
) -> str:
    """The GM's answer to the ROLLBACK: what it kept and what it withdrew, by seat ("" if nothing)."""
    if not kept and not withdrawn:
        return ""
    return say(
        "rollback_gm",
        kept=[{"seat": k.seat, "orders": _lines(k), "by_gm": k.source == "gm"} for k in kept],
        withdrawn=[
            {"seat": k.seat, "orders": _lines(k), "by_gm": k.source == "gm", "label": lb} for k, lb in withdrawn
        ],
        next=next_label,
        reopened=reopened,
    )


def in_results(fact: Refiled | Withdrawn, deadline: str | None) -> str:
    """What the seat's results say of its kept orders: filed again, or withdrawn and why."""
    if isinstance(fact, Refiled):
        return say("carried_refiled", label=fact.label, by_gm=fact.kept.source == "gm")
    return say(
        "carried_withdrawn",
        orders=_lines(fact.kept),
        label=fact.label,
        reason=fact.reason,
        needed=fact.needed,
        deadline=deadline,
        by_gm=fact.kept.source == "gm",
    )


def in_gm_results(recheck: Recheck, label: str) -> str:
    """What the GM's copy of the results says of the kept orders ("" if there were none)."""
    if not recheck:
        return ""
    return say(
        "carried_gm",
        refiled=[
            {"seat": r.kept.seat, "orders": _lines(r.kept), "by_gm": r.kept.source == "gm"} for r in recheck.refiled
        ],
        withdrawn=[
            {"seat": w.kept.seat, "orders": _lines(w.kept), "by_gm": w.kept.source == "gm", "reason": w.reason}
            for w in recheck.withdrawn
        ],
        label=label,
    )


def reopened_to_seat(counts: Counts, *, reopened: str, orders_wanted: bool, dice: Mapping[str, object] | None) -> str:
    """To a seat when a ROLLBACK reopens `reopened`: what happened and, from the outlook's
    `counts` for the seat, what stands for it now (its orders on file, or what it gets if
    nothing arrives: never orders it did not send), where the turn asks orders of it
    (`orders_wanted`); `dice`: the turn's new commitment, if any."""
    return say(
        "rollback_reopened",
        reopened=reopened,
        orders_wanted=orders_wanted,
        on_file=counts.source is Source.ON_FILE,
        orders=counts.text.splitlines(),
        gets=gets(counts),
        dice=dice,
    )


__all__ = ["in_gm_results", "in_results", "kept_to_seat", "reopened_to_seat", "rollback_to_gm", "withdrawn_to_seat"]
