"""The record's words given as typed facts (bot.letters.records): a command's label and why the
ignore policy passed a mail by. The GM reads both in the digest and `flagman gm audit`
(docs/DESIGN.md, "A mail's record is the letters' words too"); each is pinned here to the line
the record has always carried, so a record reads the same whatever code gives its facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.letters.records import Came, command_label, ignore_detail
from bot.mail_in.parse import Ignore, IgnoreWhy
from bot.safe_text import LINE_CAP

LABELS = [
    (command_label("PING"), "PING"),
    (command_label("CALENDAR", came=Came.REFUSED), "CALENDAR refused"),
    (command_label("CALENDAR", on=True), "CALENDAR ON"),
    (command_label("REMINDERS", on=False), "REMINDERS OFF"),
    (command_label("UNSUBSCRIBE", came=Came.NOTHING), "UNSUBSCRIBE: nothing"),
    (command_label("UNSUBSCRIBE", "rc1", came=Came.OBSERVER), "UNSUBSCRIBE observer rc1"),
    (command_label("UNSUBSCRIBE", "rc1", "red", came=Came.REMINDERS), "UNSUBSCRIBE reminders rc1 red"),
    (command_label("OBSERVE", "rc1", came=Came.ASKED), "OBSERVE rc1 asked"),
    (command_label("UNOBSERVE", "rc1", "sc2"), "UNOBSERVE rc1 sc2"),
    (command_label("CONFIRM JOIN", "cup", came=Came.NEXT_SEASON), "CONFIRM JOIN cup: the next season"),
    (command_label("OFFER", "rc1", "red", came=Came.TAKEN), "OFFER rc1 red taken"),
    (command_label("SUBSTITUTE", "racecraft", on=True), "SUBSTITUTE ON racecraft"),
    (command_label("SUBSTITUTE", on=True, came=Came.ASKED), "SUBSTITUTE ON asked"),
    (command_label("VACATION", "2026-12-01", "2026-12-09"), "VACATION 2026-12-01 2026-12-09"),
    (command_label("RATING", came=Came.WANTS_PROOF), "RATING refused: the setting wants a proven mail"),
    (command_label("WAIT", came=Came.PRACTICE_RACE), "WAIT refused: a practice race"),
    (command_label("WAIT", "rc1", came=Came.NOTHING_TO_HOLD), "WAIT rc1: nothing to hold"),
    (command_label("NOWAIT", "rc1", came=Came.NOTHING_TO_LIFT), "NOWAIT rc1: nothing to lift"),
    (command_label("NOWAIT", "rc1", came=Came.RESOLVES), "NOWAIT rc1: the turn resolves"),
    (command_label("JOIN", "rc1", "red", came=Came.SEAT), "JOIN rc1: seat red"),
    (command_label("RESIGN", came=Came.DONE), "RESIGN done"),
    (command_label("PREVIEW", came=Came.DONE), "PREVIEW done"),
]


def test_a_command_label_reads_as_the_record_has_it() -> None:
    """Each way a command can end is said as the record's "commands: ..." line has always
    listed it (the command's name, its values, then what came of it)."""
    for label, expected in LABELS:
        assert label == expected


@given(
    verb=st.sampled_from(["PING", "WAIT", "CONFIRM JOIN", "STATUS"]),
    values=st.lists(st.from_regex(r"[a-z0-9_-]{1,20}", fullmatch=True), max_size=3),
    came=st.sampled_from([came for came in Came if came is not Came.SEAT]),
    on=st.sampled_from([None, True, False]),
)
def test_a_command_label_is_one_line_that_starts_with_the_command(
    verb: str, values: list[str], came: Came, on: bool | None
) -> None:
    label = command_label(verb, *values, came=came, on=on)
    assert label.startswith(verb) and "\n" not in label
    assert all(value in label for value in values)


IGNORED = [
    (Ignore(IgnoreWhy.LOOP, header="X-Flagman-Loop", value="site-a", ours=True), "X-Flagman-Loop: site-a (ours)"),
    (Ignore(IgnoreWhy.LOOP, header="X-Flagman-Loop", value=""), "X-Flagman-Loop: (empty)"),
    (Ignore(IgnoreWhy.OWN_FROM, value="flagman@example.org"), "From is our own address flagman@example.org"),
    (Ignore(IgnoreWhy.HEADER, header="Content-Type", value="multipart/report"), "Content-Type: multipart/report"),
    (Ignore(IgnoreWhy.HEADER, header="Precedence", value="bulk"), "Precedence: bulk"),
    (Ignore(IgnoreWhy.NULL_RETURN_PATH), "Return-Path: <> (null sender)"),
    (
        Ignore(IgnoreWhy.SEVERAL_FROMS, count=5, addresses=("a@x.net", "?", "c@x.net"), more=True),
        "5 From header fields (a@x.net, ?, c@x.net, ...): several senders, none is believed",
    ),
    (
        Ignore(IgnoreWhy.SEVERAL_MAILBOXES, addresses=("a@x.net", "b@x.net")),
        "a From with several mailboxes (a@x.net, b@x.net): several senders, none is believed",
    ),
    (Ignore(IgnoreWhy.LONG_FROM, count=17012), "From header of 17012 characters: not read"),
    (Ignore(IgnoreWhy.LONG_ADDRESS), "a From address longer than mail allows (RFC 5321)"),
    (Ignore(IgnoreWhy.NO_FROM), "no usable From address"),
    (Ignore(IgnoreWhy.PARSER_FAILED, value="KeyError"), "parser failed: KeyError"),
    (Ignore(IgnoreWhy.NO_HEADERS), "no header fields: not a mail"),
    (Ignore(IgnoreWhy.MIME_UNREADABLE, value="RecursionError"), "MIME structure not readable: RecursionError"),
    (Ignore(IgnoreWhy.CALENDAR, value="REPLY"), "text/calendar; method=REPLY (a calendar client's answer)"),
]


def test_why_a_mail_was_ignored_reads_as_the_record_has_it() -> None:
    """Every reason the parser gives is said, with the header text it quotes, as the record's
    "ignored" line has always said it; a mail not ignored has no words."""
    assert {ignore.why for ignore, _ in IGNORED} == set(IgnoreWhy)
    for ignore, expected in IGNORED:
        assert ignore_detail(ignore) == expected
    assert ignore_detail(None) == ""


@given(st.lists(st.text(max_size=300), min_size=2, max_size=3), st.booleans())
def test_the_addresses_of_several_senders_are_one_printable_line(addresses: list[str], more: bool) -> None:
    """The addresses of an ambiguous From are the mail's own text: the line naming them is one
    printable line, capped, whatever they hold (control characters, line ends, bidi marks)."""
    for why in (IgnoreWhy.SEVERAL_FROMS, IgnoreWhy.SEVERAL_MAILBOXES):
        line = ignore_detail(Ignore(why, count=len(addresses), addresses=tuple(addresses), more=more))
        assert line.isprintable() and len(line) <= LINE_CAP
