"""What a player command's handler gets and gives, and the table of handlers.

A handler gets the mail's `Context` (who proved what, and the game and seat it is for) and
returns a `Reply`: the answers it makes (mailed by the intake, as one answer per mail), the
label it leaves in the mail's record, or the mail's whole outcome (`Done`: JOIN). Handlers
register with `handles`; `bot.commands.player` imports every module that holds some, and a
test checks that every class in `PLAYER_COMMANDS` has one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.orm import Session

from bot.answers import Answer, Done, Notice
from bot.commands.grammar import PlayerCommand
from bot.games import turns as G
from bot.letters import Addressee, ToAddress
from bot.mail_in.identity import Who
from bot.mail_in.parse import Inbound
from bot.models import Game, Player, Seat


@dataclass(frozen=True, slots=True)
class Context:
    """The mail a command came in: the shell, the batch's session, the mail, whom it proved,
    and the game and seat it acts in (None where the mail does not settle one)."""

    shell: G.Shell
    session: Session
    inbound: Inbound
    who: Who
    game: Game | None
    seat: Seat | None

    @property
    def stranger(self) -> bool:
        """The mail proved nobody: its answers go to its From, greet nobody by name and repeat
        none of its words (issue 14: a forged From must not carry text to a third party)."""
        return self.who.seat is None and not self.who.gm_of and not self.who.games

    @property
    def to(self) -> Addressee:
        """Where an answer goes: the registered address of whom the mail proved, else its From."""
        return ToAddress(self.inbound.sender) if self.stranger else self.who.holder(self.inbound)

    @property
    def address(self) -> str:
        """The address the sender acts from: the registered one if the mail proved a seat or
        the GM, else its From."""
        if self.who.seat is not None:
            return self.who.seat.player.address
        if self.who.gm_of:
            return self.who.gm_of[0].gm_address
        return self.inbound.sender  # a stranger's From, or the registered From that proved several seats

    def seat_in(self, game: Game) -> Seat | None:
        """The sender's active seat in `game`, if the mail proved it (through its reply
        address, or from the registered From with a proof that covers the game)."""
        seat = self.who.seat
        if seat is not None and seat.game_id == game.id and seat.active:
            return seat
        if any(g.id == game.id for g in self.who.games):
            return next((s for s in game.seats if s.active and s.player.address == self.inbound.sender), None)
        return None

    def player(self) -> Player | None:
        """The player the mail proved (a seat's holder), whichever of their seats it was for."""
        if self.who.seat is not None:
            return self.who.seat.player
        for game in self.who.games:
            seat = self.seat_in(game)
            if seat is not None:
                return seat.player
        return None


@dataclass(frozen=True, slots=True)
class Reply:
    """What a command made: answers to mail, a label for the record, or the mail's outcome."""

    answers: tuple[Answer, ...] = ()
    label: str = ""
    done: Done | None = None  # the mail's outcome: no further command of it is carried out


C = TypeVar("C", bound=PlayerCommand)
Handler = Callable[[Context, PlayerCommand], Reply]
HANDLERS: dict[type, Handler] = {}


def handles(command_class: type[C]) -> Callable[[Callable[[Context, C], Reply]], Callable[[Context, C], Reply]]:
    def register(handler: Callable[[Context, C], Reply]) -> Callable[[Context, C], Reply]:
        HANDLERS[command_class] = handler  # type: ignore[assignment]
        return handler

    return register


def run(ctx: Context, command: PlayerCommand) -> Reply:
    """Carry out one player command."""
    return HANDLERS[type(command)](ctx, command)


def refusal(ctx: Context, title: str, text: str, *, kind: str = "notice", label: str = "") -> Reply:
    """A command refused: its answer, marked as an error, and the label for the record."""
    return Reply((Notice(ctx.to, title, text, kind=kind),), label=label)


def which_game(inbound: Inbound, who: Who) -> Notice:
    """The answer when a mail cannot be placed in one game."""
    names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
    text = ("You play in more than one game, so the bot cannot tell which one this mail is for: "
            + ", ".join(names) + ". Reply to a mail of that game (its reply address names the game), or put "
            "the game in brackets in the subject, e.g. [" + (names[0] if names else "rc1") + "].")
    # Only a sender whose From proved several seats (or GM roles) gets here: that From is
    # their registered address, and the answer carries no signed address.
    return Notice(ToAddress(inbound.sender, inbound.sender_name), "Which game?", text)


__all__ = ["HANDLERS", "Context", "Reply", "handles", "refusal", "run", "which_game"]
