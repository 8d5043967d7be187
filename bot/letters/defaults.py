"""What a seat gets if nothing arrives, in the words every letter uses (the turn sheet, the
results, a reminder, a refusal, ORDERS): one sentence from the outlook's `Counts`, so a mail
states one default, once, and where the GM's plot counts it names the game's own default it
replaces ("USE 2, the GM's plot (the game's own default would be USE 3)")."""

from __future__ import annotations

from bot.letters.words import say
from bot.outlook import Counts, Source


def gets(counts: Counts) -> str:
    """The words after "If nothing arrives by ..., ": the orders that count and their source."""
    return say(
        "sheet_gets",
        orders=counts.text.splitlines(),
        plot=counts.source is Source.PLOT,
        game_default=counts.game_default.splitlines(),
    )
