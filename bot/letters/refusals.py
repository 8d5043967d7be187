"""The words of the domain's refusals a GM command's answer or the command line carries.

* A bad duration, schedule, grace period or time (`bot.schedules.DeadlineError`) carries a
  `Problem`, no words: they are the template ``deadline_refused``, rendered here.
* A refusal from the rulebook (`rules/`: a SET of an unknown figure, `FigureError`; an option
  out of range, `OptionError`; an order that cannot stand, `OrderError`) is the rule's own
  sentence: `rules/` is pure and renders no template, so its sentence is a fact, quoted whole by
  the template ``rule_refused``, inside the letter that frames it as the reason (``gm_result``:
  "Refused, nothing was changed:").
* Any other (`GameError`, `SeasonRequestError`, `bot.fate.Refused`) was made from a template
  where it was raised: its text is its words.
"""

from __future__ import annotations

from bot.letters.words import say
from bot.schedules import DAYS, DeadlineError, Problem, shown
from rules.api import FigureError, OptionError, OrderError

RULE_REFUSALS = (FigureError, OptionError, OrderError)
"""The rulebook's refusals that reach a person: their text is the rule's own sentence."""


def deadline_refused(problem: Problem) -> str:
    """One line: what is wrong with the text and what such a text looks like."""
    return say(
        "deadline_refused",
        why=problem.why.value,
        reading=problem.reading.value,
        quoted=shown(problem.text),
        days=problem.days,
        hour=problem.hour,
        minute=problem.minute,
        day=shown(problem.day),
        detail=problem.detail,
        week=DAYS,
    )


def refusal(error: Exception) -> str:
    """The words of a refusal: a `DeadlineError`'s rendered from its facts, the rulebook's
    sentence quoted as the rule's reason, any other's as it says it."""
    if isinstance(error, DeadlineError):
        return deadline_refused(error.problem)
    if isinstance(error, RULE_REFUSALS):
        return say("rule_refused", reason=str(error))
    return str(error)
