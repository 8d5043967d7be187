"""Order mails as real mail clients write them, for the benchmarks.

Each mail is a player's reply to the bot's turn sheet, sent to the seat's signed reply
address, ordering ``USE n`` for Racecraft's first turn. The styles cover what arrives in
practice (shared/design/testing.md, "What real mail looks like"): top-posts over a ``>``
quote (multipart/alternative, base64), Outlook's header block without ``>`` in
windows-1252 quoted-printable, HTML-only mail, bottom-posts in format=flowed with a
signature, ISO-8859-1 base64, "Sent from my iPhone", and an explicit ORDERS..END block.
The quoted turn sheet carries an order-like line (``USE 5``), so a leaking quote would show.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage

_WIRE = policy.SMTP  # CRLF line ends, as an MTA hands mail over

SHEET = (
    "Hello {name},\n\n"
    "Racecraft {game}, Turn 1 of 5: start.\n"
    "You have 10 EP. Send one order (upper or lower case):\n"
    "  USE n (or A n, BID n or just n): spend n EP; your score this turn is n; n from 0 to 10.\n"
    "Turn 1 is the start: the runners line up by the EP they use, most first.\n"
    "If no order arrives: USE 5 (half your EP, rounded down).\n\n"
    "Deadline: Wed 2 Dec 2026 18:00 GMT. Reply to this mail with your orders.\n"
    "-- \nFlagman, race director for {game}."
)


@dataclass(frozen=True, slots=True)
class Seat:
    """A registered player's seat: who writes, and the signed address they reply to."""

    game: str
    seat: str
    address: str
    name: str
    reply_address: str


def _base(seat: Seat, serial: int, bot_name: str = "Flagman") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = f"{seat.name} <{seat.address}>"
    msg["To"] = f"{bot_name} <{seat.reply_address}>"
    msg["Subject"] = f"Re: [{seat.game}] Turn 1 of 5: start"
    msg["Date"] = f"Tue, 01 Dec 2026 09:{serial // 60 % 60:02d}:{serial % 60:02d} +0100"
    msg["Message-ID"] = f"<bench-{serial}.{seat.seat}@{seat.address.partition('@')[2]}>"
    msg["In-Reply-To"] = f"<turn_sheet-{seat.game}.{seat.seat}@bench.test>"
    msg["References"] = msg["In-Reply-To"]
    msg["MIME-Version"] = "1.0"
    return msg


def _sheet(seat: Seat) -> str:
    return SHEET.format(name=seat.name, game=seat.game)


def _quoted(text: str) -> str:
    return "\n".join(("> " + line) if line else ">" for line in text.splitlines())


def gmail_top(seat: Seat, serial: int, order: str) -> EmailMessage:
    """Gmail: top-post, multipart/alternative (base64), "On ... wrote:" over a ``>`` quote."""
    msg = _base(seat, serial)
    attribution = "On Mon, Nov 30, 2026 at 6:00 PM Flagman <flagman@bench.test> wrote:"
    text = f"{order}\n\nCheers!\n\n{attribution}\n\n{_quoted(_sheet(seat))}\n"
    msg.set_content(text, charset="utf-8", cte="base64")
    quote = "<br>".join(html.escape(line) for line in _sheet(seat).splitlines())
    markup = (
        f'<div dir="ltr"><div>{html.escape(order)}</div><div>Cheers!</div></div><br>'
        f'<div class="gmail_quote"><div dir="ltr" class="gmail_attr">{html.escape(attribution)}<br></div>'
        f'<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">{quote}</blockquote></div>'
    )
    msg.add_alternative(markup, subtype="html", charset="utf-8", cte="base64")
    return msg


def outlook_desktop(seat: Seat, serial: int, order: str) -> EmailMessage:
    """Outlook: underscore rule and a From/Sent/To/Subject block, no ``>``; windows-1252 QP."""
    msg = _base(seat, serial)
    msg["Thread-Topic"] = f"[{seat.game}] Turn 1 of 5: start"
    msg["X-MS-Has-Attach"] = ""
    text = (
        f"Hi,\r\n\r\n{order}\r\n\r\nRegards \u2013 Jos\u00e9\r\n\r\n" + "_" * 32 + "\r\n"
        "From: Flagman <flagman@bench.test>\r\nSent: Monday, November 30, 2026 6:00 PM\r\n"
        f"To: {seat.name} <{seat.address}>\r\nSubject: [{seat.game}] Turn 1 of 5: start\r\n\r\n"
        + _sheet(seat).replace("\n", "\r\n")
        + "\r\n"
    )
    msg.set_content(text, charset="windows-1252", cte="quoted-printable")
    return msg


def html_only(seat: Seat, serial: int, order: str) -> EmailMessage:
    """A web client sending text/html only: the reply, then a gmail_quote blockquote."""
    msg = _base(seat, serial)
    quote = "<br>".join(html.escape(line) for line in _sheet(seat).splitlines())
    markup = (
        f'<html><body><div dir="ltr"><div>{html.escape(order)}</div><div><br></div>'
        f'<div>Good luck all \u2764</div></div><br><div class="gmail_quote">'
        f'<div dir="ltr" class="gmail_attr">On Mon, Nov 30, 2026 at 6:00 PM Flagman '
        f'&lt;flagman@bench.test&gt; wrote:<br></div><blockquote class="gmail_quote" '
        f'style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204)">{quote}'
        f"</blockquote></div></body></html>"
    )
    msg.set_content(markup, subtype="html", charset="utf-8", cte="base64")
    return msg


def thunderbird_bottom(seat: Seat, serial: int, order: str) -> EmailMessage:
    """Thunderbird: bottom-post under the quote, format=flowed, a ``-- `` signature."""
    msg = _base(seat, serial)
    text = (
        f"On 30/11/2026 18:00, Flagman wrote:\n{_quoted(_sheet(seat))}\n\n{order}\n\n"
        "See you at the finish line, this time I will not \nbe last.\n\n-- \n"
        f"{seat.name}\nhttps://example.net/~racer\n"
    )
    msg.set_content(text, charset="utf-8", cte="8bit")
    msg.set_param("format", "flowed")
    return msg


def latin1_french(seat: Seat, serial: int, order: str) -> EmailMessage:
    """A French client: ISO-8859-1 in base64, "Le ... a écrit :"."""
    msg = _base(seat, serial)
    text = (
        f"Bonjour,\n\n{order}\n\nAmitiés, à bientôt\n\n"
        f"Le lun. 30 nov. 2026 à 18:00, Flagman <flagman@bench.test> a écrit :\n"
        f"{_quoted(_sheet(seat))}\n"
    )
    msg.set_content(text, charset="iso-8859-1", cte="base64")
    return msg


def iphone(seat: Seat, serial: int, order: str) -> EmailMessage:
    """iPhone: order, "Sent from my iPhone", a QP attribution and ``>`` quote."""
    msg = _base(seat, serial)
    text = (
        f"{order}\n\nSent from my iPhone\n\n"
        f"> On 30 Nov 2026, at 18:00, Flagman <flagman@bench.test> wrote:\n>\n{_quoted(_sheet(seat))}\n"
    )
    msg.set_content(text, charset="utf-8", cte="quoted-printable")
    return msg


def orders_block(seat: Seat, serial: int, order: str) -> EmailMessage:
    """An explicit ORDERS..END block amid chatter, over an "Original Message" quote."""
    msg = _base(seat, serial)
    text = (
        f"Here goes nothing.\n\nORDERS\n{order}\nEND\n\nNo more chat from me this turn.\n\n"
        "-----Original Message-----\nFrom: Flagman\n\n" + _sheet(seat) + "\n"
    )
    msg.set_content(text, charset="utf-8", cte="8bit")
    return msg


STYLES: tuple[Callable[[Seat, int, str], EmailMessage], ...] = (
    gmail_top,
    outlook_desktop,
    html_only,
    thunderbird_bottom,
    latin1_french,
    iphone,
    orders_block,
)


def order_mail(seat: Seat, serial: int) -> tuple[str, bytes]:
    """(Message-ID, wire bytes) of the `serial`-th order mail, in a style chosen by `serial`."""
    order = f"USE {serial % 11}" if serial % 3 else f"use {serial % 11}"
    msg = STYLES[serial % len(STYLES)](seat, serial, order)
    return str(msg["Message-ID"]), msg.as_bytes(policy=_WIRE)


def order_mails(seats: list[Seat], count: int, start: int = 0) -> Iterator[tuple[Seat, str, bytes]]:
    """`count` order mails, round-robin over the seats (so no sender writes more than needed)."""
    for serial in range(start, start + count):
        seat = seats[serial % len(seats)]
        message_id, data = order_mail(seat, serial)
        yield seat, message_id, data
