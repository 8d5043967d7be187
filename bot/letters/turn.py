"""The letters of a resolved turn, rendered from the plan the game's life worked out: what was
decided (`bot.games.turns.work_out` returns it as `TurnLetters`, beside what resolving the turn
writes) and, here, how it reads and who gets it (`render`, the deadline's letters step): each
seat's results or final result, the GM's copy, the observers' public results and the GM's
stall notice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from bot import store
from bot.facts import Recheck, SeasonTable
from bot.letters import results, reveal, sheets
from bot.letters.cache import LetterCache
from bot.letters.reports import public_report
from bot.mail_out import queue as mailout
from bot.models import Game, OrderSubmission, Turn
from bot.outlook import Outcome
from bot.ratings import Change
from bot.shell import Shell
from rules.api import AnyGame, GameState, Stall


@dataclass(frozen=True, slots=True)
class TurnLetters:
    """What the letters of a resolved turn say, as the game's life decided it: the resolution
    (`outcome`, the game after it: `state`), the turn opened after it (None: the game is
    over), which letter each seat gets (`kind`: "results" or "final"), whether they are held
    for the next turn's (a turn that needs no orders runs at once: Racecraft's final sprint)
    and the turn held before this one (`before`), the orders already on file for the next turn
    (`filed`: its robots' and those a ROLLBACK kept that stand), what became of those kept
    (`recheck`), the season's table, the observers' addresses, the robot seats, the stall
    the GM is told of, and the rating changes shown."""

    rules: AnyGame
    state: GameState
    outcome: Outcome
    next_turn: Turn | None
    kind: str
    held_for_next: bool
    before: sheets.TurnBefore | None
    resolved_subs: Mapping[int, Sequence[OrderSubmission]]  # the resolved turn's submissions, by seat
    filed: store.BySeat
    recheck: Recheck
    season: SeasonTable | None
    observers: tuple[str, ...]
    robots: Mapping[str, str]  # the seats' labels (bot.letters.context.seat_labels)
    stall: Stall | None
    # What the race did to the ratings of the people to be told (a finished rated race: those who
    # opted in and have raced enough), by seat number (`bot.games.ratings.changes_shown`).
    ratings: Mapping[int, Change] = field(default_factory=dict)
    # The seats whose holders opted in (RATING ON) of a finished race between people left
    # unrated because a robot drove a seat of it for a while: their final result says so.
    unrated_robot: frozenset[int] = frozenset()


def render(
    shell: Shell, session: Session, game: Game, turn: Turn, plan: TurnLetters, *, cache: LetterCache
) -> mailout.NewRows:
    """Every letter of the resolved `turn` as `plan` says, rendered (outbox rows, not queued):
    the seats', the GM's, the observers' and the stall notice, in that order."""
    rules, state, outcome, next_turn = plan.rules, plan.state, plan.outcome, plan.next_turn
    reveal.read_gm_orders(session, cache, game, turn, plan.resolved_subs)  # the results say the GM's ORDERs
    cache.labels.setdefault(game.id, plan.robots)  # the seats' labels, worked out with the turn
    mails: mailout.NewRows = []
    for seat in () if plan.held_for_next else store.mailed_seats(game):
        sheets.post_seat_letter(
            shell,
            session,
            game,
            rules,
            state,
            next_turn,
            seat,
            plan.kind,
            outcome,
            resolved=turn,
            subs=plan.filed,
            into=mails,
            cache=cache,
            before=plan.before,
            carried=plan.recheck.of(seat.name),
            season=plan.season,
            rating=plan.ratings.get(seat.id),
            unrated_robot=seat.id in plan.unrated_robot,
        )
    if not plan.held_for_next:
        sheets.post_gm_letter(
            shell,
            session,
            game,
            rules,
            state,
            next_turn,
            plan.kind + "_gm",
            outcome,
            resolved=turn,
            subs=plan.filed,
            into=mails,
            cache=cache,
            before=plan.before,
            recheck=plan.recheck,
            season=plan.season,
        )
    report = public_report(shell.renderer, cache, rules, state, outcome, plan.robots)
    results.post_observer_results(
        shell,
        session,
        game,
        rules,
        report,
        turn,
        next_turn,
        outcome.given_the_default,
        outcome.given_the_plot,
        plan.observers,
        into=mails,
        season=plan.season,
    )
    if plan.stall is not None:
        results.post_stall_notice(shell, session, game, plan.stall, rules.players(state), into=mails)
    return mails


__all__ = ["TurnLetters", "render"]
