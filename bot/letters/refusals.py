"""The words of the domain's refusals that carry facts, not words.

A bad duration, schedule, grace period or time (`bot.schedules.DeadlineError`) carries a
`Problem`; its words are the template ``deadline_refused``, rendered here. `refusal` gives the
words of any refusal a GM command's answer or the command line carries: a `DeadlineError`'s from
its facts, any other's its own text (made from a template where it was raised: `GameError`,
`SeasonRequestError`, `Refused`; or the rulebook's own sentence, from `rules/`: `FigureError`,
`OptionError`, which the answer's template frames as the rule's reason).
"""

from __future__ import annotations

from bot.letters.words import say
from bot.schedules import DAYS, DeadlineError, Problem, shown


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
    """The words of a refusal: a `DeadlineError`'s rendered from its facts, any other's as it
    says it."""
    if isinstance(error, DeadlineError):
        return deadline_refused(error.problem)
    return str(error)
