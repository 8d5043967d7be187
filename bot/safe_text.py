"""Text from a mail, fit to be shown again: one line, printable, short.

SECURITY.md, "Text injection": a subject, a display name, a JOIN name or an order line comes
from whoever sent the mail, so it is never trusted to be one line, short or printable. An
encoded word can decode to CR LF and put lines of the sender's choice into the GM's digest
or into an answer; a bidi override can make a line read differently from what it holds.
Everything the bot echoes passes through `echo` first, wherever it goes: mail, digest,
HTML, archive, logs.
"""

from __future__ import annotations

import re
import unicodedata

# The longest echo of anything a mail said (a subject, a line of orders); names are shorter.
LINE_CAP = 200
NAME_CAP = 60
ELLIPSIS = "…"

# Characters that change how the text around them is read, without being "control"
# characters in the ASCII sense: bidi embeddings, overrides and isolates (Trojan Source,
# CVE-2021-42574), and the line and paragraph separators.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BREAKS = frozenset("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\t")


def _keep(char: str) -> str:
    """One character of the echo: breaks become a space, controls and format characters go."""
    if char in _BREAKS:
        return " "
    if char in _BIDI:
        return ""
    category = unicodedata.category(char)
    if category in ("Cc", "Cs", "Co", "Cn"):
        return ""
    if category == "Cf" and char != "\u200d":  # keep the zero-width joiner (emoji, scripts)
        return ""
    return char


def echo(text: str, cap: int = LINE_CAP) -> str:
    """`text` as one line without control or bidi characters, at most `cap` characters.

    Runs of white space fold to one space; a cut text ends in an ellipsis. Linear in the
    input, and reads at most a bounded prefix of it (a 100,000-character name costs the same
    as a 1,000-character one).
    """
    if not text or cap <= 0:
        return ""
    # Enough of the input to fill `cap` even if much of it is dropped; the rest is never read.
    window = text[: cap * 8 + 64]
    if window.isascii() and window.isprintable():
        # Printable ASCII (most of what is echoed): nothing to drop and the space the only white
        # space, so `_by_character`'s folding is the str methods' (a property test says so).
        folded = " ".join(window.split())
        over = len(folded) > cap
    else:
        folded, over = _by_character(window, cap)
    if over or len(window) < len(text):
        return folded[: max(0, cap - 1)].rstrip() + ELLIPSIS
    return folded


def _by_character(window: str, cap: int) -> tuple[str, bool]:
    """`window` folded a character at a time (`_keep`; runs of white space one space, none at
    either end) as far as its first `cap` + 1 characters kept, and whether there were more
    than `cap`."""
    out: list[str] = []
    length = 0
    space = False
    for char in window:
        kept = _keep(char) if not (" " <= char <= "~") else char
        if not kept:
            continue
        if kept.isspace():
            space = length > 0
            continue
        if space:
            out.append(" ")
            length += 1
            space = False
        out.append(kept)
        length += 1
        if length > cap:
            break
    return "".join(out), length > cap


ERROR_CAP = 400


def _words(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    text = str(value)
    if len(text) > 2 and text[0] == "b" and text[1] in "'\"" and text[-1] == text[1]:
        return text[2:-1]  # a server's bytes, repr'd by the library that raised
    return text


def error_text(exc: BaseException) -> str:
    """An exception as a log line or a status says it: its class and its words, one line,
    printable, a server's bytes decoded: ``ConnectionRefusedError: [Errno 111] Connection
    refused``, ``SMTPAuthenticationError: 535 5.7.8 Authentication failed`` -- never a repr
    (``ConnectionRefusedError(111, ...)``) or a ``b'...'`` dump. The words may be a server's:
    they pass through `echo`."""
    code, said = getattr(exc, "smtp_code", None), getattr(exc, "smtp_error", None)
    if isinstance(code, int) and said is not None:
        words = f"{code} {_words(said)}"
    elif exc.args and all(isinstance(a, str | bytes | bytearray) for a in exc.args):
        words = " ".join(_words(a) for a in exc.args)
    else:
        words = _words(exc)
    words = echo(words, ERROR_CAP)
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__


def echo_name(text: str) -> str:
    """A display name or a chosen player name, as shown anywhere."""
    return echo(text, NAME_CAP)


def name_from_address(local: str) -> str:
    """The name a person is called by when all the bot has is their address's local part
    (`local`: "zoe" of zoe@example.org): written as a name is, each word of it capitalised
    ("Zoe", "Sam.Jones" for sam.jones), where it is all in lower case; as written where it has
    a capital already ("Sam.Jones", "McKay"). A name the person gave is never passed here."""
    shown = echo_name(local)
    if shown != shown.lower():
        return shown
    return _WORD_START.sub(lambda m: m.group(1) + m.group(2).upper(), shown)


_WORD_START = re.compile(r"(^|[._\-\s])([a-z])")


def quote_lines(text: str, *, most: int = 20, prefix: str = "    > ") -> str:
    """Lines a mail held, quoted back: each echoed, at most `most` of them (then a count)."""
    lines = text.strip("\n").splitlines()
    shown = [prefix + echo(line) for line in lines[:most]]
    if len(lines) > most:
        shown.append(f"{prefix}[{len(lines) - most} more lines not shown]")
    return "\n".join(shown)
