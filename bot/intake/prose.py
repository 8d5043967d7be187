"""Orders written as prose, read as a human GM reads them, never guessed silently.

mail-interface.md: "a line holding exactly one order-shaped phrase ("please put me down for use
3") is applied with the reading echoed, or offered back as a one-tap confirmation; a negated
phrase ("I won't use 3") is never applied." The policy, for each line of a mail that the game's
parser did not understand:

* the line is cut into clauses (at ``.``, ``!``, ``?``, ``;`` and ``,``); an **order-shaped
  phrase** is a run of words in one clause that starts with an order word of the game (a word
  the order syntax writes in capitals: USE, CRUISE, SPEED, PATH ...) and that the game's parser
  takes on its own, in any case ("speed 120" is SPEED 120), or reads as an order it refuses now
  (its reason is told: "use 12" with 9 EP). A bare number is never one: prose is full of
  numbers;
* a clause with a **negation** before its phrase ("not", "no", "never", "don't", "won't",
  "can't", "instead of" ...) is never applied: the answer says the line was read as a negation;
* a clause that **hedges** ("maybe", "perhaps", "might", "or", a question mark) or holds more
  than one phrase is not applied either: its phrases are offered back as one-tap links, and
  the player decides;
* a line that corrects what the mail said above it ("Wait, actually make that DESIGN TOP 2"
  under DESIGN ACC 1 DEC 1) takes back each line above that the game refuses beside it: the
  last word counts, and the reading says what it took back;
* a clause that gives, after "or", another value for the phrase of the clause before it ("I
  think DESIGN ACC 2 would be good, or maybe TOP 2", "speed 40, or 60") offers each of the two
  readings, the one in place of the other, never the two added up;
* a clause with a number or an order word beside its phrases that no phrase takes ("round 2
  should be F2", "ROUND 3: F1 L F1", "bid 2 wear") is **not read**: the phrase is not all the
  player wrote, and a tap on it would file orders without the rest; the game's own reason for
  the line stands;
* otherwise each clause's one phrase is **applied**, and the answer echoes the reading
  ("Read as: USE 3"), so that a wrong reading is seen at once and can be sent again;
* where the game takes a number alone as the whole order of the turn (Racecraft: "4" is USE
  4), a line with no order word whose every other word is one of a player saying what to spend
  ("I'll put 4 in", "make it six", "4 this time", `_FIGURE_WORDS`) is read as its number, the
  reading echoed; two numbers, a hedge or a question offer each number as a one-tap link; a
  number the game refuses now stays a line not understood, with the game's reason. A line
  with no number is never read so;
* where the game takes COLOUR, a colour named alone ("Blue please"), by what it colours ("the
  red car"), after a word of choosing ("I'll take blue", "in green") or after COLOUR and a
  linking word ("my colour is green", never "COLOUR IS") is read as COLOUR; a
  colour another seat has is then refused with whose it is, the line's other orders standing;
* a line with no digit, no word in capitals and no order word is a **note** ("Good luck,
  everyone!"): passed over, not refused;
* a line with an order word that is not an order of the game, or one the game refuses, stays a
  line not understood, with the game's reason.

Pure but for the game's parser: the rules decide what an order is; this decides only where in
a sentence to look.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from bot.commands.grammar import ForTheGm, for_the_gm, is_courtesy
from rules.api import AnyGame, GameOrder, GameState, OrderProblem, Parsed, ProblemKind

MAX_PHRASE_WORDS = 6  # the longest order a sentence is searched for (SPEEDPHREAKZ: ROUND 3 F1 L F1 ...)
MAX_LINE_CHARS = 300  # a longer line is not searched (it is not a sentence with an order in it)
# The reading of one mail is bounded before it starts: at most MAX_PROSE_LINES lines are read as
# prose and at most MAX_PARSES phrases are tried on the game's parser (the work, and so the time,
# one mail may take); the lines past either stay lines not understood, with the parser's reason.
MAX_PROSE_LINES = 30
MAX_PARSES = 400
# Words people put between an order word and what it takes ("start on 3,5", "lane to B"),
# left out when a phrase is tried; a compass word after FACING is its heading.
_FILLERS = frozenset({"on", "at", "from", "in", "the", "square", "to", "with", "a"})
_HEADINGS = {
    "north": "N",
    "northeast": "NE",
    "north-east": "NE",
    "east": "E",
    "southeast": "SE",
    "south-east": "SE",
    "south": "S",
    "southwest": "SW",
    "south-west": "SW",
    "west": "W",
    "northwest": "NW",
    "north-west": "NW",
}
# "the green car": a colour named by what it colours, where the game takes a COLOUR order.
_COLOURED = frozenset({"car", "one", "colour", "color", "livery"})
# "I'll take blue", "I'd like red", "go with green", "in silver": a colour named after a word of
# choosing, where the game takes COLOUR <colour>.
_CHOOSING = frozenset(
    {"take", "taking", "have", "want", "like", "choose", "pick", "prefer", "with", "get", "grab", "in"}
)
_SPELLINGS = {"COLOR": "COLOUR"}  # the order word as some write it
# "my colour is green", "colour will be red": the words between COLOUR and the colour it names.
_LINKING = frozenset({"is", "be", "will", "would", "should", "shall", "'s"})
# An order word as a sentence writes it ("starting at 2,5 facing north"): read where the game
# takes the order word, never making a line with no order word in it orders (a note stays one).
_FORMS = {"STARTING": "START"}
# "Blue please": a colour alone in its clause, but for these words, where the game takes COLOUR.
_POLITE = frozenset({"please", "for", "me", "thanks", "thank", "you", "pls"})
# A number written as a word after an order word ("use five"): the number it names.
_NUMBERS = {
    word: str(n)
    for n, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
    )
}
_CLAUSE = re.compile(r"[.!;,]+(?:\s+|$)|\?")
_WORD = re.compile(r"\S+")  # words are what white space separates: "2=ZZ" is one word, not an order's number
_EDGES = "\"'()[]{}.,!?;:"
_ORDER_WORD = re.compile(r"\b[A-Z]{2,}\b")
# A one-letter order word (Racecraft's "CRUISE (or B)"): an order word in prose only where the
# mail writes it as a capital letter standing alone ("Option B please"), and only where the
# game takes the letter alone as an order; "a" and "c u later" are words, not orders.
_LETTER = re.compile(r"(?<![\w'’-])[A-Z](?![\w'’-])")
# "speed 80 please, keep the rest": the mail changes part of the set on file and keeps the rest.
_KEEP_REST = re.compile(
    r"\b(?:keep|leave)\s+(?:the\s+)?(?:rest|others?)(?:\s+(?:the\s+same|as\s+(?:it\s+is|before|they\s+are)|unchanged))?\b|"
    r"\b(?:the\s+)?rest\s+(?:unchanged|the\s+same|as\s+before)\b|"
    r"\beverything\s+else\s+(?:the\s+same|unchanged|as\s+before)\b",
    re.I,
)
# A line that says it adds to what came before ("Oh and PUSH YES", "also pay roll", "SLIP 1
# too"): where it holds an order that is applied, the set on file stands but for what it changes,
# as with "keep the rest".
_ADDING = re.compile(r"^\W*(?:(?:oh|ah|oops)\W+)?(?:and|also|plus)\b|\b(?:too|as\s+well)\W*$", re.I)
_OPTION = re.compile(r"\boption\s+([a-z])\b", re.I)
# A clause that takes back what the line said before it ("Use 2. No wait, use 1."): the order
# after it is the one meant, and the reading says what it replaced. A "no" that goes with it
# ("Actually no - OVERTAKE", "sorry, no: use 4"), or stands alone before a dash or a colon
# ("No - use 4"), takes back what was said; it does not negate the order after it.
_CORRECTION = re.compile(
    r"^\W*(?:(?:no\W+wait|wait|actually|sorry|scratch\s+that|i\s+mean|correction|make\s+(?:that|it)|"
    r"on\s+second\s+thoughts?|change\s+(?:that|it)\s+to)\b(?:\W+no\b(?=\s*[-\u2013\u2014:]))?|"
    r"no\s*[-\u2013\u2014:]+)",
    re.I,
)
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "nor",
        "dont",
        "don't",
        "don’t",
        "wont",
        "won't",
        "won’t",
        "cant",
        "can't",
        "can’t",
        "cannot",
        "isnt",
        "isn't",
        "shouldnt",
        "shouldn't",
        "wouldnt",
        "wouldn't",
        "instead",
        "neither",
        "without",
        "undo",
        "cancel",
    }
)
HEDGES = frozenset({"maybe", "perhaps", "might", "or", "possibly", "either", "unsure", "undecided", "thinking"})
# The words of a line that says how much to spend, beside its number, where the game takes a
# number alone as the turn's whole order ("I'll put 4 in", "make it 6", "4 this time", "6 EP
# please"): a line with any other word ("I'm away for 3 days") is not read as a number.
_FIGURE_WORDS = frozenset(
    """i i'll ill i’ll i'd i’d id i'm im i’m we we'll will would like to put putting in make it that
    this time turn go going with for me please pls thanks thank you ta spend spending play playing
    let's lets let try take taking ep energy just then ok okay so the a of gonna want wanna say
    now on be is it's its at points stake throw chuck lay down how about hmm right well and cheers
    """.split()
)
# The lane a sentence says to end in, where the game takes LANE x: "stay on A", "move over to
# B", "keep to lane C", "lane a": a capital letter standing alone after a verb of keeping or
# moving, or any letter after "lane".
_LANE = re.compile(
    r"(?i:\b(?:stay|staying|keep|keeping|stick|remain|end|ending|finish|move|moving|go|get|switch|cut|pull|drift|head)"
    r"(?:\s+(?:on|in|to|into|over|across|at|up|down|out|the))*\s+(?:lane\s+)?)(?P<held>[A-Z])(?![\w'’-])|"
    r"(?i:\blane\s+)(?P<named>[A-Za-z])(?![\w'’-])"
)
_FIGURE = re.compile(r"(\d{1,3})(?:ep)?", re.I)  # a number as a line of prose writes one: "4", "4EP"


@dataclass(frozen=True, slots=True)
class Reading:
    """What one line of prose was read as."""

    line_no: int
    line: str
    applied: tuple[str, ...] = ()  # order lines applied, echoed back
    offered: tuple[str, ...] = ()  # order lines offered back as one-tap links, not applied
    negated: tuple[str, ...] = ()  # phrases in a negation: never applied
    note: bool = False  # no order in it at all: passed over
    for_gm: ForTheGm | None = None  # a note that is words for the GM (a farewell, a question ...)
    unread: tuple[str, ...] = ()  # the parts of a line with orders in it that were not read as any
    # A hedged clause's longer reading the game refuses ("design skill 2, maybe top 1"): the
    # reading and the game's reason, said beside the clause listed as not read.
    not_offered: tuple[tuple[str, str], ...] = ()
    fallback: str = ""  # the fallback a line gave ("otherwise 80"), when it gave one
    first_choice: str = ""  # the first choice the game refuses now, when the fallback was taken
    refused_because: str = ""  # the game's reason for refusing it
    fallback_refused: str = ""  # the game's reason for refusing the fallback too (the first is refused)
    corrected: tuple[str, ...] = ()  # orders the line took back ("Use 2. No wait, use 1.": USE 2)
    keeps_rest: bool = False  # "keep the rest": the set on file stands but for what the mail changes


@dataclass
class ProseResult:
    """The mail's text with its prose read: the order lines to parse instead, and the readings.
    `line_no` gives a line of `text` the number it had in the mail (a line read as two orders
    is two lines of `text`)."""

    text: str
    readings: list[Reading] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # line of `text` (from 0) -> its line in the mail
    keeps_rest: bool = False  # a line said "keep the rest": the mail changes part of the set on file
    # A line not read whose order word is not its first word ("Oops, forgot: TYRES 1"): the
    # game's reason for the line from that word on, said in place of the reason for the line's
    # first word (mail's line number -> reason).
    reasons: dict[int, str] = field(default_factory=dict)

    def line_no(self, line_no: int) -> int:
        return self.numbers[line_no - 1] if 0 < line_no <= len(self.numbers) else line_no

    @property
    def applied(self) -> list[Reading]:
        return [r for r in self.readings if r.applied]

    @property
    def offered(self) -> list[Reading]:
        return [r for r in self.readings if r.offered]

    @property
    def negated(self) -> list[Reading]:
        return [r for r in self.readings if r.negated]

    @property
    def notes(self) -> list[Reading]:
        return [r for r in self.readings if r.note]

    @property
    def for_gm(self) -> list[Reading]:
        return [r for r in self.readings if r.for_gm is not None]


@functools.lru_cache(maxsize=256)
def order_words(order_help: str) -> frozenset[str]:
    """The game's order words: the words its order syntax writes in capitals (one-letter ones
    too: `read` keeps of those only the ones the game takes alone as an order). Read once a
    process for each help text (the last 256): a seat's help is the same mail after mail."""
    return capital_words(order_help) | frozenset(_LETTER.findall(order_help))


@functools.lru_cache(maxsize=256)
def capital_words(order_help: str) -> frozenset[str]:
    """The words of two capitals or more in the game's order help (its order words but the
    one-letter ones), read once a process for each help text, as `order_words`."""
    return frozenset(_ORDER_WORD.findall(order_help))


def _words(clause: str) -> list[str]:
    """The words of a clause, without the punctuation around them."""
    return [w for w in (word.strip(_EDGES) for word in _WORD.findall(clause)) if w]


def _normal(word: str) -> str:
    return word.lower()


@dataclass
class _Budget:
    """What is left of one mail's reading (MAX_PARSES)."""

    parses: int = MAX_PARSES

    def spend(self) -> bool:
        if self.parses <= 0:
            return False
        self.parses -= 1
        return True


def _as_order(words: Sequence[str]) -> str:
    """A run of words as an order line: its order word as the game writes it, the filler words
    after it left out, a compass word after FACING as its heading ("Start on 3,5 facing north":
    START 3,5 FACING N), a number written as a word as its digits ("use five": USE 5)."""
    first = words[0].upper()
    out = [_FORMS.get(first, _SPELLINGS.get(first, first))]
    for word in words[1:]:
        low = word.lower()
        if low in _FILLERS:
            continue
        out.append(_HEADINGS.get(low, word) if out[-1].upper() == "FACING" else _NUMBERS.get(low, word))
    return " ".join(out).upper()


def _colour_at(
    words: Sequence[str],
    index: int,
    word: str,
    orders: Collection[str],
    tried: Callable[[str], tuple[str, bool] | None],
) -> tuple[int, tuple[int, int, str] | None] | None:
    """Where the game takes COLOUR, a colour named at `index` (`word`, the order word it may
    be): alone in its clause ("Blue please"), by what it colours ("the red car"), after a word
    of choosing ("I'll take blue") or after COLOUR and a link (`_linked_colour`): the index past
    what was read and the phrase COLOUR <colour> where the game takes it now; None elsewhere."""
    if "COLOUR" not in orders:
        return None
    if (
        index == 0
        and word not in orders
        and words[0].isalpha()
        and 0 < len(words) <= 4
        and all(w.lower() in _POLITE for w in words[1:])
    ):
        colour = tried(f"COLOUR {words[0]}")
        if colour is not None and colour[1]:
            return len(words), (0, len(words), colour[0])
    coloured = index + 1 < len(words) and words[index + 1].lower() in _COLOURED
    if (
        word not in orders
        and words[index].isalpha()
        and (coloured or (index > 0 and words[index - 1].lower() in _CHOOSING))
    ):
        colour = tried(f"COLOUR {words[index]}")
        if colour is not None and colour[1]:
            past = index + 2 if coloured else index + 1
            return past, (index, past, colour[0])
    return _linked_colour(words, index, tried) if word == "COLOUR" else None


def _linked_colour(
    words: Sequence[str], index: int, tried: Callable[[str], tuple[str, bool] | None]
) -> tuple[int, tuple[int, int, str] | None] | None:
    """At COLOUR followed by linking words ("colour is green", "colour will be red"): the index
    past what was read, and the phrase COLOUR <colour> where the game takes it now; None where
    no linking word follows. Never "COLOUR IS": a word after the link that the game does not
    take as a colour now is read on as any other."""
    after = index + 1
    while after < len(words) and words[after].lower() in _LINKING:
        after += 1
    if after == index + 1:
        return None
    colour = tried(f"COLOUR {words[after]}") if after < len(words) and words[after].isalpha() else None
    if colour is not None and colour[1]:
        return after + 1, (index, after + 1, colour[0])
    return after, None


def _phrases(
    rules: AnyGame,
    state: GameState,
    seat: str,
    words: Sequence[str],
    orders: Collection[str],
    budget: _Budget | None = None,
    letters: Collection[str] = (),
) -> list[tuple[int, int, str]]:
    """(index of its first word, index past its last, the phrase as an order line) of each
    order-shaped phrase among `words`: the longest run from an order word that the parser
    takes whole (as written, or as `_as_order` writes it); and "the <colour> car" where the
    game takes COLOUR <colour>."""
    budget = budget if budget is not None else _Budget()
    found: list[tuple[int, int, str]] = []

    def tried(candidate: str) -> tuple[str, bool] | None:
        """The candidate as an order line and whether it is one the game takes now; None: not an order."""
        if not budget.spend():
            return None
        parsed = rules.parse_orders(state, seat, candidate)
        if parsed.orders and not parsed.problems:
            return rules.format_orders(parsed.orders), True
        if not parsed.orders and parsed.problems and all(p.kind is ProblemKind.ILLEGAL for p in parsed.problems):
            return candidate, False  # an order, but one the game refuses now: its reason is told
        return None

    index = 0
    while index < len(words):
        word = _SPELLINGS.get(words[index].upper(), words[index].upper())
        word = _FORMS.get(word, word) if _FORMS.get(word) in orders else word
        if (colour := _colour_at(words, index, word, orders, tried)) is not None:
            index, phrase = colour
            found.extend([phrase] if phrase is not None else [])
            continue
        if word not in orders and words[index] not in letters and not _option_letter(words, index, letters):
            index += 1
            continue
        best: tuple[int, str] | None = None
        for end in range(min(len(words), index + MAX_PHRASE_WORDS), index, -1):
            raw = " ".join(words[index:end]).upper()
            for candidate in dict.fromkeys((raw, _as_order(words[index:end]))):
                got = tried(candidate)
                if got is not None:
                    best = (end, got[0])
                    break
            if best is not None:
                break
        if best is None:
            index += 1
            continue
        found.append((index, best[0], best[1]))
        index = best[0]
    return found


def _alternatives(
    rules: AnyGame,
    state: GameState,
    seat: str,
    words: Sequence[str],
    found: Sequence[tuple[int, int, str]],
    budget: _Budget,
) -> list[tuple[int, int, str]]:
    """The other readings a phrase offers with "or" ("use 2 or 3", "speed 40 or maybe 60": USE 2
    and USE 3, SPEED 40 and SPEED 60): the phrase with its last word in place of the word after
    "or" (and a hedge after it), where the game takes that as an order."""
    more: list[tuple[int, int, str]] = []
    for start, end, _ in found:
        at = end
        while at + 1 < len(words) and words[at].lower() == "or":
            value = at + 1
            while value + 1 < len(words) and _normal(words[value]) in HEDGES:
                value += 1
            candidate = _as_order([*words[start : end - 1], words[value]])
            if not budget.spend():
                break
            parsed = rules.parse_orders(state, seat, candidate)
            if not parsed.orders or parsed.problems:
                break
            more.append((at, value + 1, rules.format_orders(parsed.orders)))
            at = value + 1
    return more


_JOINING = frozenset({"and", "also", "plus", "with", "then", "too"})


class _Said:
    """The phrase of the clause before, as written (`text`), and what the game reads it as alone
    (`parsed`): parsed once, when first asked, however many of the clause's phrases are
    compared with it (`_same_kind`) and whether the clause goes on with it (`_continued`)."""

    __slots__ = ("_parsed", "rules", "seat", "state", "text")

    def __init__(self, rules: AnyGame, state: GameState, seat: str, text: str) -> None:
        self.rules, self.state, self.seat, self.text = rules, state, seat, text
        self._parsed: Parsed[GameOrder] | None = None

    def parsed(self) -> Parsed[GameOrder]:
        if self._parsed is None:
            self._parsed = self.rules.parse_orders(self.state, self.seat, _as_order(_words(self.text)))
        return self._parsed


def _continued(
    rules: AnyGame, state: GameState, seat: str, said: _Said, words: Sequence[str], budget: _Budget
) -> tuple[str, str] | None:
    """A clause with no order of its own that goes on with the phrase `said` of the clause
    before it ("bid wear 2, maybe skill 1": BID WEAR 2 SKILL 1): the phrase alone and the
    phrase with the clause's words (hedges and courtesies left out) as order lines, where the
    game takes both as one order each now; None otherwise."""
    rest = [w for w in words if _normal(w) not in HEDGES | _JOINING and not is_courtesy(w)]
    numbered = [i for i, w in enumerate(rest) if any(c.isdigit() for c in w)]
    if not numbered or not budget.spend():
        return None
    rest = rest[: numbered[-1] + 1]  # "top 1 please": the words up to its last number
    alone = said.parsed()
    if len(alone.orders) != 1 or alone.problems or not budget.spend():
        return None
    longer = rules.parse_orders(state, seat, _as_order([*_words(said.text), *rest]))
    if len(longer.orders) != 1 or longer.problems or longer.orders == alone.orders:
        return None
    return rules.format_orders(alone.orders), rules.format_orders(longer.orders)


def _or_instead(
    reader: _Reader, said: _Said, words: Sequence[str], found: Sequence[tuple[int, int, str]], same_kind: bool
) -> tuple[str, str, str] | None:
    """A clause that offers, after "or", another value for the phrase `said` of the clause
    before it, in its place and never added to it ("DESIGN ACC 2 would be good, or maybe TOP 2":
    DESIGN TOP 2 or DESIGN ACC 2; "speed 40, or 60": SPEED 60 or SPEED 40): the phrase alone,
    the other reading, as order lines, and the game's reason where it refuses the other reading
    now ("design acc 2, or top 3": TOP 3 is out of the design's range), else ""; where the game
    takes the phrase as one order now and the other reading differs from it; None otherwise.
    The other reading is the clause's own phrase, where it is one order of the same kind or one
    the game refuses now, else the phrase's order word with the clause's words up to their last
    number (hedges and courtesies left out)."""
    if "or" not in {_normal(w) for w in words} or len(found) > 1:
        return None
    if found:
        other = found[0][2]
    else:
        rest = [w for w in words if _normal(w) not in HEDGES | _JOINING and not is_courtesy(w)]
        numbered = [i for i, w in enumerate(rest) if any(c.isdigit() for c in w)]
        if not numbered:
            return None
        other = _as_order([_words(said.text)[0], *rest[: numbered[-1] + 1]])
    if not reader.budget.spend():
        return None
    alone = said.parsed()
    if len(alone.orders) != 1 or alone.problems:
        return None
    parsed = reader.rules.parse_orders(reader.state, reader.seat, other)
    earlier = reader.rules.format_orders(alone.orders)
    if not parsed.orders and parsed.problems and all(p.kind is ProblemKind.ILLEGAL for p in parsed.problems):
        return earlier, other, "; ".join(p.reason for p in parsed.problems)
    if found and not same_kind:
        return None
    if len(parsed.orders) != 1 or parsed.problems or parsed.orders == alone.orders:
        return None
    return earlier, reader.rules.format_orders(parsed.orders), ""


def _same_kind(rules: AnyGame, state: GameState, seat: str, said: _Said, phrase: str, budget: _Budget) -> bool:
    """Whether `phrase` is, alone, one order of the same kind as the phrase `said` is."""
    if not budget.spend():
        return False
    earlier = said.parsed().orders
    alone = rules.parse_orders(state, seat, phrase).orders
    return len(earlier) == 1 and len(alone) == 1 and type(earlier[0]) is type(alone[0])


def _refused_reading(
    rules: AnyGame, state: GameState, seat: str, said: str, words: Sequence[str], budget: _Budget
) -> tuple[str, str] | None:
    """The longer reading of a hedged clause that goes on with the phrase `said` before it, when
    the game refuses it ("design skill 2, maybe top 1": DESIGN SKILL 2 TOP 1, the columns would
    add up to 3): that reading, as written, and the game's reason; None otherwise."""
    rest = [w for w in words if _normal(w) not in HEDGES | _JOINING and not is_courtesy(w)]
    numbered = [i for i, w in enumerate(rest) if any(c.isdigit() for c in w)]
    if not numbered or not budget.spend():
        return None
    reading = _as_order([*_words(said), *rest[: numbered[-1] + 1]])
    longer = rules.parse_orders(state, seat, reading)
    illegal = [p for p in longer.problems if p.kind is ProblemKind.ILLEGAL]
    if longer.orders or not illegal or len(illegal) != len(longer.problems):
        return None
    return reading, "; ".join(p.reason for p in illegal)


# "SPEED 100 if legal, otherwise 80": a first choice on a condition the game settles (whether
# the order is allowed now), and a fallback (the first choice's last word replaced).
_FALLBACK = re.compile(
    r"^(?P<first>.+?)[\s,;]*\b(?:otherwise|else|failing\s+that|if\s+not)\b[\s,:]*(?P<alt>[^\s.!,;]+)[\s.!]*$", re.I
)
_IF_ALLOWED = re.compile(
    r"\bif\s+(?:it'?s\s+|that'?s\s+|it\s+is\s+)?(?:legal|possible|allowed|ok|okay|valid)\b|\bif\s+(?:i|you)\s+can\b",
    re.I,
)


def _with_fallback(
    rules: AnyGame, state: GameState, seat: str, line: str, orders: Collection[str], budget: _Budget
) -> Reading | None:
    """The reading of a line that gives an order "if legal" and a fallback ("SPEED 100 if legal,
    otherwise 80"): the first choice when the game allows it now, else the fallback, when it
    does; the reading says which and why. A fallback on any other condition ("if Seb pits")
    is the bot's to guess no more than a hedge: both are offered back. None: no such line."""
    match = _FALLBACK.match(line.strip())
    if match is None:
        return None
    words = _words(match["first"])
    found = _phrases(rules, state, seat, words, orders, budget)
    if len(found) != 1 or not budget.spend():
        return None
    start, end, first = found[0]
    alternative = _as_order([*words[start : end - 1], match["alt"]])
    parsed_alt = rules.parse_orders(state, seat, alternative)
    if {_normal(w) for w in words[:start]} & NEGATIONS:
        return None
    if parsed_alt.problems and _IF_ALLOWED.search(match["first"]):
        # Understood but not allowed now, and the first choice neither: the first choice is
        # taken to the game, which refuses it with its reason; the reading says the fallback
        # was read, and why it is not allowed either.
        refused = [p for p in parsed_alt.problems if p.kind is ProblemKind.ILLEGAL]
        parsed_first = rules.parse_orders(state, seat, first)
        if len(refused) == len(parsed_alt.problems) and parsed_first.problems:
            return Reading(0, line.strip(), applied=(first,), fallback=alternative, fallback_refused=refused[0].reason)
    if not parsed_alt.orders or parsed_alt.problems:
        return None
    fallback = rules.format_orders(parsed_alt.orders)
    if not _IF_ALLOWED.search(match["first"]):
        return Reading(0, line.strip(), offered=(first, fallback))
    parsed_first = rules.parse_orders(state, seat, first)
    if parsed_first.orders and not parsed_first.problems:
        return Reading(0, line.strip(), applied=(first,), fallback=fallback)
    reason = parsed_first.problems[0].reason if parsed_first.problems else ""
    return Reading(0, line.strip(), applied=(fallback,), fallback=fallback, first_choice=first, refused_because=reason)


# A question about the game rather than an order asked with a question mark ("should I use 6?").
_ASKS = re.compile(r"^\W*(?:what|how|why|when|where|which|who|whose|does|do|is|are|isn'?t|aren'?t)\b", re.I)
# What opens a question for the GM with words after its question mark ("Can I change my order
# later? USE 4", "Should I use 6? USE 5"): a question word, or a verb put first to ask.
_OPENS_QUESTION = re.compile(
    r"^\W*(?:what|how|why|when|where|which|who|whose|does|do|is|are|isn'?t|aren'?t|doesn'?t|don'?t"
    r"|can|could|may|might|will|would|shall|should|did|am|was|were|has|have|had"
    r"|can'?t|couldn'?t|won'?t|wouldn'?t|shouldn'?t|didn'?t|wasn'?t|weren'?t|hasn'?t|haven'?t)\b",
    re.I,
)


def _takes(rules: AnyGame, state: GameState, seat: str, phrase: str, budget: _Budget) -> bool:
    """Whether the game takes `phrase` as orders now, legal as they stand."""
    if not budget.spend():
        return False
    parsed = rules.parse_orders(state, seat, phrase)
    return bool(parsed.orders) and not parsed.problems


def _option_letter(words: Sequence[str], index: int, letters: Collection[str]) -> bool:
    """ "option b": a one-letter order word in any case, where the word before it names it an option."""
    return index > 0 and words[index - 1].lower() == "option" and words[index].upper() in letters


def _an_order(rules: AnyGame, state: GameState, seat: str, phrase: str, budget: _Budget) -> bool:
    """Whether the game reads `phrase` alone as an order: one it takes now, or refuses now with
    a reason (an order, but not allowed this turn)."""
    if not budget.spend():
        return False
    parsed = rules.parse_orders(state, seat, phrase)
    if parsed.orders and not parsed.problems:
        return True
    return bool(parsed.problems) and all(p.kind is ProblemKind.ILLEGAL for p in parsed.problems)


def _one_figure(
    reader: _Reader, result: ProseResult, number: int, line: str
) -> tuple[Reading | None, list[str]] | None:
    """`line` read as the turn's one figure, where the game takes a number alone as the whole
    order ("I'll put 4 in": USE 4), or takes it after the order word of the part a set cannot
    lack (Speed Circuit's race turn: "I'll put 40 in" is SPEED 40), with the lane it names
    where the game takes LANE ("and stay on A": LANE A): applied, echoed, when it is the line's
    one number, the game takes it and nothing hedges; each number offered as a one-tap link
    where two are given, or a hedge or a question mark is there; a line not understood with
    the game's reason when the game refuses it now. None when the line is no such line: it has
    an order word, a word that is not one of saying what to spend (`_FIGURE_WORDS`), no number
    and no lane at all, or the game reads no number so."""
    lanes = _lanes(reader, line)
    rest = _LANE.sub(" ", line) if lanes else line
    if _ORDER_WORD.search(rest) or any(letter in reader.letters for letter in _LETTER.findall(rest)):
        return None
    figures: list[str] = []
    for word in _words(rest):
        low = word.lower()
        digits = _FIGURE.fullmatch(low)
        if digits is not None or low in _NUMBERS:
            figures.append(str(int(digits.group(1))) if digits is not None else _NUMBERS[low])
        elif low not in _FIGURE_WORDS and low not in HEDGES:
            return None
    figures = list(dict.fromkeys(figures))
    as_order = _figure_order(reader, figures[0]) if figures else None
    if as_order is None and not (lanes and not figures):
        return None
    original = line.strip()
    hedged = len(figures) > 1 or "?" in line or bool({w.lower() for w in _words(rest)} & HEDGES)
    readings: list[str] = []
    for figure in figures if hedged else figures[:1]:
        order = _figure_order(reader, figure) if figure != figures[0] else as_order
        if order is None:
            continue
        parsed = reader.rules.parse_orders(reader.state, reader.seat, "\n".join((order, *lanes)))
        if parsed.orders and not parsed.problems:
            readings.append(reader.rules.format_orders(parsed.orders))
        elif parsed.problems and not hedged:
            result.reasons[number] = parsed.problems[0].reason
    if not figures:
        parsed = reader.rules.parse_orders(reader.state, reader.seat, "\n".join(lanes))
        if parsed.orders and not parsed.problems:
            readings.append(reader.rules.format_orders(parsed.orders))
        elif parsed.problems:
            result.reasons[number] = parsed.problems[0].reason
    if not readings:
        return None, [line]  # the game refuses the number (or the lane) now: its reason stands
    if hedged:
        return Reading(number, original, offered=tuple(readings)), [""]
    applied = tuple(part for reading in readings for part in reading.splitlines())
    return Reading(number, original, applied=applied), _order_lines(applied)


def _figure_order(reader: _Reader, figure: str) -> str | None:
    """The order line the game reads `figure` as, said alone in prose: the number itself where
    the game takes a number alone as an order (Racecraft), else the number after the one order
    word of the parts a set cannot lack (`Game.missing_orders` of no orders: Speed Circuit's
    SPEED) that the game reads it with; None where there is no such word, or more than one."""
    if _an_order(reader.rules, reader.state, reader.seat, figure, reader.budget):
        return figure
    read_as = [
        f"{word} {figure}"
        for word in reader.required
        if _an_order(reader.rules, reader.state, reader.seat, f"{word} {figure}", reader.budget)
    ]
    return read_as[0] if len(read_as) == 1 else None


def _lanes(reader: _Reader, line: str) -> tuple[str, ...]:
    """The lane a line of prose names to end in ("stay on A", "move to lane B"), as the game's
    LANE order, where the game has one; one lane at most (two are no reading)."""
    if "LANE" not in reader.orders:
        return ()
    named = {(m["held"] or m["named"]).upper() for m in _LANE.finditer(line)}
    if len(named) != 1:
        return ()
    lane = f"LANE {named.pop()}"
    return (lane,) if _an_order(reader.rules, reader.state, reader.seat, lane, reader.budget) else ()


def _is_note(line: str, orders: Collection[str], letters: Collection[str] = ()) -> bool:
    """No digit, no word in capitals, no order word in any case, no option letter standing
    alone ("B for me this turn"): words to a person, not orders."""
    if any(c.isdigit() for c in line) or _ORDER_WORD.search(line):
        return False
    if any(letter in letters for letter in _LETTER.findall(line)):
        return False
    if any(letter.upper() in letters for letter in _OPTION.findall(line)):
        return False
    return not any(_SPELLINGS.get(w.upper(), w.upper()) in orders for w in _words(line))


@dataclass(frozen=True, slots=True)
class _Reader:
    """What one mail's lines are read against: the game, its state, the seat, the order words
    (those of one letter apart: `letters`, those the game takes alone as an order) and what is
    left of the mail's budget."""

    rules: AnyGame
    state: GameState
    seat: str
    orders: frozenset[str]
    letters: frozenset[str]
    budget: _Budget
    # The order words of the parts a set cannot lack (`Game.missing_orders` of no orders), in
    # the order the game names them: where a figure in prose goes when no number alone is an order.
    required: tuple[str, ...] = ()


@dataclass
class _Clauses:
    """What the clauses of one line were read as so far, clause by clause (`take`)."""

    applied: list[str] = field(default_factory=list)
    offered: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)  # clauses with words not read as any order
    corrected: list[str] = field(
        default_factory=list
    )  # applied before a correction ("no wait"): replaced by what follows
    not_offered: list[tuple[str, str]] = field(default_factory=list)  # hedged longer readings the game refuses, and why
    correcting: bool = False
    hedged: bool = False  # a clause not read hedges: the line applies nothing itself
    signing: bool = False  # the clause before was a courtesy ("Cheers"): a name may follow it
    said_last: str = ""  # the last phrase of the line's clauses so far, as written

    def take(self, reader: _Reader, clause: str, line: str) -> None:
        """Read one clause of `line`."""
        rules, state, seat, budget = reader.rules, reader.state, reader.seat, reader.budget
        words = _words(clause)
        self.correcting = self.correcting or bool(_CORRECTION.match(clause))
        found = _phrases(rules, state, seat, words, reader.orders, budget, reader.letters)
        # A clause goes on with the order before it when no phrase of it is an order on its
        # own, or each is an order of the same kind ("design skill 1, maybe top 1": TOP 1
        # alone is a DESIGN order too, and a set holds one DESIGN).
        said = _Said(rules, state, seat, self.said_last)  # the phrase before, parsed once for the clause
        same_kind = bool(said.text and found) and all(
            _same_kind(rules, state, seat, said, phrase, budget) for _, _, phrase in found
        )
        instead = _or_instead(reader, said, words, found, same_kind) if said.text else None
        more = (
            _continued(rules, state, seat, said, words, budget)
            if said.text
            and instead is None
            and (same_kind or not any(_takes(rules, state, seat, phrase, budget) for _, _, phrase in found))
            else None
        )
        if instead is not None:
            self._instead(words, *instead)
        elif more is None and same_kind and {_normal(w) for w in words} & HEDGES:
            # The hedged longer reading the game refuses: not read, and why it is not offered.
            self.passed.append(" ".join(words))
            self._not_offered(reader, words)
        elif more is not None:
            self._goes_on(words, *more)
        elif not found:
            self._no_phrase(reader, clause, words)
        else:
            self.said_last = " ".join(words[found[-1][0] : found[-1][1]])
            self._phrases_of(reader, clause, line, words, found)

    def _not_offered(self, reader: _Reader, words: Sequence[str]) -> None:
        refused = _refused_reading(reader.rules, reader.state, reader.seat, self.said_last, words, reader.budget)
        self.not_offered += [refused] if refused is not None else []

    def _instead(self, words: Sequence[str], earlier: str, other: str, refused: str) -> None:
        """ "DESIGN ACC 2 would be good, or maybe TOP 2": another value for the order before,
        offered beside it; the line applies nothing itself. One the game refuses now
        (`refused`, its reason) is not offered: the clause is listed as not read, with why."""
        self.applied = [p for p in self.applied if p != earlier]
        self.offered = [*(p for p in self.offered if p != earlier), earlier, *([] if refused else [other])]
        if refused:
            self.passed.append(" ".join(words))
            self.not_offered.append((other, refused))
        self.hedged = True
        self.said_last = ""

    def _goes_on(self, words: Sequence[str], earlier: str, longer: str) -> None:
        """ "bid wear 2, maybe skill 1": the clause goes on with the order before it; a hedge
        offers both readings, else the two clauses are the one order."""
        if {_normal(w) for w in words} & HEDGES:
            self.applied = [p for p in self.applied if p != earlier]
            self.offered += [earlier, longer]
        else:
            self.applied = [longer if p == earlier else p for p in self.applied]
            self.offered = [longer if p == earlier else p for p in self.offered]
        self.said_last = ""

    def _no_phrase(self, reader: _Reader, clause: str, words: Sequence[str]) -> None:
        """A clause with no order in it: a courtesy, a name signing off after one, a correction
        to come, or words not read (with the refused longer reading of a hedge, and why)."""
        courtesy = bool(words) and is_courtesy(clause)
        # "Cheers, Seb": the name that signs off after a courtesy is no word unread.
        signed = self.signing and 0 < len(words) <= 2 and all(w.isalpha() and w[:1].isupper() for w in words)
        if words and not courtesy and not signed and not _CORRECTION.match(clause):
            self.passed.append(" ".join(words))
            if self.said_last and {_normal(w) for w in words} & HEDGES:
                self._not_offered(reader, words)
        self.signing = courtesy

    def _phrases_of(
        self, reader: _Reader, clause: str, line: str, words: Sequence[str], found: list[tuple[int, int, str]]
    ) -> None:
        """A clause with order phrases: negated, offered (more than one, a hedge, a question,
        other words that look like parts of orders) or its one phrase applied."""
        self.signing = False
        if self.correcting and self.applied:
            self.corrected += self.applied
            self.applied = []
        self.correcting = False
        before = {_normal(w) for w in words[: found[0][0]]}
        if (marker := _CORRECTION.match(clause)) is not None:  # "no wait, use 1" negates nothing
            before -= {_normal(w) for w in _words(marker.group(0))}
        lowered = {_normal(w) for w in words}
        found += _alternatives(reader.rules, reader.state, reader.seat, words, found, reader.budget)
        covered = {i for start, end, _ in found for i in range(start, end)}
        # Other words that look like parts of orders (a number, an order word, an action such
        # as F2) beside the phrases: the phrase is not all the player wrote ("round 2 should be
        # F2", "bid 2 wear", "ROUND 3: F1 L F1"), so it is neither applied nor offered -- a tap
        # would file orders without the words it left out. The clause is a part not read.
        cut_short = any(
            i not in covered and (any(c.isdigit() for c in w) or w.upper() in reader.orders)
            for i, w in enumerate(words)
        )
        if before & NEGATIONS:
            self.negated += [phrase for _, _, phrase in found]
        elif cut_short:
            self.passed.append(" ".join(words))
            self.hedged = self.hedged or bool(lowered & HEDGES) or "?" in line
        elif len(found) > 1 and _one_set(reader, found):
            # "SPEED 60 PATH A A A", "I'd like SPEED 40 and LANE B": parts of one set, not
            # alternatives; each is applied. Asked or hedged ("Would SPEED 60 LINE work?"),
            # the whole set is offered as one tap, never each part as a choice of its own.
            if lowered & HEDGES or "?" in line:
                self.offered.append("\n".join(phrase for _, _, phrase in found))
            else:
                self.applied += [phrase for _, _, phrase in found]
        elif len(found) > 1 or lowered & HEDGES or "?" in line:
            self.offered += [phrase for _, _, phrase in found]
        else:
            self.applied.append(found[0][2])


def _one_set(reader: _Reader, found: Sequence[tuple[int, int, str]]) -> bool:
    """Whether the phrases of one clause are parts of one set: each one order alone, no two of a
    kind, and the game takes them together as they stand."""
    kinds: set[type] = set()
    for _, _, phrase in found:
        if not reader.budget.spend():
            return False
        alone = reader.rules.parse_orders(reader.state, reader.seat, phrase)
        if len(alone.orders) != 1 or alone.problems or type(alone.orders[0]) in kinds:
            return False
        kinds.add(type(alone.orders[0]))
    return _takes(reader.rules, reader.state, reader.seat, "\n".join(p for _, _, p in found), reader.budget)


def _names_a_colour(reader: _Reader, line: str) -> bool:
    """Whether a line with no order word names a colour the game takes as COLOUR now ("Blue
    please", "I'd like the red car", "I'll take green"): read as prose, not passed over as a
    note, so that the colour is taken, or refused with whose it is."""
    if "COLOUR" not in reader.orders:
        return False
    return any(
        phrase.startswith("COLOUR ")
        for clause in _CLAUSE.split(line)
        for _, _, phrase in _phrases(
            reader.rules, reader.state, reader.seat, _words(clause), reader.orders, reader.budget, reader.letters
        )
    )


def _note(number: int, original: str, for_gm: ForTheGm | None) -> tuple[Reading, list[str]]:
    """A line read as a note: passed over, its place kept (the lines after it keep their numbers)."""
    return Reading(number, original.strip(), note=True, for_gm=for_gm), [""]


def _read_line(reader: _Reader, result: ProseResult, number: int, line: str) -> tuple[Reading | None, list[str]]:
    """How one line the parser did not understand is read (None: not read as prose, the
    parser's reason stands), and the lines that take its place."""
    original = line
    adding = _ADDING.search(line) is not None
    line = _ADDING.sub("", line) if adding else line
    keeps_rest = bool(_KEEP_REST.search(line))
    if keeps_rest:  # read as what it says of the set on file, the rest of the line as prose
        result.keeps_rest = True
        line = _KEEP_REST.sub("", line)
        if not _words(line) or is_courtesy(line.strip(" ,.;:!-")):
            return Reading(number, original.strip(), keeps_rest=True), [""]
    figure = _one_figure(reader, result, number, line)
    if figure is not None:
        return figure
    if _is_note(line, reader.orders, reader.letters) and not _names_a_colour(reader, line):
        return _note(number, original, for_the_gm(line))
    beside = _asked_and_rest(line)
    if beside is not None and not _is_note(beside[1], reader.orders, reader.letters):
        asked = _question_beside(reader, result, number, original, beside[1])
        if asked is not None:
            return asked
    if "?" in line and _ASKS.match(line):
        # "What does round 2 mean?": a question about the game, for the GM; its order words
        # are no orders offered back.
        return _note(number, original, ForTheGm.QUESTION)
    fallback = _with_fallback(reader.rules, reader.state, reader.seat, line, reader.orders, reader.budget)
    if fallback is not None:
        return dataclasses.replace(fallback, line_no=number), _order_lines(fallback.applied)
    clauses = _Clauses()
    for clause in _CLAUSE.split(line):
        clauses.take(reader, clause, line)
    applied, offered, negated = clauses.applied, clauses.offered, clauses.negated
    if not (applied or offered or negated):
        words_for_gm = for_the_gm(line)
        if words_for_gm is not None:
            # No order in it, and words for the GM (a question, a farewell): passed on, not refused.
            return _note(number, original, words_for_gm)
        reason = _reason_from_order_word(reader, original)
        if reason:
            result.reasons[number] = reason
        return None, [line]  # an order word, but no order: the game's reason stands
    if negated or offered or clauses.hedged:
        offered, applied = offered + applied, []  # a line that also negates or hedges applies nothing itself
        # Only an order the game takes now is offered as a one-tap link ("COLOUR IS" is none).
        offered = [
            phrase
            for phrase in dict.fromkeys(offered)
            if _takes(reader.rules, reader.state, reader.seat, phrase, reader.budget)
        ]
        if not (offered or negated) and (words_for_gm := for_the_gm(line)) is not None:
            return _note(number, original, words_for_gm)
    if adding and applied:  # "Oh and PUSH YES": an addition to the set on file
        keeps_rest = result.keeps_rest = True
    reading = Reading(
        number,
        original.strip(),
        tuple(applied),
        tuple(offered),
        tuple(negated),
        unread=tuple(clauses.passed),
        not_offered=tuple(clauses.not_offered),
        corrected=tuple(clauses.corrected) if applied else (),
        keeps_rest=keeps_rest,
    )
    return reading, _order_lines(applied)


def _asked_and_rest(line: str) -> tuple[str, str] | None:
    """A line that asks the GM something and goes on past its last question mark ("What does
    SKILL do exactly? I'll take DESIGN ACC 2 DEC 1", "Hi GM, is it OK if I'm late next week?
    Anyway: USE 2", "Can I change my order later? USE 4", "Should I use 6? USE 5"): the
    question and the words after it, when the question or one of its clauses opens as a
    question does (`_OPENS_QUESTION`). None for any other line ("use 6? maybe 5": a hedge, read
    as one) and for a question with nothing after it ("should I use 6?": an order asked,
    offered back)."""
    asked, mark, rest = line.rpartition("?")
    if not mark or not _words(rest):
        return None
    asked += mark
    if not any(_OPENS_QUESTION.match(clause) for clause in _CLAUSE.split(asked)):
        return None
    return asked, rest


def _question_beside(
    reader: _Reader, result: ProseResult, number: int, original: str, rest: str
) -> tuple[Reading, list[str]] | None:
    """A question for the GM with words after it: the question goes to the GM, and the words
    after it are read as any line is (applied, offered, or refused with the game's reason),
    never taken for part of the question. None when the words after it are read as no order
    and refused with no reason of their own ("Can I use 6? If not, 5": the whole line is read,
    and its orders offered)."""
    reading, lines = _read_line(reader, result, number, rest)
    if reading is None:  # an order word but no order: the game's reason for the rest stands
        if number not in result.reasons:
            return None
        return Reading(number, original.strip(), for_gm=ForTheGm.QUESTION), lines
    if reading.note:  # no order after all: the whole line is words for the GM
        return _note(number, original, reading.for_gm or ForTheGm.QUESTION)
    if not (reading.applied or reading.offered or reading.negated):
        return None
    return dataclasses.replace(reading, line=original.strip(), for_gm=ForTheGm.QUESTION), lines


def _reason_from_order_word(reader: _Reader, line: str) -> str:
    """The game's reason for `line` read from its first order word (or word in capitals: an
    order of another turn) on, when that word is not the line's first ("Oops, forgot: TYRES 1":
    the reason for TYRES 1, not for "Oops"; "and tyres: hard please": the reason for TYRES HARD,
    the courtesy after it left out); empty when the line starts with it or the game gives no
    reason."""
    words = _words(line)
    first = next(
        (
            i
            for i, w in enumerate(words)
            if _SPELLINGS.get(w.upper(), w.upper()) in reader.orders or _ORDER_WORD.fullmatch(w)
        ),
        None,
    )
    if not first or not reader.budget.spend():
        return ""
    said = words[first:]
    while len(said) > 1 and said[-1].lower() in _POLITE | {"cheers", "ta"}:
        said.pop()
    parsed = reader.rules.parse_orders(reader.state, reader.seat, " ".join(said))
    return parsed.problems[0].reason if parsed.problems else ""


def _taking_back(reader: _Reader, reading: Reading, before: list[str]) -> Reading:
    """A line that corrects what the mail said before it ("Wait, actually make that DESIGN TOP
    2" under DESIGN ACC 1 DEC 1): each earlier line of the mail (`before`, the order lines so
    far) that is one order the game takes, and that the game refuses beside the line's orders
    (a second DESIGN, a second USE), is taken out of `before` -- the last word counts -- and the
    reading says what it took back."""
    took_back: list[str] = []
    for index, earlier in enumerate(before):
        if not earlier.strip() or not reader.budget.spend():
            continue
        alone = reader.rules.parse_orders(reader.state, reader.seat, earlier)
        if len(alone.orders) != 1 or alone.problems or not reader.budget.spend():
            continue
        beside = reader.rules.parse_orders(reader.state, reader.seat, "\n".join([earlier, *reading.applied]))
        if beside.problems:
            took_back.append(reader.rules.format_orders(alone.orders))
            before[index] = ""
    return dataclasses.replace(reading, corrected=(*reading.corrected, *took_back)) if took_back else reading


def _order_lines(applied: Sequence[str]) -> list[str]:
    """The lines that take the place of a line read as the orders `applied` (one empty line
    when none is: the lines after it keep their numbers)."""
    return [part for order_line in applied or [""] for part in order_line.splitlines()]


def read(
    rules: AnyGame, state: GameState, seat: str, text: str, problems: Sequence[OrderProblem], orders: Collection[str]
) -> ProseResult:
    """`text` with each line the parser did not understand (`problems` of kind INVALID) read as
    prose: replaced by the phrases applied, or taken out when it was a note or its phrases are
    only offered or negated; every other line as it was."""
    unread = {p.line_no: p for p in problems if p.kind is ProblemKind.INVALID}
    # The bound, set before the reading starts: the first MAX_PROSE_LINES such lines, and
    # MAX_PARSES tries of the parser in all.
    unread = {n: unread[n] for n in sorted(unread)[:MAX_PROSE_LINES]}
    budget = _Budget()
    letters = frozenset(w for w in orders if len(w) == 1 and unread and _an_order(rules, state, seat, w, budget))
    required = (
        tuple(
            dict.fromkeys(
                w for w in _ORDER_WORD.findall(" ".join(rules.missing_orders(state, seat, ()))) if w in orders
            )
        )
        if unread
        else ()
    )
    reader = _Reader(rules, state, seat, frozenset(w for w in orders if len(w) > 1), letters, budget, required)
    out: list[str] = []
    result = ProseResult("")
    for number, line in enumerate(text.splitlines(), start=1):
        reading, lines = (
            (None, [line])
            if number not in unread or len(line) > MAX_LINE_CHARS
            else _read_line(reader, result, number, line)
        )
        if reading is not None and reading.applied and _CORRECTION.match(line):
            reading = _taking_back(reader, reading, out)
        if reading is not None:
            result.readings.append(reading)
        out += lines
        result.numbers += [number] * len(lines)
    result.text = "\n".join(out)
    return result


__all__ = ["HEDGES", "NEGATIONS", "ProseResult", "Reading", "order_words", "read"]
