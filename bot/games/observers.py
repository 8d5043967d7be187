"""Observers: addresses that get a game's public results by mail (OBSERVE).

An observer is read-only: the address acts for nobody, and what it gets is what anyone may
see -- the public report of each turn (the view for `Viewer.PUBLIC`, the same block every
seat's results carry), the standings and the next deadline. Its mail goes to the plain
address with the bot's plain Reply-To (mail-interface.md: "Answers to strangers, to refused
senders and to observers carry the plain address"): `bot.letters.ToAddress`, never a seat's
or the GM's signed address. OBSERVE from a stranger starts only when the address has
answered a confirmation mail (bot.mail_in.tokens); UNOBSERVE stops it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bot import store
from bot.models import Game, Observer

MAX_OBSERVERS = 200  # per game: results mail is one mail per observer per turn


_KNOWN = "flagman.observers"  # Session.info: game id -> its observers (`read_ahead`)


def observers_of(session: Session, game: Game) -> list[str]:
    """The addresses observing `game`, in the order they started (from `read_ahead` when the
    session read them ahead)."""
    known = store.read_back(session, _KNOWN, game.id, str)
    if known is not None:
        return known
    return list(session.scalars(select(Observer.address).where(Observer.game_id == game.id).order_by(Observer.id)))


def read_ahead(session: Session, game_ids: Iterable[int]) -> None:
    """The observers of `game_ids` in one query, for `observers_of` in this snapshot (`store.read_ahead`)."""
    store.read_ahead(
        session,
        _KNOWN,
        game_ids,
        lambda chunk: (
            (game_id, address)
            for game_id, address in session.execute(
                select(Observer.game_id, Observer.address).where(Observer.game_id.in_(chunk)).order_by(Observer.id)
            )
        ),
    )


def is_observing(session: Session, game: Game, address: str) -> bool:
    return (
        session.scalar(select(Observer.id).where(Observer.game_id == game.id, Observer.address == address.lower()))
        is not None
    )


def observe(session: Session, game: Game, address: str, now: datetime) -> bool:
    """`address` observes `game` from now on; False if it did already."""
    if is_observing(session, game, address):
        return False
    session.add(Observer(game_id=game.id, address=address.lower()[:320], created_at=now))
    session.flush()
    return True


def unobserve(session: Session, address: str, game: Game | None = None) -> list[str]:
    """`address` stops observing `game` (every game, with None): the games it stopped."""
    query = select(Game.name).join(Observer, Observer.game_id == Game.id).where(Observer.address == address.lower())
    if game is not None:
        query = query.where(Observer.game_id == game.id)
    names = sorted(session.scalars(query))
    if names:
        condition = Observer.address == address.lower()
        if game is not None:
            condition = condition & (Observer.game_id == game.id)
        session.execute(delete(Observer).where(condition))
    return names


def move(session: Session, old: str, new: str) -> None:
    """A player's address changed (ADDRESS): what the old one observed, the new one does."""
    for row in session.scalars(select(Observer).where(Observer.address == old.lower())):
        if is_observing(session, session.get_one(Game, row.game_id), new):
            session.delete(row)
        else:
            row.address = new.lower()


__all__ = ["MAX_OBSERVERS", "is_observing", "move", "observe", "observers_of", "unobserve"]
