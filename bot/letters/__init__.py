"""Letters: the mail the bot sends, composed here. `games/` decides what happens; this package
says to whom a letter goes and how it reads.

* `addressing`: who gets a letter and which reply address it carries (`post`, `notice`, and the
  addressees `ToSeat`, `ToGm`, `ToAddress`; the names below are its, for the callers' ease);
* `context`: the one context builder every template starts from (`bot_context`, `game_context`,
  `deadline_text`);
* `sheets`: a seat's and the GM's letters of a turn (turn sheets, results, the final result);
* `results`: the observers' public results and the GM's stall notice;
* `notices`: the reminder, the welcome of a seat's new holder, the codes of JOIN and PRACTICE;
* `reports`, `pictures`, `cache`: the public report, the picture a letter shows and its HTML
  part, and the cache that draws each once per game and turn;
* `reveal`: what a letter says of a turn's dice and receipts (the commitment on a sheet; the
  secret, the receipts and the block of values a player's check reads in the results);
* `records`: the words of a mail's record given as typed facts (a command's label, why the
  ignore policy passed a mail by).

The answers to commands (`bot.commands`, `bot.intake`) and the GM's digest (`bot.gm.digest`)
render their own templates, from the same context builder.
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
    zone,
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
    "zone",
]
