"""The intake: one mail, top to bottom, each step a unit of its own.

    parse         bot.mail_in.parse (in the batch, before this): raw bytes -> Inbound
    (duplicate?)  the same Message-ID and content handled before: nothing to do   (batch)
    ignore        the ignore policy's verdict (bounces, auto-replies, loops ...)    (pipeline)
    authenticate  bot.games.identity: which seat or GM role the mail proved
    limit         the loop limit of that principal: past it, answers are withheld (limits)
    read          its commands (bot.commands), a code the subject brings back     (pipeline)
    act           mail that proved nobody: answered within caps, never acted on but for a
                  code of ours (strangers); mail that proved someone: GM commands, player
                  commands, orders (proven, orders)
    answer        one answer per mail, through bot.letters; the record          (answering)

`Intake.handle` (bot/intake/pipeline.py) reads as that list. A refusal anywhere is an
exception carrying its answer (`bot.fate.Refused`), caught once, in the pipeline; so is a
deliberate ignore. Anything else escapes to the batch, which rolls the mail's savepoint back
and quarantines it. `bot.service` runs batches of mails through here; a mail over the size
limit is never fetched and is recorded by `oversize`.
"""

from bot.intake.batch import Mail, dedupe_hash
from bot.intake.orders import orders_in_subject
from bot.intake.pipeline import Intake

__all__ = ["Intake", "Mail", "dedupe_hash", "orders_in_subject"]
