"""Who sent a mail, and for which seat or GM role: the authentication step of the intake.

The proofs themselves (signed reply addresses, passwords, Authentication-Results) are
`bot.mail_in.auth`'s; this module weighs them against the seats and games in the database.
mail-interface.md, "Addresses and identity": a signed reply address acts for its seat from any
address; the plain address needs the registered From and a proof the configuration accepts;
the GM's powers need two proofs.
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import store
from bot.letters import Addressee, ToAddress, ToGm, ToSeat
from bot.mail_in.auth import (
    GM_SEAT,
    authentication_passes,
    parse_tag,
    password_in_text,
    passwords_in_text,
    tag_in_recipients,
    tag_in_subject,
    verify_tag,
)
from bot.mail_in.parse import Inbound
from bot.mailboxes import mailbox
from bot.models import Game, GameStatus, Player, Seat
from bot.shell import Shell


class Proof(enum.StrEnum):
    """How a mail proved whom it speaks for (mail-interface.md, "Addresses and identity"); PING
    says it in words (bot.commands.streams)."""

    NONE = "nothing"
    SIGNED = "signed reply address"  # the seat's signed reply address, from any From
    GM_FROM = "GM reply address and registered From"  # the GM's two proofs
    GM_PASSWORD = "GM reply address and GM password"
    PASSWORD = "password"  # the registered From and the seat's (or the GM's) PASSWORD line
    SUBJECT = "signed tag in the subject"  # the registered From and the signed tag in the subject
    DMARC = "dmarc"  # the registered From, vouched for by our receiving server


@dataclass
class Who:
    """Who a mail speaks for, after authentication."""

    games: list[Game] = field(default_factory=list)  # games the sender may act in
    seat: Seat | None = None
    # Every seat the mail's proof covers (ADDRESS moves these, no more): the seat of
    # the signed reply address; the seats whose passwords the mail carries; every seat of the
    # From when our receiving server vouched for it (DMARC).
    seats: list[Seat] = field(default_factory=list)
    gm_of: list[Game] = field(default_factory=list)
    claimed: list[Seat] = field(default_factory=list)  # seats whose From matched but proof failed
    claimed_gm: list[Game] = field(default_factory=list)  # games whose GM the mail claims to be, unproven
    proof: Proof = Proof.NONE  # which proof it was

    @property
    def principal(self) -> str:
        """Whom the mail proved itself to be: ``seat:<id>``, ``practice:<mailbox>`` (a seat of a
        practice game: every practice game of one mailbox together, `bot.mailboxes`),
        ``gm:<address>``, or "" (nobody).

        Rate limits count per principal, so mail that proved nothing (a forged From) never
        spends the allowance of the seat or GM it pretends to be, and a person's practice games
        share one allowance (a second practice race is no second allowance)."""
        if self.seat is not None and self.seat.game.practice:
            return f"practice:{mailbox(self.seat.player.address) or self.seat.player.address}"
        if self.seat is not None:
            return f"seat:{self.seat.id}"
        if self.gm_of:
            return f"gm:{self.gm_of[0].gm_address}"
        return ""

    def holder(self, inbound: Inbound) -> Addressee:
        """Where an answer to an authenticated mail goes: the seat's or the GM's registered
        address (never merely the From: a mail through a signed address may come from anywhere)."""
        if self.seat is not None:
            return ToSeat(self.seat)
        if self.gm_of:
            return ToGm(self.gm_of[0])
        return ToAddress(inbound.sender, inbound.sender_name)


def _same(given: str, secret: str) -> bool:
    """A password check that takes the same time however much of it is right."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode("utf-8", "surrogatepass"))


GameLookup = Callable[[str], Game | None]  # a game by name (the intake's memo of the batch)
SeatLookup = Callable[[Game, str], Seat | None]  # a game's seat by name (the same)


def verified_tag(
    shell: Shell,
    session: Session,
    tag: str | None,
    find_game: GameLookup | None = None,
    find_seat: SeatLookup = store.seat_named,
) -> tuple[Game, Seat | None] | None:
    """The game and seat (None: the GM) a signed tag stands for, if its MAC verifies.

    A seat's MAC covers its reply salt, renewed when the seat changes hands, so the old
    holder's reply address no longer verifies.
    """
    claimed = parse_tag(tag) if tag else None
    if claimed is None or tag is None:
        return None
    game = find_game(claimed.game) if find_game is not None else store.find_game_row(session, claimed.game)
    if game is None:
        return None
    if claimed.seat == GM_SEAT:
        return (game, None) if verify_tag(tag, shell.secrets_in_force) else None
    seat = find_seat(game, claimed.seat)
    if seat is None or verify_tag(tag, shell.secrets_in_force, seat.reply_salt) is None:
        return None
    return game, seat


def identify(
    shell: Shell,
    session: Session,
    inbound: Inbound,
    find_game: GameLookup | None = None,
    find_seat: SeatLookup = store.seat_named,
) -> Who:
    """Who `inbound` proved itself to be (mail-interface.md, "Addresses and identity")."""
    tag = tag_in_recipients(shell.settings.bot.address, inbound.recipients)
    signed = verified_tag(shell, session, tag, find_game, find_seat)
    if signed is not None:
        game, seat = signed
        if seat is None:
            return _through_gm_address(session, inbound, game)
        if seat.active:
            return Who(seat=seat, games=[game], seats=[seat], proof=Proof.SIGNED)
    return _from_registered_address(shell, session, inbound, find_game, find_seat)


def _through_gm_address(session: Session, inbound: Inbound, game: Game) -> Who:
    """Who a mail through the GM's signed reply address of `game` proved itself to be."""
    who = Who()
    # The GM's powers need two proofs (defence in depth): the GM's signed reply
    # address *and* the GM's registered From, or the GM password in the mail.
    # A GM reply address that leaked to someone else gives them nothing.
    password = password_in_text(inbound.reply_text or inbound.text)
    from_gm = bool(inbound.sender) and inbound.sender == game.gm_address.lower()
    if from_gm:
        # Both proofs hold for the GM's address itself, so the mail speaks for every
        # running game of that GM: a reply to the digest, which covers them all, signs
        # with the first game's GM address; the address alone, or the From
        # alone, still proves nothing.
        others = session.scalars(
            select(Game)
            .where(Game.gm_address == game.gm_address, Game.status != GameStatus.FINISHED, Game.id != game.id)
            .order_by(Game.id)
        )
        who.gm_of = [game, *others]
        who.games, who.proof = list(who.gm_of), Proof.GM_FROM
    elif password is not None and _same(password, game.gm_secret):
        who.gm_of, who.games, who.proof = [game], [game], Proof.GM_PASSWORD
    else:
        who.claimed_gm = [game]
    return who


def _from_registered_address(
    shell: Shell,
    session: Session,
    inbound: Inbound,
    find_game: GameLookup | None,
    find_seat: SeatLookup,
) -> Who:
    """Who a mail from a registered address (not through a seat's signed reply address)
    proved itself to be: the From and a proof the configuration accepts (a password, the
    signed tag in the subject, our server's DMARC pass)."""
    who = Who()
    sender = inbound.sender
    if not sender:
        return who
    seats = list(
        session.scalars(
            select(Seat)
            .join(Player)
            .join(Game)
            .where(Player.address == sender, Seat.active.is_(True), Game.status != GameStatus.FINISHED)
        )
    )
    gm_games = list(session.scalars(select(Game).where(Game.gm_address == sender, Game.status != GameStatus.FINISHED)))
    if not seats and not gm_games:
        return who
    accept = shell.settings.auth.accept
    # The password may sit outside an ORDERS ... END block, so look in all the sender wrote.
    # Several PASSWORD lines may prove several seats (one for each game a mail acts in).
    passwords = passwords_in_text(inbound.reply_text or inbound.text) if "password" in accept else []
    password = passwords[0] if passwords else None
    subject_tag = tag_in_subject(inbound.subject) if "password" in accept else None
    subject_proof = verified_tag(shell, session, subject_tag, find_game, find_seat)
    subject_signed = parse_tag(subject_tag) if subject_tag and subject_proof else None
    dmarc = "dmarc" in accept and authentication_passes(inbound.auth_results, shell.settings.auth.authserv_id, sender)
    proven_seats = [
        s
        for s in seats
        if dmarc
        or any(_same(p, s.secret) for p in passwords)
        or (subject_signed is not None and subject_signed.game == s.game.name and subject_signed.seat == s.name)
    ]
    proven_gm = [
        g
        for g in gm_games
        if dmarc
        or any(_same(p, g.gm_secret) for p in passwords)
        or (subject_signed is not None and subject_signed.game == g.name and subject_signed.seat == GM_SEAT)
    ]
    who.claimed = [s for s in seats if s not in proven_seats]
    who.claimed_gm = [g for g in gm_games if g not in proven_gm]
    if dmarc and (proven_gm or proven_seats):
        who.proof = Proof.DMARC
    elif password is not None and (
        any(_same(p, s.secret) for p in passwords for s in proven_seats)
        or any(_same(p, g.gm_secret) for p in passwords for g in proven_gm)
    ):
        who.proof = Proof.PASSWORD
    elif proven_gm or proven_seats:
        who.proof = Proof.SUBJECT
    if proven_gm:
        who.gm_of = proven_gm
    if proven_seats:
        chosen = choose_seat(proven_seats, inbound.subject)
        who.games = [s.game for s in proven_seats]
        who.seat, who.seats = chosen, proven_seats
    return who


def choose_seat(seats: list[Seat], subject: str) -> Seat | None:
    """The seat meant: the only one, or the one whose game is tagged in the subject."""
    if len(seats) == 1:
        return seats[0]
    lowered = subject.lower()
    tagged = [s for s in seats if f"[{s.game.name}]" in lowered or f"[{s.game.name}." in lowered]
    return tagged[0] if len(tagged) == 1 else None


__all__ = ["Proof", "Who", "choose_seat", "identify", "verified_tag"]
