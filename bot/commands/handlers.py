"""What a player command's handler gets and gives.

A handler (a plain function of `bot.commands.player`, `anyone`, `account`, `press` or
`streams`, bound to its command class in `bot.commands.registry`) gets the mail's
`CommandContext` (who proved what, and the game and seat it is for) and returns a `Reply`: the
answers it makes (mailed by the intake, as one answer per mail) and the label it leaves in the
mail's record. A command refused raises `ctx.refuse(...)` (`bot.fate.Refused`), which the
runner turns into the command's reply: the mail's other commands go on.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from bot.fate import Answer, Notice, Refused
from bot.games.identity import Who
from bot.letters import Addressee, ToAddress
from bot.letters.words import say
from bot.mail_in.parse import Inbound
from bot.models import Game, Player, Seat
from bot.shell import Shell


@dataclass(frozen=True, slots=True)
class CommandContext:
    """The mail a command came in: the shell, the batch's session, the mail, whom it proved,
    and the game and seat it acts in (None where the mail does not settle one); `orders_follow`:
    the mail carries orders for `seat` too, taken after its commands (their confirmation then
    says what the turn does next, once the whole mail is applied)."""

    shell: Shell
    session: Session
    inbound: Inbound
    who: Who
    game: Game | None
    seat: Seat | None
    orders_follow: bool = False
    words: str = ""  # the mail's words beside its commands (a RESIGN passes them on to the GM)

    @property
    def stranger(self) -> bool:
        """The mail proved nobody: its answers go to its From, greet nobody by name and repeat
        none of its words (a forged From must not carry text to a third party)."""
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

    def refuse(self, title: str, text: str, *, kind: str = "notice", label: str = "") -> Refused:
        """The command is refused: raise this. Its answer (an error, to `to`) and the label for
        the mail's record; the runner (`bot.commands.registry.run`) makes it the command's reply."""
        return Refused(label or title, Notice(self.to, title, text, kind=kind), label=label)

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
    """What a command made: its answers to the mail, and a label for the mail's record."""

    answers: tuple[Answer, ...] = ()
    label: str = ""
    # The turns (game id, turn id) the command releases to resolve at once (NOWAIT, the last
    # hold of a turn with every order in): its answer says they are resolved; the pipeline does it.
    resolves: tuple[tuple[int, int], ...] = ()


def which_game(inbound: Inbound, who: Who) -> Notice:
    """The answer when a mail cannot be placed in one game."""
    names = sorted({g.name for g in who.games} | {g.name for g in who.gm_of})
    text = say("commands_which_game", games=names)
    # Only a sender whose From proved several seats (or GM roles) gets here: that From is
    # their registered address, and the answer carries no signed address.
    return Notice(ToAddress(inbound.sender, inbound.sender_name), say("commands_which_game_title"), text)


__all__ = ["CommandContext", "Reply", "which_game"]
