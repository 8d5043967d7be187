"""The letters a resolved turn sends besides the seats' and the GM's own (`bot.letters.sheets`):
the observers' public results (`post_observer_results`) and the GM's notice of a race that no
longer gets nearer its end (`post_stall_notice`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy.orm import Session

from bot import store
from bot.facts import SeasonTable
from bot.letters.addressing import ToAddress, ToGm, notice, post
from bot.letters.context import deadline_text, game_context, seat_labels
from bot.letters.sheets import season_words
from bot.mail_out import queue as mailout
from bot.mail_out.render import PublicReport
from bot.models import Game, Turn
from bot.outlook import timing
from bot.shell import Shell
from rules.api import AnyGame, Stall


def post_observer_results(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    report: PublicReport,
    resolved: Turn,
    next_turn: Turn | None,
    defaulted: Sequence[str],
    plotted: Sequence[str],
    addresses: Sequence[str],
    *,
    into: mailout.NewRows | None = None,
    season: SeasonTable | None = None,
) -> int:
    """The public results of `resolved` to each observer of `game` (the final result when the
    game ended with it): one mail each, to the plain address, `addresses` (the game's observers,
    `bot.games.observers.observers_of`); `season`: the table of the season it is a race of.
    Returns how many."""
    if not addresses:
        return 0
    deadline = None
    if next_turn is not None and rules.expected_players(rules.load_state(next_turn.state)):
        deadline = deadline_text(timing(game, next_turn), game.timezone)
    context = {
        **game_context(shell, game, rules),
        "report": report,
        "view": report.view,
        "resolved": {
            "number": resolved.number,
            "label": resolved.label,
            "defaulted": list(defaulted),
            "plotted": list(plotted),
            "correction": bool(resolved.corrections),
        },
        "next": {"label": next_turn.label, "deadline": deadline} if next_turn is not None else None,
        "timezone": game.timezone,
        "robots": seat_labels(game.seats),
        "season": season_words(season),
    }
    rendered = shell.renderer.render("observer_results", context, game=game.kind)
    for address in addresses:
        post(shell, session, ToAddress(address), rendered, kind="observer", game=game, into=into)
    return len(addresses)


def post_stall_notice(
    shell: Shell, session: Session, game: Game, stall: Stall, runners: Collection[str], *, into: mailout.NewRows
) -> None:
    """A race that no longer gets nearer its end (`Game.stall`: SpeedPhreakz after the rounds
    its rules document, Speed Circuit while a car stands still): the GM is told, with the
    command that ends it (naming the stalled seat where the figure is that seat's)."""
    seat = stall.seat or next((s.name for s in store.active_seats(game) if s.name in runners), None)
    if seat is None:
        return
    command = f"SET {game.name} {seat} {stall.figure} {stall.value}"
    anyone = "" if stall.seat else " (any seat's name will do)"
    # (the command inside a sentence: no line of the bot's own mail reads as a command when quoted, testing.md)
    text = (
        f"{stall.reason}\n\nTo end the stall, send the command {command}{anyone}. It "
        f"{stall.ends}. The command PROCESS {game.name} then resolves that round at once. You are told again if "
        "the race stays stalled."
    )
    notice(shell, session, ToGm(game), "The race is stalled", text, kind="stall", game=game, into=into)
