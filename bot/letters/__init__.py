"""Letters: the mail the bot sends, composed here. `games/` decides what happens; this package
says to whom a letter goes and how it reads.

* `addressing`: who gets a letter and which reply address it carries (`post`, `notice`, and the
  addressees `ToSeat`, `ToGm`, `ToAddress`; the names below are its, for the callers' ease);
* `pictures`: the picture a letter shows and its HTML part, drawn once per game and turn.
"""

from bot.letters.addressing import (
    ANSWER_BYTES,
    STRANGER_ANSWER_BYTES,
    Addressee,
    Envelope,
    ToAddress,
    ToGm,
    ToSeat,
    answer_cap,
    envelope,
    greeting,
    list_headers,
    notice,
    post,
    queue_rows,
)

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
    "queue_rows",
]
