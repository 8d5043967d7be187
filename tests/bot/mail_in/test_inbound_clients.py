"""bot.mail_in.parse on the project's own fixtures of what real mail looks like (testing.md, "What
real mail looks like"): the reply styles of the common clients, the traps, charsets and MIME
structures, and the bounces and auto-replies that are never answered.

Like those of test_inbound.py, the fixtures in tests/data/mail are replies to a Flagman turn sheet
whose quoted part carries order-like lines ("USE 3", "ROUND 4: F1 F2"), while the reply orders
"USE 2" and "ROUND 5: F3 F4": a quote that leaks into the text is visible. They cover the
categories of the external corpus (test_inbound_corpus.py), so these checks hold on every clone;
the corpus is an extra check where a machine has it. Parse-only: no server.
"""

from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from bot.letters.records import ignore_detail
from bot.mail_in.parse import IgnoreReason, Inbound, decode_bytes, decode_words, parse_inbound, strip_quotes
from tests.bot.mail_in.test_inbound import CLIENT_STYLES, IGNORED_FIXTURES, LEAKS, MAIL, ORDERS, OWN


def parse(name: str) -> Inbound:
    return parse_inbound((MAIL / name).read_bytes(), own_addresses=OWN)


def lines(text: str) -> list[str]:
    """The non-blank lines of a text (HTML renderings differ from plain text in blank lines only)."""
    return [line for line in text.split("\n") if line.strip()]


# --- the reply text of each client style ------------------------------------------------------

CLIENTS = {
    # reply styles
    "hotmail_quoted_headers.eml": ORDERS,
    "hotmail_html_only.eml": ORDERS + "\n\nCheers,\nFemi",
    "yahoo_original_message.eml": ORDERS + "\n\nTomasz",
    "yahoo_indented_attribution.eml": ORDERS,
    "aol_original_message.eml": ORDERS,
    "comcast_original_message.eml": ORDERS,
    "android_russian_wrapped.eml": ORDERS,
    "sparrow_signature_nested.eml": ORDERS,
    "blackberry_original_message.eml": ORDERS,
    "apple_mail_dutch.eml": ORDERS + "\n\nGroet,\nSanne",
    "iphone_dutch_signature.eml": ORDERS,
    "iphone_japanese_signature.eml": ORDERS + "\n\nよろしくお願いします。",
    "iphone_chinese_signature.eml": ORDERS,
    "iphone_korean_signature.eml": ORDERS,
    "outlook_ios.eml": ORDERS,
    "outlook_wrapped_from.eml": ORDERS + "\n\nKind regards,\nPriya",
    "gmail_wrapped_name.eml": ORDERS,
    "german_schrieb_no_space.eml": ORDERS,
    # Word's paragraphs render with a blank line between them.
    "outlook2010_html_only.eml": "USE 2\n\nROUND 5: F3 F4\n\nThanks,\n\nOlga",
    "thunderbird_html_only.eml": ORDERS,
    # traps
    "on_false_positive.eml": (
        "On the whole that last lap went better than I feared.\n\n"
        "On the straight I want to push harder, so:\n" + ORDERS + "\n\n"
        "On second thoughts keep the spare tyres for the final lap.\n"
        "On Friday I may be late, the orders above stand."
    ),
    "rfc3676_signature.eml": "A short one this time -- see you at the finish.\n\n" + ORDERS,
    "bottom_post_list_footer.eml": (
        "Hi all,\n\nThis time I take it easier:\n\nUSE 2\n\nand on the next round the outside line:\n\nROUND 5: F3 F4"
    ),
    "hyphen_list_signoff.eml": "Hi GM,\n\n- USE 2\n- ROUND 5: F3 F4\n\nThanks,\nBea",
    # charsets and structures
    "windows1252_smart_quotes.eml": (
        "Here\u2019s my turn \u2013 I\u2019m going \u201cflat out\u201d this lap\u2026\n\n"
        + ORDERS
        + "\n\nI owe you \u20ac5 for the last race.\nNiamh"
    ),
    "qp_malformed_transfer_encoding.eml": (
        "Bonjour, voici mes ordres pour le prochain tour de la course, cette fois avec prudence :\n\n"
        + ORDERS
        + "\n\nRen\u00e9"
    ),
    "iso2022jp_gmail_japanese.eml": "佐藤です。\n\n" + ORDERS + "\n\nよろしくお願いします。",
    "shift_jis_outlook_japanese.eml": ORDERS + "\n\n以上です。\n中村",
    "gb2312_foxmail_chinese.eml": "GM你好，\n\n" + ORDERS + "\n\n谢谢！",
    "big5_gmail_traditional_chinese.eml": ORDERS + "\n\n林美",
    "euc_kr_gmail_korean.eml": "안녕하세요,\n\n" + ORDERS + "\n\n감사합니다.",
    "koi8r_thebat_russian.eml": "Здравствуйте, Flagman.\n\n" + ORDERS,
    "mixed_broken_charsets.eml": "Grüße aus Zürich – Zoë\n\n" + ORDERS,
    "mixed_alternative_attachment.eml": ORDERS + "\n\nMy lap chart is attached.\nLena",
    "html_bogus_boundary.eml": "Orders for racecraft-1:\n\n" + ORDERS + "\n\n-- Kofi",
    "pgp_mime_signed.eml": ORDERS,
    "pgp_inline_signed.eml": "Orders:\n- USE 2\n- ROUND 5: F3 F4",
    "smime_signed.eml": ORDERS + "\n\nBr, Sofia",
    "forwarded_rfc822.eml": "The sheet went to my old address, so from the new one:\n\n" + ORDERS,
    # A forwarded message is someone else's text: never the sender's orders.
    "forwarded_rfc822_only.eml": "",
}


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_each_client_reply_is_exactly_what_the_player_wrote(name: str) -> None:
    """Each client's reply yields exactly the player's own lines: no quoted turn sheet, no
    attribution or header block, no signature, nothing lost to decoding."""
    inbound = parse(name)
    assert inbound.ignore is None, ignore_detail(inbound.ignore_why)
    assert inbound.text == CLIENTS[name]
    assert not inbound.truncated and not inbound.defects
    for marker in LEAKS:
        assert marker not in inbound.text, f"quote leaked: {marker!r}"


# multipart/alternative fixtures whose HTML part carries the same reply as the plain part.
HTML_ALTERNATIVES = [
    "hotmail_quoted_headers.eml",
    "yahoo_indented_attribution.eml",
    "aol_original_message.eml",
    "comcast_original_message.eml",
    "android_russian_wrapped.eml",
    "sparrow_signature_nested.eml",
    "outlook_ios.eml",
    "gmail_wrapped_name.eml",
    "mixed_alternative_attachment.eml",
    "smime_signed.eml",
]


def html_part_alone(name: str) -> bytes:
    """The fixture's text/html alternative as a mail of its own (as a client that sends HTML only would)."""
    msg = BytesParser(policy=policy.default).parsebytes((MAIL / name).read_bytes())
    assert isinstance(msg, EmailMessage)
    assert msg.get_body(("plain",)) is not None
    markup = msg.get_body(("html",))
    assert markup is not None
    return b"From: Player <player@example.net>\r\n" + markup.as_bytes(policy=policy.SMTP)


@pytest.mark.parametrize("name", HTML_ALTERNATIVES)
def test_the_html_alternative_alone_gives_the_same_reply(name: str) -> None:
    """Each client's HTML rendering of the same reply, read on its own, gives the same lines as its
    plain-text part: the HTML quote containers (gmail_quote, yahoo_quoted, zwchr, AOL's and
    Outlook's header blocks, Sparrow's blockquote and signature) never leak."""
    inbound = parse_inbound(html_part_alone(name), own_addresses=OWN)
    assert lines(inbound.text) == lines(CLIENTS[name])


# --- mail that is never answered --------------------------------------------------------------

IGNORED = {
    "ignore_bounce_postfix.eml": (IgnoreReason.BOUNCE, "multipart/report"),
    "ignore_bounce_exim.eml": (IgnoreReason.BOUNCE, "Mailer-Daemon@smtp.example.it"),
    "ignore_bounce_exchange.eml": (IgnoreReason.BOUNCE, "multipart/report"),
    "ignore_bounce_qmail.eml": (IgnoreReason.BOUNCE, "MAILER-DAEMON@mail.example.ng"),
    "ignore_dsn_delay_warning.eml": (IgnoreReason.BOUNCE, "multipart/report"),
    "ignore_autoreply_exchange_ooo.eml": (IgnoreReason.AUTO_REPLY, "Auto-Submitted: auto-generated"),
    # RFC 5230 sends a vacation answer with a null Return-Path: an auto-reply all the same, not a bounce
    # (the digest lists bounces apart, as mail to a player that did not arrive).
    "ignore_autoreply_sieve_vacation.eml": (IgnoreReason.AUTO_REPLY, "Auto-Submitted: auto-replied (vacation)"),
    "ignore_autoreply_precedence.eml": (IgnoreReason.AUTO_REPLY, "Precedence: auto_reply"),
    "ignore_autoreply_x_autorespond.eml": (IgnoreReason.AUTO_REPLY, "X-Autorespond"),
    "ignore_autoreply_ticket.eml": (IgnoreReason.AUTO_REPLY, "Auto-Submitted: auto-generated"),
}


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_bounces_and_auto_replies_are_never_answered(name: str) -> None:
    """mail-interface.md "Mail that is never answered": DSNs as Postfix, Exim, Exchange, qmail and
    sendmail write them (with and without multipart/report or a null Return-Path) are bounces;
    responders of several shapes are auto-replies; ignore_detail names the header that decided."""
    reason, detail = IGNORED[name]
    inbound = parse(name)
    assert inbound.ignore is reason, ignore_detail(inbound.ignore_why)
    assert detail in ignore_detail(inbound.ignore_why)


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("Return-Path: <>\nAuto-Submitted: auto-replied", IgnoreReason.AUTO_REPLY),
        ("Return-Path: <>\nPrecedence: auto_reply", IgnoreReason.AUTO_REPLY),
        ("Return-Path: <>\nX-Autoreply: yes", IgnoreReason.AUTO_REPLY),
        ("Return-Path: <>\nPrecedence: bulk", IgnoreReason.BOUNCE),
        ("Return-Path: <>", IgnoreReason.BOUNCE),
        (
            "Auto-Submitted: auto-replied\nContent-Type: multipart/report; report-type=delivery-status",
            IgnoreReason.BOUNCE,
        ),
    ],
)
def test_an_auto_reply_with_a_null_return_path_is_an_auto_reply(extra: str, reason: IgnoreReason) -> None:
    """RFC 3834/5230 responders send with a null Return-Path; what marks them as auto-replies
    decides, so the digest does not list them as bounces. A DSN (multipart/report, MAILER-DAEMON)
    stays a bounce whatever Auto-Submitted says, and a null Return-Path alone is a bounce."""
    raw = f"From: Lena <lena.fischer@example.at>\n{extra}\n\nAway.\n".replace("\n", "\r\n").encode()
    assert parse_inbound(raw, own_addresses=OWN).ignore is reason


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("quoted printable", "US=\r\nE 2 Ren=E9"),
        ("Quoted-Printable ", "US=\r\nE 2 Ren=E9"),
        ('"quoted-printable"', "US=\r\nE 2 Ren=E9"),
        ("quoted-printable; x-junk", "US=\r\nE 2 Ren=E9"),
        ("quoted_printable", "US=\r\nE 2 Ren=E9"),
        ("base64 ", "VVNFIDIgUmVu6Q=="),
        ("Base 64", "VVNFIDIgUmVu\r\n6Q=="),
        ("base64", "VVNFIDIgUmVu6Q"),  # the padding lost
    ],
)
def test_a_malformed_transfer_encoding_is_read_for_what_it_means(encoding: str, body: str) -> None:
    """A Content-Transfer-Encoding written with a space, quotes, a parameter, an underscore or a
    trailing blank (the stdlib then leaves the body undecoded) is read as the encoding it names;
    so is base64 that lost its padding."""
    raw = (
        "From: Rene <rene.dubois@example.fr>\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
        f"Content-Transfer-Encoding: {encoding}\r\n\r\n{body}\r\n"
    ).encode()
    assert parse_inbound(raw, own_addresses=OWN).text == "USE 2 Ren\u00e9"


def test_mixed_and_broken_charsets_in_one_mail() -> None:
    """Raw UTF-8 in the Subject is read as UTF-8; in the From name an encoded word in a charset
    nobody knows still decodes (leniently) and a broken one stays as it was written (RFC 2047,
    6.3) without losing its neighbours; a part labelled ISO-8859-1 that carries UTF-8 reads as UTF-8."""
    inbound = parse("mixed_broken_charsets.eml")
    assert inbound.subject == "Re: [racecraft-1] turn 4 results – Grüße"
    assert inbound.sender_name == "Zoë =?utf-8?b?S2VsbGVy*broken?="
    assert inbound.text == "Grüße aus Zürich – Zoë\n\n" + ORDERS


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("“Flat out” – I’m in…".encode("cp1252"), "“Flat out” – I’m in…"),  # what Windows clients label Latin-1
        ("Grüße aus Zürich".encode(), "Grüße aus Zürich"),  # UTF-8 under a Latin-1 label
        ("Grüße, Jörg, café".encode("latin-1"), "Grüße, Jörg, café"),  # Latin-1 as labelled
        (b"caf\xe9 \x81", "café \x81"),  # a byte windows-1252 does not define: Latin-1 after all
        (b"USE 2", "USE 2"),
    ],
)
def test_a_latin1_label_is_read_as_windows_1252_or_as_the_utf8_it_carries(data: bytes, expected: str) -> None:
    """Text labelled ISO-8859-1 is read as windows-1252 (as browsers read it: smart quotes, not
    control characters), and as UTF-8 when it is valid UTF-8 (the usual mislabel)."""
    assert decode_bytes(data, "iso-8859-1") == expected
    assert decode_bytes(data, "latin1") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=?utf-8?b?S2VsbGVy*broken?=", "=?utf-8?b?S2VsbGVy*broken?="),
        ("=?utf-8?q?J=C3=B6rg?= =?utf-8?b?S2VsbGVy*broken?= Racer", "Jörg =?utf-8?b?S2VsbGVy*broken?= Racer"),
        ("=?utf-8?q?J=C3=B6?= =?utf-8?q?rg?= =?utf-8?b?S2VsbGVy*broken?=", "Jörg =?utf-8?b?S2VsbGVy*broken?="),
        ("=?utf-8?q?J=C3=B6?=  =?utf-8?q?rg?=", "Jörg"),
    ],
)
def test_a_broken_encoded_word_spoils_only_itself(value: str, expected: str) -> None:
    """RFC 2047 6.3: an encoded word that does not decode is shown as written; the words around it
    still decode, and the space between two good words is still dropped."""
    assert decode_words(value) == expected


@pytest.mark.parametrize(
    "signature",
    [
        # BlackBerry, in several languages and carriers' wordings
        "Sent from my BlackBerry® smartphone on the go",
        "Sent via BlackBerry by AT&T",
        "Gesendet von meinem BlackBerry 10-Smartphone.",
        "Envoyé de mon BlackBerry",
        "Enviado desde mi BlackBerry® de Vodafone",
        "Inviato da BlackBerry",
        "Verzonden met BlackBerry Work",
        # phones and apps, in the languages of their users
        "Sent from my iPhone",
        "Sent from Yahoo Mail on Android",
        "Get Outlook for Android<https://aka.ms/ghei36>",
        "Von meinem iPhone gesendet",
        "Envoyé de mon iPhone",
        "Enviado desde mi iPhone",
        "Enviado do meu iPhone",
        "Inviato da iPhone",
        "Verstuurd vanaf mijn iPhone",
        "Sendt fra min iPhone",
        "Skickat från min iPhone",
        "Lähetetty iPhonesta",
        "Wysłane z iPhone'a",
        "Odesláno z iPhonu",
        "Trimis de pe iPhone-ul meu",
        "Elküldve az iPhone-omról",
        "Enviat des del meu iPhone",
        "Отправлено с iPhone",
        "Надіслано з iPhone",
        "Στάλθηκε από το iPhone μου",
        "iPhone'umdan gönderildi",
        "iPhoneから送信",
        "iPhone에서 보냄",
        "发自我的iPhone",
        "從我的 iPhone 傳送",
    ],
)
def test_mobile_signatures_in_many_languages_end_the_reply(signature: str) -> None:
    """testing.md: everything after "Sent from my ..." goes, in the words each phone writes it in
    its user's language; the orders above it stay."""
    assert strip_quotes(f"USE 2\nROUND 5: F3 F4\n\n{signature}\n\nUSE 3") == ORDERS


@pytest.mark.parametrize(
    "line",
    [
        "Siparişlerim dün gönderildi",  # "my orders were sent yesterday": no phone named
        "Sent the wrong order yesterday, sorry",
        "Verstuurd: ROUND 5",
    ],
)
def test_a_sentence_about_sending_is_no_signature(line: str) -> None:
    """A line that merely speaks of sending stays with the orders under it."""
    assert strip_quotes(f"{line}\nUSE 2") == f"{line}\nUSE 2"


@pytest.mark.parametrize(
    ("name", "subject", "sender_name"),
    [
        ("iso2022jp_gmail_japanese.eml", "Re: [racecraft-1] turn 4 results （了解）", "佐藤 花"),
        ("shift_jis_outlook_japanese.eml", "RE: [racecraft-1] turn 4 results", "中村 蓮"),
        ("gb2312_foxmail_chinese.eml", "回复：[racecraft-1] turn 4 results", "王伟"),
        ("big5_gmail_traditional_chinese.eml", "Re: [racecraft-1] turn 4 results", "林美"),
        ("euc_kr_gmail_korean.eml", "Re: [racecraft-1] turn 4 results", "김지우"),
        ("koi8r_thebat_russian.eml", "Re: [racecraft-1] turn 4 results", "Дмитрий Волков"),
    ],
)
def test_encoded_subjects_and_names_in_legacy_charsets(name: str, subject: str, sender_name: str) -> None:
    """RFC 2047 words in ISO-2022-JP, Shift_JIS, GB2312, Big5, EUC-KR and KOI8-R decode."""
    inbound = parse(name)
    assert (inbound.subject, inbound.sender_name) == (subject, sender_name)


@pytest.mark.parametrize(
    "attribution",
    [
        "2026年11月30日(月) 18:00 Flagman <gm@example.org>:",  # Gmail, Japanese: no verb
        "2026-11-30 18:00 GMT+01:00 Flagman <gm@example.org>:",
        "2026/11/30 18:00、Flagman <gm@example.org>のメール:",  # Apple, Japanese
        "在 2026年11月30日，18:00，Flagman <gm@example.org> 写道：",  # Apple, Chinese
        "Flagman <gm@example.org> 于2026年11月30日周一 18:00写道：",  # Gmail, Simplified Chinese
        "Flagman <gm@example.org> 於 2026年11月30日 週一 下午6:00寫道：",  # Gmail, Traditional Chinese
        "2026년 11월 30일 (월) 오후 6:00, Flagman <gm@example.org>님이 작성:",  # Gmail, Korean
        "2026. 11. 30. 오후 6:00, Flagman <gm@example.org> 작성:",  # Apple, Korean
        "Op 30 nov. 2026 om 18:00 heeft Flagman <gm@example.org> het volgende geschreven:",  # Apple, Dutch
        "Вы писали 30 ноября 2026 г., 18:00:00:",  # The Bat!, Russian
        "You wrote 30 November 2026, 18:00:00:",  # The Bat!, English
    ],
)
def test_attributions_in_other_languages_go_with_their_quote(attribution: str) -> None:
    """The attribution lines clients write in other languages (full-width colon included) are
    removed with the quote under them, and the answer below the quote stays."""
    text = f"Hi,\nUSE 2\n\n{attribution}\n\n> USE 3\n> ROUND 4: F1 F2\n\nROUND 5: F3 F4"
    assert strip_quotes(text) == "Hi,\nUSE 2\n\nROUND 5: F3 F4"


@pytest.mark.parametrize(
    "line",
    [
        "2026年12月1日の予定:",  # a date, a colon, no address
        "You wrote the deadline wrong, so:",  # "You wrote" with no quote under it
        "Вы писали про шины:",
        "他在信里写道：",  # "he wrote in the letter:": no address
        "Flagman <gm@example.org>:",  # an address and a colon, no date
    ],
)
def test_lines_like_attributions_without_a_quote_under_them_stay(line: str) -> None:
    """Verb-first and verbless attributions count only over a quote, so a sentence of that shape
    followed by orders keeps the orders (and itself)."""
    assert strip_quotes(f"{line}\nUSE 2\nROUND 5: F3 F4") == f"{line}\n" + ORDERS


@pytest.mark.parametrize(
    "block",
    [
        "发件人: Flagman <gm@example.org>\n发送时间: 2026年11月30日 18:00\n收件人: 王伟\n主题: t",
        "发件人：Flagman <gm@example.org>\n发送时间：2026年11月30日\n收件人：王伟\n主题：t",
        "寄件者: Flagman <gm@example.org>\n寄件日期: 2026年11月30日\n收件者: 林美\n主旨: t",
        "差出人: Flagman <gm@example.org>\n送信日時: 2026年11月30日 18:00\n宛先: 中村 蓮\n件名: t",
        "보낸 사람: Flagman <gm@example.org>\n보낸 날짜: 2026년 11월 30일\n받는 사람: 김지우\n제목: t",
        "------------------ 原始邮件 ------------------\nUSE 3",
        "-----原始郵件-----\nUSE 3",
        "-----원본 메시지-----\nUSE 3",
    ],
)
def test_quoted_header_blocks_in_chinese_japanese_and_korean_end_the_reply(block: str) -> None:
    """Outlook's and Foxmail's quoted header blocks and "original message" rules in Chinese,
    Japanese and Korean end the reply like their English ones."""
    assert strip_quotes(f"{ORDERS}\n\n{block}\n\nUSE 3\nROUND 4: F1 F2") == ORDERS


def test_an_inline_pgp_signature_leaves_the_signed_text() -> None:
    """RFC 4880 7: the cleartext armour, its Hash header and the signature block are not the
    sender's words; dash-escaped lines ("- -- ", "- - USE 2") are read unescaped; an armour line
    inside a quote is a quote like any other; unsigned text around the block stays."""
    signed = (
        "Before.\n-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n- - USE 2\nROUND 5: F3 F4\n"
        "-----BEGIN PGP SIGNATURE-----\n\niHUEARYIAB0WIQ\n=Zq7P\n-----END PGP SIGNATURE-----\nAfter."
    )
    raw = ("From: Arjun <arjun.mehta@example.in>\n\n" + signed).replace("\n", "\r\n").encode()
    assert parse_inbound(raw, own_addresses=OWN).text == "Before.\n- USE 2\nROUND 5: F3 F4\nAfter."
    quoted = "USE 2\n> -----BEGIN PGP SIGNED MESSAGE-----\n> Hash: SHA256\n>\n> USE 3"
    raw = ("From: Arjun <arjun.mehta@example.in>\n\n" + quoted).replace("\n", "\r\n").encode()
    assert parse_inbound(raw, own_addresses=OWN).text == "USE 2"


# --- every fixture ------------------------------------------------------------------------------

FIXTURES = sorted(p.name for p in MAIL.glob("*.eml"))


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_parses_without_raising(name: str) -> None:
    """Every fixture parses: parse_inbound never raises (it turns a failure into UNPARSEABLE or a
    defect, so neither may appear), and the same mail with bare LF line endings (as some stores
    keep it) gives the same verdict and text."""
    raw = (MAIL / name).read_bytes()
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert inbound.ignore is not IgnoreReason.UNPARSEABLE, ignore_detail(inbound.ignore_why)
    assert not any("failed" in d or "not readable" in d for d in inbound.defects), inbound.defects
    lf = parse_inbound(raw.replace(b"\r\n", b"\n"), own_addresses=OWN)
    assert (lf.ignore, lf.text, lf.sender, lf.subject) == (
        inbound.ignore,
        inbound.text,
        inbound.sender,
        inbound.subject,
    )


def test_every_fixture_is_listed_and_has_an_expectation() -> None:
    """Each fixture is described in tests/data/mail/README.md and has exactly one expectation
    (a reply text or an ignore verdict) in test_inbound.py or here; none is there untested."""
    listed = set(re.findall(r"^\| `([^`]+\.eml)` \|", (MAIL / "README.md").read_text(encoding="utf-8"), re.M))
    expectations = [*CLIENT_STYLES, *IGNORED_FIXTURES, *CLIENTS, *IGNORED]
    assert len(expectations) == len(set(expectations)), "a fixture has two expectations"
    assert set(FIXTURES) == listed == set(expectations)


# --- details of single fixtures ----------------------------------------------------------------


def test_the_sender_of_a_blackberry_reply_without_a_display_name() -> None:
    """A bare From address (BlackBerry Internet Service) gives the sender and an empty name."""
    inbound = parse("blackberry_original_message.eml")
    assert (inbound.sender, inbound.sender_name) == ("aisha.rahman@example.com", "")


def test_a_reply_to_the_list_and_to_flagman_finds_the_signed_address() -> None:
    """A bottom-post sent to a list and to the bot lists both recipients; the signed address is found."""
    inbound = parse("bottom_post_list_footer.eml")
    assert inbound.recipients == ("racecraft-league@lists.example.org", "flagman+racecraft-1.owen.ab12cd@example.org")


def test_a_forwarded_calendar_answer_is_not_the_senders() -> None:
    """A calendar client's answer inside a forwarded message/rfc822 part is someone else's: the mail
    is read as the sender's (their orders above it), not ignored as their calendar reply."""
    raw = (
        b"From: Yusuf Demir <yusuf.demir@example.com.tr>\r\nTo: flagman@example.org\r\n"
        b'Content-Type: multipart/mixed; boundary="fw"\r\n\r\n'
        b"--fw\r\nContent-Type: text/plain\r\n\r\nUSE 2\r\n"
        b"--fw\r\nContent-Type: message/rfc822\r\n\r\n"
        b"From: Kenji <k.tanaka@example.co.jp>\r\nContent-Type: text/calendar; method=REPLY\r\n\r\n"
        b"BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nEND:VCALENDAR\r\n"
        b"--fw--\r\n"
    )
    inbound = parse_inbound(raw, own_addresses=OWN)
    assert (inbound.ignore, inbound.text) == (None, "USE 2")
