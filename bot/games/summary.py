"""A game as the GM sees it at a glance: the digest's block for it, and a GM's STATUS.

`game_summary` gives the facts (turn, deadline or its absence, who has orders on file and who
has not -- never what --, NMR streaks, plots, vacations ...); the words are the templates'
(`templates/_common/_gm_game.txt`). `attention_lines` gives the "needs your attention" items
(`bot.games.attention`) as the GM reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import outlook, store
from bot.clock import as_utc
from bot.games import carried, observers, turns
from bot.games.attention import Attention
from bot.letters import claims
from bot.letters.context import deadline_text, seat_labels
from bot.models import Game, GameStatus, GmDigest
from bot.schedules import format_local
from bot.shell import Shell


def game_summary(shell: Shell, session: Session, game: Game, zone: str) -> dict[str, Any]:
    """A game's block of the digest and of the GM's STATUS: the values its template shows, and
    under "claims" what they claim of the open turn (`bot.facts.Claims`: its deadline)."""
    rules = turns.rules_of(game)
    # The seats as the letters name them: "robo (robot)", "anna (Kim McDonald)" for a seat
    # handed to another person (docs/DESIGN.md, "Seats that change hands").
    labels = seat_labels(game.seats)

    def shown(name: str) -> str:
        return labels.get(name, name)

    out: dict[str, Any] = {
        "name": game.name,
        "title": rules.title,
        "status": str(game.status),
        "turn": None,
        "deadline": None,
        "ordered": [],
        "incomplete": [],
        "missing": [],
        "held": [],
        "streaks": [],
        "plots": [],
        "kept": [],
        "players": [],
        "min_players": rules.min_players,
        "max_players": rules.max_players,
        "early": outlook.timing(game, None).early,
        "nmr_limit": game.nmr_limit,
        "nmr_action": game.nmr_action,
        "out": [shown(s.name) for s in game.seats if not s.active],
        "press": game.press,
        "observers": len(observers.observers_of(session, game)),
        # VACATION: the seats away now or later, with their days (a missed turn then is no NMR).
        "vacations": [
            f"{shown(s.name)} {s.player.vacation_from.isoformat()} to {s.player.vacation_to.isoformat()}"
            for s in store.active_seats(game)
            if s.player.vacation_from is not None
            and s.player.vacation_to is not None
            and s.player.vacation_to >= shell.now().astimezone(ZoneInfo(s.player.timezone)).date()
        ],
    }
    out["players"] = [
        f"{s.name} (robot)" if s.robot else f"{s.name} <{s.player.address}>" for s in store.active_seats(game)
    ]
    if game.status == GameStatus.SIGNUP:
        return out
    rules, state, turn = turns.current_state(session, game)
    if turn is not None:
        out["turn"] = turn.label
        # A paused game has no deadline running (the tick leaves it be until RESUME).
        out["deadline"] = None if outlook.timing(game, turn).paused else deadline_text(outlook.timing(game, turn), zone)
        # Orders a ROLLBACK kept for the turn after this one: not on file for any turn yet.
        out["kept"] = [shown(k.seat) + (" (your ORDER)" if k.source == "gm" else "") for k in carried.of_turn(turn)]
        seen = outlook.of_turn(game, rules, state, store.turn_submissions(session, turn))
        out.update(who_is_in(seen, shown))
        # What it claims: what counts for each seat, the deadline (none while paused), whom the
        # turn still waits for before it resolves early.
        out["claims"] = (claims.of_outlook(game, turn, seen),)
    else:
        out["result"] = [", ".join(shown(name) for name in place) for place in rules.standings(state)]
        # Finished again after a ROLLBACK reopened it: this result replaces the one sent before.
        out["corrected"] = game.finishes > 1
    out["streaks"] = [f"{shown(s.name)} {s.nmr_streak}" for s in store.active_seats(game) if s.nmr_streak > 0]
    out["plots"] = [shown(name) for name in outlook.plotted(game)]
    return out


def who_is_in(seen: outlook.Outlook, shown: Callable[[str], str]) -> dict[str, list[str]]:
    """Who of the open turn has sent a complete set, an incomplete one, nothing, and whose WAIT
    holds it, as the GM's block lists them (each seat as `shown` names it): the outlook's
    reading (`Outlook.by_status`, `Outlook.held`), handed over whole, never the turn's rows."""
    by_status = seen.by_status
    return {
        "ordered": [shown(name) for name in by_status[outlook.Status.COMPLETE]],
        "incomplete": [shown(name) for name in by_status[outlook.Status.INCOMPLETE]],
        "missing": [shown(name) for name in by_status[outlook.Status.NONE]],
        "held": [shown(name) for name in seen.held],
    }


def last_digest_at(session: Session, address: str) -> datetime | None:
    """When the GM at `address` was last sent a digest (None: never)."""
    sent = session.scalar(
        select(GmDigest.sent_at)
        .where(GmDigest.gm_address == address)
        .order_by(GmDigest.sent_at.desc(), GmDigest.id.desc())
        .limit(1)
    )
    return as_utc(sent) if sent is not None else None


def attention_lines(found: Sequence[Attention], zone: str) -> list[dict[str, object]]:
    """The items as the templates list them: when, which game and seat, what kind, the text."""
    return [
        {
            "when": format_local(item.at, zone),
            "game": item.game,
            "seat": item.seat,
            "kind": item.kind.value,
            "lines": item.text.splitlines() or [""],
        }
        for item in found
    ]


__all__ = ["attention_lines", "game_summary", "last_digest_at", "who_is_in"]
