"""What becomes of one mail: the intake's exceptions and the answers they carry.

Every mail ends in exactly one of applied (and confirmed), refused (with a clear answer) or
ignored (logged, never answered); anything else is a crash, and the mail is quarantined. The
intake (`bot.intake`) maps each to one behaviour, as Roundup's mail gateway maps its exception
taxonomy to replies::

    a step raises Refused(detail, answer)  -> recorded REFUSED; `answer`, if any, is mailed
    a step raises Ignored(detail)          -> recorded IGNORED and logged; no answer
    a step returns Done(detail, answers)   -> recorded APPLIED (or REFUSED, `Done.refused`);
                                              each answer mailed, in order
    any other exception                    -> the mail's savepoint rolls back; quarantined

`Refused` is the one refusal of the house: a step of the intake raises it for the
whole mail, a command's handler -- a player's (`bot.commands`) or the GM's (`bot.commands.gm`)
-- for that command alone, which its runner turns into that command's answer while the mail's
other commands go on. Refusals are raised where they are found and caught once, so no step
pairs a record with a notice by hand. Each record says why in `bot.models.Reason`. An answer
names its addressee as a `bot.letters` value: who gets it, and which reply address it
carries, stays `bot.letters`' call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.facts import Claims
from bot.letters import Addressee
from bot.mail_out.render import RenderedMail
from bot.models import AnswerFate, Game, InboundStatus, Reason, Seat


@dataclass(frozen=True, slots=True)
class Notice:
    """A short answer: a title and a paragraph (`bot.letters.notice`)."""

    to: Addressee
    title: str
    text: str
    kind: str = "notice"
    error: bool = True
    game: Game | None = None  # the game it concerns, when the addressee does not say
    essential: bool = False  # never withheld by a cap (see `Letter.essential`)
    claims: tuple[Claims, ...] = ()  # what it claims about what happens next (`bot.facts.Claims`)


@dataclass(frozen=True, slots=True)
class Letter:
    """An answer rendered from a template of its own (confirmation, help, status ...)."""

    to: Addressee
    rendered: RenderedMail
    kind: str
    game: Game | None = None
    # Sent even when the caps withhold the mail's other answers: what a code of
    # ours did (once per code: a welcome, an address moved), and the note that lets a seat's
    # holder stop an address change. Caps withhold answers, never such news.
    essential: bool = False
    # Done in part: orders filed beside lines refused (a confirmation naming what it left out).
    in_part: bool = False


Answer = Notice | Letter


@dataclass(frozen=True, slots=True)
class Submission:
    """Orders to put on file once the mail is recorded (they point at its row)."""

    turn_id: int
    seat_id: int
    text: str


@dataclass(frozen=True, slots=True)
class Done:
    """A mail acted on. `detail` is its line in the record and the log; `reason` its kind."""

    detail: str
    reason: Reason
    answers: tuple[Answer, ...] = ()
    game: Game | None = None
    seat: Seat | None = None
    submission: Submission | None = None
    refused: bool = False  # acted on in part: some lines were refused (and answered)

    @property
    def status(self) -> InboundStatus:
        return InboundStatus.REFUSED if self.refused else InboundStatus.APPLIED


class Refused(ValueError):  # noqa: N818 - named for the outcome it stands for, as the record says
    """Refused, and why: `detail` (fit to mail back as it is, and for the record), `answer` (if
    any) to whom it names. From a step of the intake, the whole mail is refused (`reason` says
    why in the record); from a command's handler, that command (`label` in the mail's record).
    A ValueError, as the domain's own refusals are (a bad duration, figure or option): the CLI
    prints any of them as one line."""

    def __init__(
        self,
        detail: str,
        answer: Answer | None = None,
        *,
        reason: Reason | None = None,
        label: str = "",
        game: Game | None = None,
        seat: Seat | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail, self.answer, self.reason, self.label = detail, answer, reason, label or detail
        self.game, self.seat = game, seat


class Ignored(Exception):  # noqa: N818 - see Refused
    """The mail is ignored: recorded and logged, never answered; `answer` says why no answer
    went (none is ever due for it, or a cap withheld it)."""

    def __init__(
        self, detail: str, *, reason: Reason, game: Game | None = None, answer: AnswerFate = AnswerFate.NONE
    ) -> None:
        super().__init__(detail)
        self.detail, self.reason, self.game, self.answer = detail, reason, game, answer


@dataclass(frozen=True, slots=True)
class MailFate:
    """What became of one mail, for the poll's report."""

    status: InboundStatus
    reason: Reason


@dataclass
class PollReport:
    fetched: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0

    def count(self, status: str) -> None:
        self.outcomes[status] = self.outcomes.get(status, 0) + 1


__all__ = ["Answer", "Done", "Ignored", "Letter", "Notice", "MailFate", "PollReport", "Refused", "Submission"]
