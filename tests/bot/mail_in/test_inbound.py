"""bot.mail_in.parse: raw mail -> Inbound (mail-interface.md "Subject and body", "Mail that is never
answered", "Addresses and identity"; testing.md "What real mail looks like").

The fixtures in tests/data/mail are replies to a Flagman turn sheet whose quoted part carries
order-like lines ("USE 3", "ROUND 4: F1 F2"); the reply itself orders "USE 2" and
"ROUND 5: F3 F4". A quote that leaks into the text is therefore visible.
"""

from __future__ import annotations

import functools
from email.message import EmailMessage
from pathlib import Path

import pytest

from bench.budgets import big_attachment, big_html, line_filter_texts, nested_border_divs, quote_then_answer
from bot.letters.records import ignore_detail
from bot.mail_in.parse import (
    MAX_ADDRESSES_PER_FIELD,
    MAX_AUTH_RESULTS,
    MAX_HEADER_BYTES,
    MAX_HEADER_FIELDS,
    MAX_RECIPIENT_FIELDS,
    AuthResult,
    IgnoreReason,
    Inbound,
    address_parts,
    cap_header_section,
    cap_lines,
    decode_bytes,
    html_to_text,
    marked_orders,
    parse_authentication_results,
    parse_inbound,
    strip_quotes,
)
from tests.bot.mail_in.pattern_work import PatternWork, work_of

MAIL = Path(__file__).resolve().parents[2] / "data" / "mail"
OWN = ("flagman@example.org",)
ORDERS = "USE 2\nROUND 5: F3 F4"
LEAKS = ("USE 3", "ROUND 4", "F1 F2", "turn 4 results", "Deadline", "wrote", "From:", "Flagman <")

# The texts built to make the reader's patterns backtrack are judged by what the patterns are
# given (tests/bot/mail_in/pattern_work.py), not by a clock: how long they take is
# `python -m bench --only budgets` ("hostile-text", the same texts), and the hostile header
# sections are `python -m bench --only hostile`.
# At the ends of a text a line more or less is read: what "twice the work" allows beyond 2x.
ENDS = 16


def assert_linear(small: PatternWork, big: PatternWork) -> None:
    """On an input twice the size, the patterns were called at most twice as often and given at
    most twice the characters: their work grows with the input, not faster."""
    assert big.calls <= 2 * small.calls + ENDS, (small, big)
    assert big.chars <= 2 * small.chars + ENDS * big.longest, (small, big)


def parse_fixture(name: str, *, loop_value: str | None = None) -> Inbound:
    return parse_inbound((MAIL / name).read_bytes(), own_addresses=OWN, loop_value=loop_value)


def mail(headers: str, body: str = "USE 2\n") -> bytes:
    """A small mail from header lines (one per line) and a body."""
    return (headers.strip("\n") + "\n\n" + body).replace("\n", "\r\n").encode("utf-8")


PLAIN_HEADERS = (
    "From: Roger <roger@example.net>\nTo: flagman@example.org\nSubject: orders\nMessage-ID: <m1@example.net>"
)


# --- one reply per client style -------------------------------------------------------------

CLIENT_STYLES = {
    "gmail_top.eml": ORDERS,  # multipart/alternative, "On ... wrote:" + ">" quote
    "outlook_desktop.eml": ORDERS + "\n\nRegards, Roger",  # underscores + From/Sent block, cp1252 QP
    "outlook_header_block.eml": ORDERS,  # From [mailto:]/Sent/To/Subject block, no separator
    "apple_mail.eml": ORDERS,  # "> On ... wrote:" directly under the reply
    "iphone.eml": ORDERS,  # "Sent from my iPhone", QP soft-broken attribution
    "thunderbird_bottom.eml": ORDERS,  # bottom-post, format=flowed, "-- " signature
    "interleaved.eml": "USE 2\n\nROUND 5: F3 F4",  # answers between quoted lines
    "german_outlook.eml": ORDERS + "\n\nGrüße, Jörg",  # ISO-8859-1 QP, Von/Gesendet/An/Betreff
    "gmail_html_only.eml": ORDERS,  # text/html only, gmail_quote + blockquote
    "outlook_html_only.eml": "USE 2\n\nROUND 5: F3 F4",  # text/html only, <hr> + divRplyFwdMsg
    "latin1_base64_french.eml": "Voilà mes ordres :\n" + ORDERS,  # base64 ISO-8859-1, "a écrit :"
    "qp_wrapped_attribution.eml": ORDERS,  # QP UTF-8, attribution wrapped over two lines
    "thunderbird_html_bottom.eml": ORDERS,  # HTML bottom-post: moz-cite-prefix + blockquote first
    "unknown_charset.eml": "Grüße!\n" + ORDERS,  # charset label nobody knows, UTF-8 bytes
    "orders_block.eml": ORDERS,  # ORDERS..END with chatter around it and an Outlook quote
    "identity.eml": ORDERS,
}


@pytest.mark.parametrize("name", sorted(CLIENT_STYLES))
def test_reply_text_is_exactly_what_the_player_wrote(name: str) -> None:
    """Each client's reply yields the player's own lines and nothing of the quoted turn sheet."""
    inbound = parse_fixture(name)
    assert inbound.ignore is None, ignore_detail(inbound.ignore_why)
    assert inbound.text == CLIENT_STYLES[name]
    assert not inbound.truncated
    for marker in LEAKS:
        assert marker not in inbound.text, f"quote leaked: {marker!r}"


def test_orders_block_wins_over_the_chatter_around_it() -> None:
    """mail-interface.md: "An optional block ORDERS ... END marks them explicitly; when present,
    only the block counts." The sender's own text around it stays available in reply_text."""
    inbound = parse_fixture("orders_block.eml")
    assert inbound.text == ORDERS
    assert "USE 9" not in inbound.text
    assert "USE 9 was a typo" in inbound.reply_text
    assert "PASSWORD hunter2" in inbound.reply_text
    assert "USE 3" not in inbound.reply_text  # the Outlook quote is still stripped


def test_orders_block_is_case_insensitive_and_needs_an_end() -> None:
    """A lone ORDERS line is the player command, not a block: without END nothing is narrowed."""
    assert marked_orders("hi\norders:\nUSE 2\n  End  \nbye") == "USE 2"
    assert marked_orders("ORDERS\nUSE 2") is None
    assert marked_orders("> ORDERS\n> USE 3\n> END") is None


def test_orders_block_is_found_before_quote_stripping() -> None:
    """An explicit block wins even where the stripper would have cut (here after a signature)."""
    raw = mail(PLAIN_HEADERS, "Sent from my phone\nORDERS\nUSE 2\nEND\n")
    assert parse_inbound(raw, own_addresses=OWN).text == "USE 2"


def test_orders_block_inside_a_quoted_message_is_not_used() -> None:
    """A block in an Outlook-style quote (no ">") of an earlier mail must not replace the
    orders written above it; a block below a ">" quote (bottom-post) is the sender's."""
    outlook = "USE 2\n\nFrom: Flagman <flagman@example.org>\nSent: Monday\n\nORDERS\nUSE 3\nEND\n"
    assert parse_inbound(mail(PLAIN_HEADERS, outlook), own_addresses=OWN).text == "USE 2"
    after_signature = "USE 2\n-- \nRoger\n-----Original Message-----\nORDERS\nUSE 3\nEND\n"
    assert parse_inbound(mail(PLAIN_HEADERS, after_signature), own_addresses=OWN).text == "USE 2"
    bottom = "On Mon, GM wrote:\n> ORDERS\n> USE 3\n> END\n\nORDERS\nUSE 2\nEND\n"
    assert parse_inbound(mail(PLAIN_HEADERS, bottom), own_addresses=OWN).text == "USE 2"


# --- the line filter ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("USE 2\n\nOn Mon, 30 Nov 2026 at 18:00, GM <gm@x.org> wrote:\n> USE 3", "USE 2"),
        ("USE 2\nAm Mo., 30. Nov. 2026 um 18:00 Uhr schrieb GM <gm@x.org>:\n> USE 3", "USE 2"),
        ("USE 2\nLe lun. 30 nov. 2026 à 18:00, GM <gm@x.org> a écrit :\n> USE 3", "USE 2"),
        ("USE 2\nEl lun, 30 nov 2026 a las 18:00, GM (<gm@x.org>) escribió:\n> USE 3", "USE 2"),
        ("USE 2\nOn Mon, Nov 30, 2026 at 6:00 PM Game Master <\ngm@x.org> wrote:\n\n> USE 3", "USE 2"),
        ("USE 2\n\n-----Original Message-----\nFrom: GM\nUSE 3", "USE 2"),
        ("USE 2\n----- Original Message -----\nUSE 3", "USE 2"),
        ("USE 2\n-----Ursprüngliche Nachricht-----\nUSE 3", "USE 2"),
        ("USE 2\n________________________________\nUSE 3", "USE 2"),
        ("USE 2\nFrom: GM <gm@x.org>\nSent: Monday\nTo: me\nSubject: t\n\nUSE 3", "USE 2"),
        ("USE 2\nVon: GM <gm@x.org>\nGesendet: Montag\nAn: mich\nBetreff: t\n\nUSE 3", "USE 2"),
        ("USE 2\nDate: Mon\nSubject: t\nFrom: gm@x.org\nTo: me\n\nUSE 3", "USE 2"),
        ("USE 2\n-- \nRoger\nUSE 3", "USE 2"),
        ("USE 2\n--\nRoger\nUSE 3", "USE 2"),
        ("USE 2\n\nSent from my iPhone\n\nUSE 3", "USE 2"),
        ("USE 2\nGet Outlook for Android<https://aka.ms/ghei36>\nUSE 3", "USE 2"),
        ("USE 2\nEnvoyé de mon iPad\nUSE 3", "USE 2"),
        ("USE 2\nVon meinem iPhone gesendet\nUSE 3", "USE 2"),
        ("USE 2\nEnviado desde mi Samsung\nUSE 3", "USE 2"),
        ("USE 2\n從我的 iPhone 傳送\nUSE 3", "USE 2"),
        ("> USE 3\nUSE 2\n>> ROUND 4", "USE 2"),
        # Not attributions: the "On ..." false positives of the reply-parser test suites.
        ("On reflection:\nUSE 2", "On reflection:\nUSE 2"),
        ("On the other hand, USE 2\nOn average fine.", "On the other hand, USE 2\nOn average fine."),
        ("This email was sent from my desk\nUSE 2", "This email was sent from my desk\nUSE 2"),
        ("- USE 2\n- ROUND 5: F3 F4", "- USE 2\n- ROUND 5: F3 F4"),
        ("From: me, USE 2", "From: me, USE 2"),
        # A short order right above a one-line attribution is not part of a wrapped attribution.
        ("3 EP\nRoger wrote:\n> USE 3", "3 EP"),
        ("On lap 3: A 3\nOn Mon, 30 Nov 2026, GM wrote:\n> USE 3", "On lap 3: A 3"),
    ],
)
def test_strip_quotes(text: str, expected: str) -> None:
    """testing.md: drop ">" lines, attribution lines and what follows them, everything after
    "-- " and "Sent from my ..."; lines that merely look similar stay."""
    assert strip_quotes(text) == expected


def test_bottom_post_keeps_the_text_after_the_quote() -> None:
    """An attribution above ">" lines removes only itself and the quote (bottom-posting)."""
    text = "On 30/11/2026 18:00, GM wrote:\n> USE 3\n> ROUND 4: F1 F2\n\nUSE 2\nROUND 5: F3 F4"
    assert strip_quotes(text) == ORDERS


def test_attribution_without_a_quote_ends_the_reply() -> None:
    """Yahoo quotes without ">": after its attribution nothing is the sender's."""
    text = "USE 2\n\n    On Monday, 30 Nov 2026, GM <gm@x.org> wrote:\n\n USE 3\n ROUND 4: F1 F2"
    assert strip_quotes(text) == "USE 2"


def test_format_flowed_soft_breaks_are_joined() -> None:
    """RFC 3676: a line ending in a space continues on the next line of the same quote depth
    (DelSp=yes removes that space); "-- " stays the signature line."""
    body = "ROUND 5: F3 F4 F5 \nF6\nUSE 2\n> USE \n> 3\n-- \nRoger\n"
    flowed = "Content-Type: text/plain; charset=utf-8; format=flowed"
    assert parse_inbound(mail(PLAIN_HEADERS + "\n" + flowed, body), own_addresses=OWN).text == (
        "ROUND 5: F3 F4 F5 F6\nUSE 2"
    )
    delsp = flowed + "; delsp=yes"
    assert parse_inbound(mail(PLAIN_HEADERS + "\n" + delsp, "US \nE 2\n"), own_addresses=OWN).text == "USE 2"
    fixed = "Content-Type: text/plain; charset=utf-8"
    assert parse_inbound(mail(PLAIN_HEADERS + "\n" + fixed, body), own_addresses=OWN).text == (
        "ROUND 5: F3 F4 F5\nF6\nUSE 2"
    )


def test_cap_lines() -> None:
    """The text is capped at max_lines lines, and says so."""
    assert cap_lines("a\nb\nc", 2) == ("a\nb", True)
    assert cap_lines("a\nb", 2) == ("a\nb", False)
    assert cap_lines("a", 0) == ("", True)


def test_max_lines_truncates_and_flags() -> None:
    """A body longer than max_lines is cut at max_lines lines with truncated=True."""
    raw = mail(PLAIN_HEADERS, "".join(f"USE {i % 7}\n" for i in range(50)))
    inbound = parse_inbound(raw, own_addresses=OWN, max_lines=10)
    assert inbound.truncated
    assert inbound.text.split("\n") == [f"USE {i % 7}" for i in range(10)]


# --- HTML -----------------------------------------------------------------------------------


def test_html_quote_containers_are_removed_before_conversion() -> None:
    """Gmail's gmail_quote, Thunderbird's moz-cite-prefix and blockquotes never reach the text;
    text after a blockquote (bottom-post) does."""
    markup = (
        '<div>USE 2</div><div class="gmail_quote">On x wrote:<blockquote>USE 3</blockquote></div>'
        '<div class="moz-cite-prefix">On y wrote:</div><blockquote type="cite">ROUND 4: F1 F2</blockquote>'
        "ROUND 5: F3 F4"
    )
    text = html_to_text(markup)
    assert "USE 2" in text and "ROUND 5: F3 F4" in text
    assert "USE 3" not in text and "ROUND 4" not in text and "wrote" not in text


def test_html_outlook_border_top_header_block_cuts() -> None:
    """Outlook desktop puts the quoted header block in a border-top div: it and what follows go."""
    markup = (
        "<p>USE 2</p><div style='border:none;border-top:solid #E1E1E1 1.0pt'><p><b>From:</b> GM</p></div><p>USE 3</p>"
    )
    text = html_to_text(markup)
    assert "USE 2" in text and "USE 3" not in text and "From" not in text


def test_html_rule_inside_a_quote_does_not_cut_the_answer_below() -> None:
    """An <hr> in the quoted turn sheet is removed with its blockquote; the bottom-posted
    answer after the quote stays."""
    markup = "<blockquote><p>USE 3</p><hr><p>ROUND 4: F1 F2</p></blockquote><p>USE 2</p>"
    assert html_to_text(markup).strip() == "USE 2"


def test_html_nested_border_top_divs_stay_linear() -> None:
    """Thousands of nested border-top divs (hostile HTML) are checked on bounded text only: the
    quoted-header pattern is given the first 200 characters of a div (`_leading_text`), never
    all the text inside it, and twice the nesting gives the patterns at most twice the work."""
    small, big = (work_of(functools.partial(html_to_text, nested_border_divs(depth))) for depth in (1500, 3000))
    assert 0 < big.by_pattern["_HEADER_START_RE"].longest <= 200
    assert_linear(small, big)


def test_html_that_lxml_cannot_read_still_gives_text() -> None:
    """Broken markup never raises; the text survives."""
    assert "USE 2" in html_to_text("<<<>USE 2</p></div><!--")
    assert html_to_text("\x00\x01 ") == ""


def test_plain_part_preferred_but_empty_plain_falls_back_to_html() -> None:
    """get_body(('plain', 'html')) picks text/plain; an empty plain part falls back to the HTML."""
    msg = EmailMessage()
    msg["From"] = "roger@example.net"
    msg.set_content("   \n")
    msg.add_alternative("<p>USE 2</p>", subtype="html")
    assert parse_inbound(msg.as_bytes(), own_addresses=OWN).text == "USE 2"


# --- charsets and encodings -----------------------------------------------------------------


def test_decode_bytes_is_lenient() -> None:
    """Declared charset, else UTF-8, else Latin-1; bytes-to-bytes codecs and junk names are ignored."""
    assert decode_bytes("Grüße".encode("latin-1"), "iso-8859-1") == "Grüße"
    assert decode_bytes("Grüße".encode(), "no-such-charset") == "Grüße"
    assert decode_bytes("Grüße".encode("latin-1"), "utf-8") == "Grüße"
    assert decode_bytes(b"USE 2", "base64") == "USE 2"
    assert decode_bytes(b"USE 2", "utf\x00-8") == "USE 2"


def test_decode_bytes_stray_byte_and_mislabel() -> None:
    """UTF-8 with one stray byte keeps its UTF-8 (one replacement character); Latin-1 labelled
    UTF-8 reads as Latin-1 rather than as a row of replacement characters."""
    text = ("Grüße aus München, " * 20 + "USE 2").encode() + b"\xff"
    assert decode_bytes(text, "utf-8").count("\ufffd") == 1
    assert decode_bytes("Grüße, Jörg, café".encode("latin-1"), "utf-8") == "Grüße, Jörg, café"


def test_eight_bit_headers_are_read_as_utf8() -> None:
    """Raw UTF-8 in headers (RFC 6532 or just sloppy clients) is decoded, not mangled."""
    raw = "From: Jörg <jorg@example.net>\nSubject: Grüße\n\nUSE 2\n".encode()
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert (inbound.sender, inbound.sender_name, inbound.subject) == ("jorg@example.net", "Jörg", "Grüße")


def test_invisible_spaces_are_normalised() -> None:
    """NBSP and zero-width characters would make "USE 2" unparseable; they become plain."""
    raw = mail(PLAIN_HEADERS, "USE\u00a02\u200b\nROUND\u202f5: F3 F4\ufeff\n")
    assert parse_inbound(raw, own_addresses=OWN).text == ORDERS


# --- identity -------------------------------------------------------------------------------


def test_identity_headers() -> None:
    """mail-interface.md "Addresses and identity": sender, decoded name, every recipient header
    (to find the signed plus-address), ids without angle brackets, folded subject."""
    inbound = parse_fixture("identity.eml")
    assert inbound.sender == "roger@example.net"
    assert inbound.sender_name == "Jörg Rännfahrer"
    assert inbound.recipients == (
        "flagman+racecraft-1.roger.ab12cd@example.org",
        "roger.two@example.net",
        "flagman@example.org",
    )
    assert inbound.subject == "Re: [racecraft-1] Grüße and more"
    assert inbound.message_id == "fx-identity@example.net"
    assert inbound.in_reply_to == "turn-4.racecraft-1@example.org"
    assert inbound.references == ("turn-3.racecraft-1@example.org", "turn-4.racecraft-1@example.org")


def test_authentication_results_topmost_first() -> None:
    """RFC 8601 headers in order, comments and odd spacing ignored, dkim=pass domains from header.d."""
    inbound = parse_fixture("identity.eml")
    assert inbound.auth_results == (
        AuthResult("mx.example.org", "pass", ("example.net",), "pass", dmarc_from="example.net"),
        AuthResult("evil.example", "fail", (), None),
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("mx.example.org; none", AuthResult("mx.example.org", None, (), None)),
        (
            "mx.example.org 1; dkim=pass header.i=@Sub.Example.NET; dkim=pass header.d=b.example;"
            " dkim=fail header.d=evil.example",
            AuthResult("mx.example.org", None, ("sub.example.net", "b.example"), None),
        ),
        (
            "mx (comment; with = signs (nested) ) ; DMARC = Fail (p=reject; dis=none) header.from=x; spf=SoftFail",
            AuthResult("mx", "fail", (), "softfail", dmarc_from="x"),
        ),
        (
            'mx; dkim=pass reason="header.d=evil.example; ok" header.d=good.example',
            AuthResult("mx", None, ("good.example",), None),
        ),
        ("", AuthResult("", None, (), None)),
        ("mx; dkim=pass (unclosed comment header.d=x", AuthResult("mx", None, (), None)),
    ],
)
def test_parse_authentication_results(value: str, expected: AuthResult) -> None:
    """Robust to comments, quoting, case and spacing; a quoted reason cannot inject a domain."""
    assert parse_authentication_results(value) == expected


def test_address_parts() -> None:
    """Plus-addressing: flagman+<game>.<seat>.<mac>@host (mail-interface.md, signed reply address)."""
    assert address_parts("flagman+racecraft-1.roger.ab12cd@example.org") == (
        "flagman",
        "racecraft-1.roger.ab12cd",
        "example.org",
    )
    assert address_parts("<Flagman@Example.ORG>") == ("flagman", None, "example.org")
    assert address_parts("flagman+@example.org") == ("flagman", None, "example.org")
    assert address_parts("postmaster") == ("postmaster", None, "")


def test_missing_message_id_is_synthetic_and_stable() -> None:
    """No Message-ID: "<sha256 of the raw bytes>@flagman.invalid", so a redelivery is a duplicate."""
    raw = mail("From: roger@example.net")
    first = parse_inbound(raw, own_addresses=OWN)
    assert first.content_hash == __import__("hashlib").sha256(raw).hexdigest()
    assert first.message_id == f"{first.content_hash}@flagman.invalid"
    assert parse_inbound(raw, own_addresses=OWN).message_id == first.message_id


def test_size_defaults_to_raw_length_and_can_be_given() -> None:
    """size is the raw size unless the caller knows better (IMAP RFC822.SIZE)."""
    raw = mail(PLAIN_HEADERS)
    assert parse_inbound(raw, own_addresses=OWN).size == len(raw)
    assert parse_inbound(raw, own_addresses=OWN, size=12345).size == 12345


# --- mail that is never answered ------------------------------------------------------------

IGNORED_FIXTURES = {
    "ignore_ooo_auto_submitted.eml": (IgnoreReason.AUTO_REPLY, "Auto-Submitted"),
    "ignore_vacation_x_autoreply.eml": (IgnoreReason.AUTO_REPLY, "X-Autoreply"),
    "ignore_dsn_bounce.eml": (IgnoreReason.BOUNCE, "multipart/report"),
    "ignore_loop_header.eml": (IgnoreReason.LOOP, "X-Flagman-Loop"),
    "ignore_own_address.eml": (IgnoreReason.OWN_MAIL, "own address"),
    "ignore_precedence_bulk.eml": (IgnoreReason.BULK, "Precedence: bulk"),
}


@pytest.mark.parametrize("name", sorted(IGNORED_FIXTURES))
def test_mail_that_is_never_answered(name: str) -> None:
    """mail-interface.md "Mail that is never answered": bounces, auto-replies, bulk, our loop
    header, our own mail; ignore_detail names the reason."""
    reason, detail = IGNORED_FIXTURES[name]
    inbound = parse_fixture(name, loop_value="flagman@example.org")
    assert inbound.ignore is reason
    assert detail in ignore_detail(inbound.ignore_why)


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("Return-Path: <>", IgnoreReason.BOUNCE),
        ("Return-Path: < >", IgnoreReason.BOUNCE),
        ("Auto-Submitted: auto-generated (warning-timeout)", IgnoreReason.AUTO_REPLY),
        ("Auto-Submitted: Auto-Replied", IgnoreReason.AUTO_REPLY),
        ("X-Autorespond: vacation", IgnoreReason.AUTO_REPLY),
        ("Precedence: auto_reply", IgnoreReason.AUTO_REPLY),
        ("Precedence: junk", IgnoreReason.BULK),
        ("Precedence: LIST", IgnoreReason.BULK),
        ("x-flagman-loop: someone-else", IgnoreReason.LOOP),
        ("Auto-Submitted: no", None),
        ("X-Auto-Response-Suppress: All", None),
        ("Precedence: first-class", None),
        ("Return-Path: <roger@example.net>", None),
    ],
)
def test_ignore_policy_headers(extra: str, reason: IgnoreReason | None) -> None:
    """Each header of the ignore policy on its own; Auto-Submitted: no and
    X-Auto-Response-Suppress alone do not make an auto-reply."""
    inbound = parse_inbound(mail(PLAIN_HEADERS + "\n" + extra), own_addresses=OWN)
    assert inbound.ignore is reason
    if reason is not None:
        assert ignore_detail(inbound.ignore_why)


@pytest.mark.parametrize(
    "sender",
    ["MAILER-DAEMON@mx.example.net", "postmaster@example.net", "Mailer-Daemon"],
)
def test_bounce_senders(sender: str) -> None:
    """From MAILER-DAEMON or postmaster is a bounce."""
    inbound = parse_inbound(mail(f"From: {sender}\nTo: flagman@example.org"), own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.BOUNCE


@pytest.mark.parametrize(
    "sender",
    ["Flagman <FLAGMAN@example.org>", "flagman+racecraft-1.gm.zz99yy@EXAMPLE.org"],
)
def test_own_mail_case_insensitive_and_plus_tags(sender: str) -> None:
    """Our own address, in any case and with any plus-tag, is our own mail."""
    inbound = parse_inbound(mail(f"From: {sender}"), own_addresses=["Flagman <flagman@example.org>"])
    assert inbound.ignore is IgnoreReason.OWN_MAIL


def test_loop_detail_says_whether_the_value_is_ours() -> None:
    """Any loop header counts; the detail tells our own value from another's."""
    raw = mail(PLAIN_HEADERS + "\nX-Flagman-Loop: site-a")
    assert "(ours)" in ignore_detail(parse_inbound(raw, own_addresses=OWN, loop_value="site-a").ignore_why)
    other = parse_inbound(raw, own_addresses=OWN, loop_value="site-b")
    assert other.ignore is IgnoreReason.LOOP and "(ours)" not in ignore_detail(other.ignore_why)


@pytest.mark.parametrize("from_line", ["", "From: undisclosed-recipients:;", "From: Roger"])
def test_no_sender(from_line: str) -> None:
    """Without a usable From address the mail is never answered."""
    inbound = parse_inbound(mail("To: flagman@example.org\n" + from_line), own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.NO_SENDER
    assert inbound.sender == ""


def test_spoof_is_not_ignored_here() -> None:
    """A DMARC failure is for bot.auth to refuse, not an ignore: the topmost result shows it."""
    raw = mail(
        "Authentication-Results: mx.example.org; dmarc=fail (p=reject) header.from=example.net\n"
        "Authentication-Results: mx.example.org; dmarc=pass\n" + PLAIN_HEADERS
    )
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is None
    assert [r.dmarc for r in inbound.auth_results] == ["fail", "pass"]


# --- hostile input --------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"", b"\x00" * 100, b"\xff\xfe garbage \x00\x01", b"\n\n\n"])
def test_not_a_mail_is_unparseable(raw: bytes) -> None:
    """Bytes with no header fields are not a mail."""
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.UNPARSEABLE
    assert inbound.message_id.endswith("@flagman.invalid")


def test_deeply_nested_mime_keeps_the_headers() -> None:
    """Thousands of nested multiparts exhaust the stdlib parser: UNPARSEABLE, headers kept."""
    body = b"".join(b"--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n" % (i - 1, i) for i in range(1, 3000))
    raw = b"From: roger@example.net\nMessage-ID: <deep@x>\nContent-Type: multipart/mixed; boundary=b0\n\n" + body
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.UNPARSEABLE
    assert (inbound.sender, inbound.message_id) == ("roger@example.net", "deep@x")


def test_hundred_thousand_lines_are_cut_and_the_quote_left_out() -> None:
    """performance.md / testing.md: a 100,000-line mail must not stall the poll: its text is cut
    (and flagged) at 2,000 lines, its quoted lines left out. Its cost (0.5 s of CPU at most) is
    `python -m bench --only budgets` (bench.budgets.long_mail, the same mail)."""
    body = "USE 2\n> USE 3\n" * 50_000
    raw = mail(PLAIN_HEADERS, body)
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.truncated and inbound.text.count("\n") == 1999
    assert "USE 3" not in inbound.text


def test_hundred_thousand_quoted_lines_then_a_bottom_post() -> None:
    """A huge quote is walked line by line and the answer below it is found: a quote twice as
    long gives the patterns at most twice the work (a quoted line is passed over before any
    pattern sees it)."""
    small, big = (
        work_of(functools.partial(parse_inbound, quote_then_answer(lines), own_addresses=OWN))
        for lines in (50_000, 100_000)
    )
    assert_linear(small, big)
    assert parse_inbound(quote_then_answer(), own_addresses=OWN).text == "USE 2"


@pytest.mark.parametrize("case", list(line_filter_texts(1)))
def test_line_filter_has_no_pathological_input(case: str) -> None:
    """Lines built to make the attribution, header and signature patterns backtrack: a pattern
    is given one line, or an attribution wrapped over two, never the rest of the text; twice
    the lines give the patterns at most twice the work."""
    small, big = line_filter_texts(250)[case], line_filter_texts(500)[case]
    small_work, big_work = work_of(lambda: strip_quotes(small)), work_of(lambda: strip_quotes(big))
    assert 0 < big_work.longest <= 2 * max(len(line) for line in big.split("\n")) + 1
    assert_linear(small_work, big_work)


def test_five_megabyte_mails() -> None:
    """A 5 MB attachment is not decoded; a 5 MB HTML body is cut and flagged: the patterns are
    given exactly as much for the same mail at 10 MB (what they see is bounded, not the mail)."""

    def parsed(raw: bytes) -> tuple[Inbound, PatternWork]:
        with_work: list[Inbound] = []
        work = work_of(lambda: with_work.append(parse_inbound(raw, own_addresses=OWN)))
        return with_work[0], work

    for build in (big_attachment, big_html):
        (inbound, five), (_, ten) = parsed(build(5)), parsed(build(10))
        assert len(build(5)) >= 5_000_000
        assert five.calls and ten.by_pattern == five.by_pattern
        assert inbound.text.startswith("USE 2")
    assert parse_inbound(big_html(5), own_addresses=OWN).truncated


# The parser's throughput on these fixtures (over 1,000 mails a second: performance.md, the whole
# bot must ingest well over that) is `python -m bench --only budgets`, figure "fixtures".


@pytest.mark.parametrize(
    ("from_value", "sender", "name"),
    [
        ("Roger <Roger@Example.NET>", "roger@example.net", "Roger"),
        ('"Racer, Roger" <roger@example.net>', "roger@example.net", "Racer, Roger"),
        ("Racer, Roger <roger@example.net>", "roger@example.net", "Roger"),
        ("roger@example.net (Roger Racer)", "roger@example.net", "Roger Racer"),
        ("<roger@example.net>", "roger@example.net", ""),
        ("=?iso-8859-1?q?J=F6rg?= <jorg@example.net>", "jorg@example.net", "Jörg"),
    ],
)
def test_from_shapes(from_value: str, sender: str, name: str) -> None:
    """The From shapes clients produce all give the address (lower-cased) and the decoded name."""
    inbound = parse_inbound(mail(f"From: {from_value}"), own_addresses=OWN)
    assert (inbound.sender, inbound.sender_name) == (sender, name)


# --- hostile headers: bounded, linear work ----------------------------------------------------
#
# No timing assertions here (a machine may be slow or busy): bench/hostile.py times these
# mails. The tests check that what is read is capped, and that what matters is still found.

SIGNED = "flagman+rc1.seb.abcdefghijkl@example.org"


def one_line(text: str) -> bool:
    """mail-interface.md: "one line, without control or bidi characters"."""
    bidi = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    return not any(ch in bidi or ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029" for ch in text)


def test_only_the_first_authentication_results_are_parsed() -> None:
    """2 MB of Authentication-Results held the poll. Only the topmost one can count
    (bot.auth), so only the first MAX_AUTH_RESULTS are parsed, topmost first."""
    fields = [f"Authentication-Results: mx{i}.example.org; dmarc=pass header.from=example.net" for i in range(2000)]
    inbound = parse_inbound(mail(PLAIN_HEADERS + "\n" + "\n".join(fields)), own_addresses=OWN)
    assert [r.authserv_id for r in inbound.auth_results] == [f"mx{i}.example.org" for i in range(MAX_AUTH_RESULTS)]
    assert inbound.sender == "roger@example.net" and inbound.text == "USE 2"


@pytest.mark.parametrize(
    "value",
    [
        "mx.example.org; " + "a" * 16_000,  # one long token without "=": was retried from each position
        "mx.example.org; dkim=pass header.d=" + "b" * 16_000,
        "mx.example.org; " + "a=" * 8_000,
        "mx.example.org; " + 'x="' * 5_000,
        "mx.example.org; " + "(" * 8_000 + "dmarc=pass",
        "mx.example.org; dmarc=pass header.from=example.net " + "\\" * 8_000,
    ],
    ids=["token", "long-value", "equals", "open-quotes", "open-comments", "backslashes"],
)
def test_authentication_results_built_to_backtrack_give_a_result(value: str) -> None:
    """The property pattern is linear (a key starts a token; possessive repeats), and
    a long value still parses to a result."""
    result = parse_authentication_results(value)
    assert result.authserv_id == "mx.example.org"
    assert result.dmarc in (None, "pass")


@pytest.mark.parametrize(
    ("value", "dmarc_from"),
    [
        ("mx; dmarc=pass (p=none) header.from=Example.NET.", "example.net"),
        ("mx; dmarc=pass header.from=roger@example.net", "example.net"),
        ("mx; dmarc=pass", None),
        ("mx; dmarc=pass header.from=", None),
        ('mx; dmarc=pass reason="header.from=evil.example" header.from=example.net', "example.net"),
        ("mx; dmarc=fail header.from=evil.example; dmarc=pass header.from=example.net", "evil.example"),
    ],
)
def test_the_dmarc_header_from_is_kept(value: str, dmarc_from: str | None) -> None:
    """AuthResult keeps the From domain DMARC checked (header.from, RFC 7489), of the
    first dmarc result, so bot.auth can require it to be the From the bot read."""
    assert parse_authentication_results(value).dmarc_from == dmarc_from


def test_a_signed_address_is_found_among_140000_cc_addresses() -> None:
    """140,000 Cc addresses held the poll (a quadratic de-duplication). Recipient
    fields are only read to find the bot's plus-address: at most MAX_RECIPIENT_FIELDS fields of
    each name and MAX_ADDRESSES_PER_FIELD addresses of each, and the signed address is found."""
    one = ",\n ".join(f"u{i}@x{i % 97}.example" for i in range(140_000))
    many = "\n".join("Cc: " + ", ".join(f"u{i}@x.example" for i in range(k, k + 100)) for k in range(0, 5_000, 100))
    for cc in ("Cc: " + one, many):
        raw = mail(f"From: roger@example.net\nTo: Flagman <{SIGNED}>\n{cc}\nSubject: orders")
        inbound = parse_inbound(raw, own_addresses=OWN)
        assert inbound.recipients[0] == SIGNED
        assert len(inbound.recipients) <= 1 + MAX_RECIPIENT_FIELDS * MAX_ADDRESSES_PER_FIELD
        assert inbound.ignore is None and inbound.text == "USE 2"


def test_recipient_fields_over_the_cap_are_not_read() -> None:
    """At most MAX_RECIPIENT_FIELDS To fields are read; a plus-address in the 11th is not looked at."""
    fields = "\n".join(f"To: nobody{i}@example.net" for i in range(MAX_RECIPIENT_FIELDS))
    raw = mail(f"From: roger@example.net\n{fields}\nTo: {SIGNED}")
    assert SIGNED not in parse_inbound(raw, own_addresses=OWN).recipients
    raw = mail(f"From: roger@example.net\n{fields}\nDelivered-To: {SIGNED}")
    assert SIGNED in parse_inbound(raw, own_addresses=OWN).recipients


def test_a_long_recipient_value_is_scanned_not_parsed() -> None:
    """A value over a few thousand characters is scanned for address-like tokens (the stdlib's
    address parser is slow on long hostile values); quotes, comments and groups still split."""
    value = f'"Flagman" <{SIGNED}>, ' + ", ".join(f'"N{i}, x" <n{i}@example.net> (c{i})' for i in range(300))
    inbound = parse_inbound(mail(f"From: roger@example.net\nTo: {value}"), own_addresses=OWN)
    assert inbound.recipients[0] == SIGNED
    assert len(inbound.recipients) == MAX_ADDRESSES_PER_FIELD
    assert all("@" in r and "<" not in r and '"' not in r for r in inbound.recipients)


def test_the_header_section_is_capped_in_fields() -> None:
    """Fields after the first MAX_HEADER_FIELDS are never parsed; a defect says so,
    and the body is still read."""
    pad = "\n".join(f"X-Pad-{i}: v" for i in range(MAX_HEADER_FIELDS + 500))
    inbound = parse_inbound(mail(PLAIN_HEADERS + "\n" + pad + "\nPrecedence: bulk"), own_addresses=OWN)
    assert inbound.ignore is None, "the Precedence field beyond the cap is not read"
    assert inbound.sender == "roger@example.net" and inbound.text == "USE 2"
    assert any(str(MAX_HEADER_FIELDS) in d for d in inbound.defects)
    # Within the cap, nothing is cut.
    pad = "\n".join(f"X-Pad-{i}: v" for i in range(MAX_HEADER_FIELDS - 10))
    inbound = parse_inbound(mail(PLAIN_HEADERS + "\n" + pad + "\nPrecedence: bulk"), own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.BULK and not inbound.defects


def test_the_header_section_is_capped_in_bytes() -> None:
    """What lies beyond the first MAX_HEADER_BYTES of the header section is never
    parsed (folded lines of one field or one huge line alike); the body is still read."""
    folded = "X-Big: " + "\n ".join(["y" * 70] * (MAX_HEADER_BYTES // 60))
    one_line_field = "X-Big: " + "z" * (MAX_HEADER_BYTES + 10)
    for big in (folded, one_line_field):
        inbound = parse_inbound(mail(PLAIN_HEADERS + "\n" + big + "\nPrecedence: bulk"), own_addresses=OWN)
        assert inbound.ignore is None and inbound.text == "USE 2"
        assert any(str(MAX_HEADER_BYTES) in d for d in inbound.defects)


@pytest.mark.parametrize("newline", [b"\r\n", b"\n", b"\r"])
def test_cap_header_section_keeps_the_body(newline: bytes) -> None:
    """cap_header_section cuts at a field boundary and keeps the empty line and the body, with
    any line ending the parser accepts; a header section within the caps is returned as is."""
    head = newline.join(b"X-%d: v" % i for i in range(MAX_HEADER_FIELDS + 5))
    raw = head + newline + newline + b"USE 2" + newline
    capped, defects = cap_header_section(raw)
    assert defects and capped.endswith(newline + newline + b"USE 2" + newline)
    assert b"X-%d:" % (MAX_HEADER_FIELDS - 1) in capped and b"X-%d:" % MAX_HEADER_FIELDS not in capped
    small = b"From: a@b.example" + newline + newline + b"USE 2"
    assert cap_header_section(small) == (small, ())
    assert cap_header_section(b"\n\nno header") == (b"\n\nno header", ())


def test_a_part_with_a_hundred_thousand_fields_is_read() -> None:
    """A MIME part's fields are capped too (the parser keeps the first MAX_HEADER_FIELDS)."""
    fields = "".join(f"X-Pad-{i}: v\n" for i in range(100_000))
    raw = mail(
        PLAIN_HEADERS + "\nContent-Type: multipart/mixed; boundary=B",
        f"--B\n{fields}Content-Type: text/plain\n\nUSE 2\n--B--\n",
    )
    assert parse_inbound(raw, own_addresses=OWN).text == "USE 2"


def test_two_from_fields_are_ambiguous() -> None:
    """With two From fields the receiving server may have checked (DMARC) one and the
    bot read the other, so a mail with more than one authenticates no one: it is ignored
    (never answered, so no one can be made to receive mail by it), its sender empty."""
    raw = mail(
        "Authentication-Results: mx.example.org; dmarc=pass header.from=evil.example\n"
        "From: Seb <seb@example.net>\nFrom: Mallory <mallory@evil.example>\n"
        f"To: {SIGNED}\nSubject: orders"
    )
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.AMBIGUOUS_SENDER
    assert IgnoreReason.AMBIGUOUS_SENDER.value == "several senders"
    assert inbound.sender == "" and inbound.sender_name == ""
    assert "2 From header fields" in ignore_detail(inbound.ignore_why)
    assert "seb@example.net" in ignore_detail(inbound.ignore_why) and "mallory@evil.example" in ignore_detail(
        inbound.ignore_why
    )
    # Also when both fields say the same: one was added after the server checked the other.
    same = mail("From: seb@example.net\nFrom: seb@example.net\nTo: flagman@example.org")
    assert parse_inbound(same, own_addresses=OWN).ignore is IgnoreReason.AMBIGUOUS_SENDER


@pytest.mark.parametrize(
    "from_value",
    [
        "seb@example.net, mallory@evil.example",
        "Seb <seb@example.net>, Mallory <mallory@evil.example>",
        "friends: seb@example.net, mallory@evil.example;",
        "seb@example.net mallory@evil.example",
    ],
)
def test_a_from_with_several_mailboxes_is_ambiguous(from_value: str) -> None:
    """A From with more than one mailbox (RFC 5322 allows it with a Sender) names
    several senders: ignored like two From fields."""
    inbound = parse_inbound(mail(f"From: {from_value}\nTo: flagman@example.org"), own_addresses=OWN)
    assert inbound.ignore in (IgnoreReason.AMBIGUOUS_SENDER, IgnoreReason.NO_SENDER)
    assert inbound.sender == ""
    if "," in from_value:
        assert inbound.ignore is IgnoreReason.AMBIGUOUS_SENDER, ignore_detail(inbound.ignore_why)


def test_an_over_long_from_gives_no_sender() -> None:
    """A From value longer than the cap is not cut (the cut could leave an address
    written in the display name as the sender): it is no usable From."""
    raw = mail("From: seb@example.net " + "x" * 20_000 + " <mallory@evil.example>\nTo: flagman@example.org")
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.NO_SENDER and inbound.sender == ""
    assert "characters" in ignore_detail(inbound.ignore_why)


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("=?utf-8?q?Orders=0D=0ABcc:_victim@example.com?=", "Orders Bcc: victim@example.com"),
        ("=?utf-8?q?USE_2=E2=80=AE3_ESU?=", "USE 23 ESU"),  # a right-to-left override
        ("=?utf-8?b?" + "QQBCAEMbWzMxbQ==" + "?=", "ABC[31m"),  # NUL and ESC
        ("Re:\t[rc1]   Turn   3", "Re: [rc1] Turn 3"),
        ("=?utf-8?q?a=E2=80=A8b=C2=85c?=", "a b c"),  # line and next-line separators
    ],
)
def test_the_subject_is_one_printable_line(subject: str, expected: str) -> None:
    """mail-interface.md: "Text taken from a mail and shown anywhere (subject, display name,
    names, order lines) is one line, without control or bidi characters, and capped in
    length" -- from parse time on (bot.safe_text.echo), so an encoded word decoding to CR LF, a
    control or a bidi override never reaches anything downstream."""
    inbound = parse_inbound(mail(f"From: roger@example.net\nSubject: {subject}"), own_addresses=OWN)
    assert inbound.subject == expected
    assert one_line(inbound.subject)


def test_the_display_name_is_one_printable_line() -> None:
    """mail-interface.md "... one line, without control or bidi characters, and capped in
    length": the From display name passes through bot.safe_text.echo_name at parse time."""
    raw = mail("From: =?utf-8?q?Seb=0D=0ABcc=3A_x=E2=80=AE=07?= <seb@example.net>")
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.sender == "seb@example.net"
    assert inbound.sender_name == "Seb Bcc: x"


@pytest.mark.parametrize("encoded", [False, True])
def test_a_hundred_thousand_character_subject_is_capped(encoded: bool) -> None:
    """A 100,000-character non-ASCII subject (raw UTF-8 or RFC 2047 words) is decoded
    from its first few thousand characters only and echoed: at most 200 characters, one line,
    ending in an ellipsis; the same mail gives the same subject (it is part of a dedupe key)."""
    text = ("é\u202eñ" * 34_000)[:100_000]
    if encoded:
        import base64

        value = "\n ".join(
            "=?utf-8?b?" + base64.b64encode(text[i : i + 12].encode()).decode() + "?=" for i in range(0, len(text), 12)
        )
    else:
        value = text
    raw = mail(f"From: roger@example.net\nSubject: {value}")
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert len(inbound.subject) <= 200 and inbound.subject.endswith("…")
    assert inbound.subject.startswith("éñéñ") and one_line(inbound.subject)
    assert parse_inbound(raw, own_addresses=OWN).subject == inbound.subject


def test_a_long_encoded_display_name_is_capped() -> None:
    """A display name of thousands of characters within the From cap is decoded (from its first
    few thousand characters) and echoed: at most 60 characters, one line."""
    import base64

    words = " ".join("=?utf-8?b?" + base64.b64encode(("ñ\u2066" * 6).encode()).decode() + "?=" for _ in range(250))
    inbound = parse_inbound(mail(f"From: {words} <seb@example.net>"), own_addresses=OWN)
    assert inbound.sender == "seb@example.net"
    assert 0 < len(inbound.sender_name) <= 60 and set(inbound.sender_name) <= {"ñ", "…"}


def test_a_cut_8bit_header_is_still_read_as_utf8() -> None:
    """A raw UTF-8 value cut at the cap does not end in half a character (which would make the
    whole value read as Latin-1)."""
    inbound = parse_inbound(
        ("From: roger@example.net\nSubject: " + "é" * 20_001 + "\n\nUSE 2\n").encode(), own_addresses=OWN
    )
    assert inbound.subject.startswith("éé") and "Ã" not in inbound.subject


def test_header_text_in_ignore_detail_is_echoed() -> None:
    """ignore_detail (shown in the digest) quotes header text: one printable line, capped."""
    raw = mail(PLAIN_HEADERS + "\nPrecedence: bulk \x1b[2J\u202e" + "x" * 5_000)
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is IgnoreReason.BULK
    assert one_line(ignore_detail(inbound.ignore_why)) and len(ignore_detail(inbound.ignore_why)) <= 220
