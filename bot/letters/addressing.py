"""Letters: who gets a mail, and which reply address it carries. Decided here and nowhere else.

mail-interface.md, "Addresses and identity": **a capability goes only to its holder.** A
signed reply address (``flagman+<game>.<seat>.<mac>@...``) acts for its seat or for the GM;
whoever holds it may act. So a mail carries one only when it goes to that seat's or that
GM's registered address, and the two are decided together, from one value, the addressee:

* `ToSeat`: the seat's registered address (the player holding it now), Reply-To the seat's
  signed address;
* `ToGm`: the game's GM at the GM's registered address, Reply-To the GM's signed address;
* `ToAddress`: anyone else (a stranger, a sender who proved nothing, the former holder of a
  replaced seat): the address given, and the bot's plain address to reply to. Nothing signed.

Every outgoing mail is queued through `post` (the only caller of `bot.mail_out.queue.queue`; a test
checks that), so no code path can pair a recipient with someone else's reply address.
`notice` is the short plain-text letter (a title and a paragraph) most answers are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from bot.facts import Claims
from bot.letters.context import bot_context
from bot.mail_in.auth import GM_SEAT
from bot.mail_out import lists
from bot.mail_out import queue as mailout
from bot.mail_out.compose import CalendarPart, HtmlBody, Recipient
from bot.mail_out.lists import ListHeaders
from bot.mail_out.render import RenderedMail
from bot.models import Game, Seat
from bot.safe_text import echo_name
from bot.shell import Shell


@dataclass(frozen=True, slots=True)
class ToSeat:
    """The holder of a seat, at their registered address; the seat's reply address signs."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class ToGm:
    """The GM of a game, at the GM's registered address; the GM's reply address signs."""

    game: Game


@dataclass(frozen=True, slots=True)
class ToAddress:
    """Anyone else: an address that proved nothing. The mail carries no signed address, and
    the name (which may come from the sender's own mail) is shown flattened and capped."""

    address: str
    name: str = ""
    zone: str = ""  # the zone its times are in, when the address is a known person's (a letter about a game says it)


Addressee = ToSeat | ToGm | ToAddress


@dataclass(frozen=True, slots=True)
class Envelope:
    """Where a letter goes and what its Reply-To is, as `post` writes them."""

    to: Recipient
    reply_to: str | None
    game: Game | None


def envelope(shell: Shell, addressee: Addressee) -> Envelope:
    """The recipient and the Reply-To of a letter to `addressee`: the one place they are paired."""
    if isinstance(addressee, ToSeat):
        seat = addressee.seat
        return Envelope(
            Recipient(seat.player.address, seat.player.name),
            shell.reply_address(seat.game.name, seat.name, seat.reply_salt),
            seat.game,
        )
    if isinstance(addressee, ToGm):
        game = addressee.game
        return Envelope(Recipient(game.gm_address, "GM"), shell.reply_address(game.name, GM_SEAT), game)
    return Envelope(Recipient(addressee.address, echo_name(addressee.name)), None, None)


def greeting(addressee: Addressee) -> str:
    """How a letter to `addressee` greets its reader."""
    if isinstance(addressee, ToSeat):
        return addressee.seat.player.name
    if isinstance(addressee, ToGm):
        return "GM"
    return echo_name(addressee.name)


def zone(addressee: Addressee) -> str:
    """The time zone a letter to `addressee` shows its times in, as its sign-off says: the
    seat's player's, the game's for its GM, the person's for the address of a known person
    (one who has left a seat); none for another address."""
    if isinstance(addressee, ToSeat):
        return addressee.seat.player.timezone
    if isinstance(addressee, ToGm):
        return addressee.game.timezone
    return addressee.zone


def list_headers(
    shell: Shell, addressee: Addressee, kind: str, game: Game | None, in_reply_to: str
) -> ListHeaders | None:
    """The list fields of a letter (bot.mail_out.lists): a game's stream and the digest are
    lists, an answer to a mail never is. A reminder carries the code that stops that seat's
    reminders, an observer copy the one that stops that address's copies: each goes only to
    the address whose stream it stops, as every capability goes only to its holder."""
    settings = shell.settings
    if in_reply_to:
        return None
    if kind == lists.DIGEST:
        return ListHeaders(lists.list_id(settings.bot.address, "digest"))
    if kind not in lists.GAME_STREAMS or game is None:
        return None
    code = ""
    secret = settings.secrets.site_secret
    if kind == "reminder" and isinstance(addressee, ToSeat) and secret:
        seat = addressee.seat
        code = lists.reminders_code(secret, game.name, seat.name, seat.player_id, seat.reply_salt)
    elif kind == "observer" and isinstance(addressee, ToAddress) and secret:
        code = lists.observer_code(secret, game.name, addressee.address)
    return ListHeaders(
        lists.list_id(settings.bot.address, game.name),
        lists.unsubscribe_header(settings.bot.address, code) if code else "",
    )


# Answers to mail (no answer is bigger than the mail deserves). The bytes of the
# whole mail as queued, headers included. An answer to an address that proved nothing
# (`ToAddress`: a stranger, a sender who proved no seat) is at most STRANGER_ANSWER_BYTES, well
# under an ordinary turn sheet (about 22 kB); no answer of any kind is over ANSWER_BYTES. The
# lists an answer holds are bounded where they are made ("... and N more"); past a cap the text
# is cut, and says so. SECURITY.md ("Answers by size") and tests/security/test_volume.py.
ANSWER_BYTES = 64 * 1024
STRANGER_ANSWER_BYTES = 8 * 1024


def answer_cap(addressee: Addressee) -> int:
    """The most bytes an answer to `addressee` may have."""
    return STRANGER_ANSWER_BYTES if isinstance(addressee, ToAddress) else ANSWER_BYTES


def post(
    shell: Shell,
    session: Session,
    addressee: Addressee,
    rendered: RenderedMail,
    *,
    kind: str,
    game: Game | None = None,
    in_reply_to: str = "",
    html: HtmlBody | None = None,
    into: mailout.NewRows | None = None,
    calendars: tuple[CalendarPart, ...] = (),
) -> None:
    """Queue one letter. `game` names the game it concerns (for the outbox and bounces) when
    the addressee does not; an answer to a mail quotes its Message-ID in `in_reply_to` (and is
    kept under `answer_cap`); `into`: the outbox rows of a batch, inserted together
    (`bot.mail_out.queue.queue`); `calendars`: the calendar objects it carries
    (bot.mail_out.calendar)."""
    if isinstance(addressee, ToSeat) and addressee.seat.robot:
        return  # a robot seat is never mailed (bot.games.robots): it has no address
    if isinstance(addressee, ToGm) and addressee.game.practice:
        return  # a practice game has no GM (bot.games.practice)
    env = envelope(shell, addressee)
    concerns = env.game if env.game is not None else game
    mailout.queue(
        session,
        shell.settings,
        shell.now(),
        kind=kind,
        to=env.to,
        rendered=rendered,
        game_id=concerns.id if concerns is not None else None,
        reply_to=env.reply_to,
        in_reply_to=in_reply_to,
        auto_replied=bool(in_reply_to),
        html=html,
        into=into,
        lists=list_headers(shell, addressee, kind, concerns, in_reply_to),
        calendars=calendars,
        max_bytes=answer_cap(addressee) if in_reply_to else None,
    )


def queue_rows(session: Session, rows: Sequence[Mapping[str, object]]) -> None:
    """Queue letters `post` built into rows (`into=`) elsewhere, in `session`'s transaction: the
    deadline's, whose letters were built on a snapshot (`bot.games.deadline`)."""
    mailout.insert_rows(session, [dict(row) for row in rows])


def notice(
    shell: Shell,
    session: Session,
    addressee: Addressee,
    title: str,
    text: str,
    *,
    kind: str = "notice",
    error: bool = False,
    game: Game | None = None,
    in_reply_to: str = "",
    into: mailout.NewRows | None = None,
    claims: tuple[Claims, ...] = (),
) -> None:
    """A short letter: a title and a paragraph, to `addressee`, making `claims`."""
    env = envelope(shell, addressee)
    about = env.game if env.game is not None else game
    rendered = shell.renderer.render(
        "notice",
        {
            "bot": bot_context(shell),
            "game_name": about.name if about is not None else "",
            "title": title,
            "text": text,
            "error": error,
            "greeting": greeting(addressee),
            "timezone": zone(addressee) if about is not None else "",
        },
    ).claiming(*claims)
    post(shell, session, addressee, rendered, kind=kind, game=game, in_reply_to=in_reply_to, into=into)


__all__ = [
    "ANSWER_BYTES",
    "STRANGER_ANSWER_BYTES",
    "Addressee",
    "Envelope",
    "ToAddress",
    "ToGm",
    "ToSeat",
    "answer_cap",
    "envelope",
    "greeting",
    "list_headers",
    "notice",
    "post",
    "zone",
]
