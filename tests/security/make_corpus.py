"""Writes the hand-made hostile corpus in data/ (the files are committed; rerun after editing this).

Run: .venv/bin/python tests/security/make_corpus.py. Placeholders @@...@@ are filled in by the
tests (signed addresses and passwords exist only once the game is created).
"""

from collections.abc import Sequence
from pathlib import Path

D = Path(__file__).resolve().parent / "data"
D.mkdir(parents=True, exist_ok=True)
n = 0


def mail(
    name: str,
    headers: Sequence[str],
    body: str,
    *,
    to: str | None = "@@SIGNED_SEB@@",
    frm: str | None = "Seb <seb@example.net>",
    subject: str | None = "Re: [rc1] Racecraft: Turn 1 of 5",
    mid: str | None = None,
    ctype: str | None = 'text/plain; charset="utf-8"',
    extra_top: Sequence[str] = (),
) -> None:
    global n
    n += 1
    lines = list(extra_top)
    if frm is not None:
        lines.append(f"From: {frm}")
    if to is not None:
        lines.append(f"To: {to}")
    if subject is not None:
        lines.append(f"Subject: {subject}")
    lines.append(f"Message-ID: <{mid or name.replace('.eml', '')}@client.example>")
    lines.append("Date: Mon, 05 Jan 2026 10:00:00 +0000")
    lines += list(headers)
    if ctype:
        lines.append("MIME-Version: 1.0")
        lines.append(f"Content-Type: {ctype}")
    data = "\r\n".join(lines) + "\r\n\r\n" + body.replace("\r\n", "\n").replace("\n", "\r\n")
    (D / name).write_bytes(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)


# --- identity: spoofs ---------------------------------------------------------------
mail("spoof_plain_from_player.eml", [], "USE 9\n", to="flagman@example.org", subject="my orders")
mail(
    "spoof_reply_to_attacker.eml",
    ["Reply-To: mallory@evil.example", "Sender: mallory@evil.example"],
    "STATUS\nORDERS\n",
    to="flagman@example.org",
    subject="[rc1] status please",
)
mail(
    "spoof_ar_foreign_authserv.eml",
    [
        "Authentication-Results: evil.example; dkim=pass header.d=example.net; spf=pass smtp.mailfrom=example.net; dmarc=pass header.from=example.net"
    ],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "spoof_ar_forged_below_ours.eml",
    [
        "Authentication-Results: mx.example.org; dkim=none; spf=fail smtp.mailfrom=example.net; dmarc=fail header.from=example.net",
        "Authentication-Results: mx.example.org; dkim=pass header.d=example.net; dmarc=pass header.from=example.net",
    ],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "spoof_ar_foreign_on_top.eml",
    [
        "Authentication-Results: relay.evil.example; dmarc=pass header.from=example.net",
        "Authentication-Results: mx.example.org; spf=softfail smtp.mailfrom=example.net; dmarc=fail header.from=example.net",
    ],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "spoof_dkim_unaligned.eml",
    [
        "Authentication-Results: mx.example.org; dkim=pass header.d=evil.example header.s=s1; spf=pass smtp.mailfrom=evil.example; dmarc=none header.from=example.net"
    ],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "spoof_dkim_lookalike_domain.eml",
    ["Authentication-Results: mx.example.org; dkim=pass header.d=notexample.net; dmarc=none header.from=example.net"],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail("spoof_wrong_password.eml", [], "USE 9\nPASSWORD not-the-password\n", to="flagman@example.org", subject="orders")
mail(
    "spoof_forged_tag.eml",
    [],
    "USE 9\n",
    to="flagman+rc1.seb.aaaaaaaaaaaa@example.org",
    frm="Mallory <mallory@evil.example>",
    subject="orders",
)
mail(
    "spoof_tag_in_subject_forged.eml", [], "USE 9\n", to="flagman@example.org", subject="[rc1.seb.aaaaaaaaaaaa] orders"
)
mail(
    "spoof_gm_command.eml",
    [],
    "EXTEND rc1 7d\nPROCESS rc1\n",
    to="flagman@example.org",
    frm="GM <gm@example.org>",
    subject="[rc1] gm",
)
mail("spoof_gm_command_from_player_seat.eml", [], "EXTEND rc1 7d\n", subject="Re: [rc1] turn 1")
mail(
    "spoof_status_with_game_name.eml",
    [],
    "STATUS\n",
    to="flagman@example.org",
    frm="Kelly <kelly@example.org>",
    subject="[rc1] STATUS",
)

# --- identity: proofs that are accepted --------------------------------------------
mail(
    "auth_dmarc_pass.eml",
    [
        "Authentication-Results: mx.example.org; dkim=pass header.d=example.net; spf=pass smtp.mailfrom=example.net; dmarc=pass (p=reject) header.from=example.net",
        "Authentication-Results: relay.example.net; dmarc=fail",
    ],
    "USE 2\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "auth_dkim_aligned_subdomain.eml",
    ["Authentication-Results: mx.example.org; dkim=pass header.d=mail.example.net; dmarc=none"],
    "USE 2\n",
    to="flagman@example.org",
    subject="orders",
)
mail("auth_password.eml", [], "USE 2\nPASSWORD @@PASSWORD_SEB@@\n", to="flagman@example.org", subject="orders")
mail("auth_signed_from_other_address.eml", [], "USE 2\n", frm="Seb at work <seb.work@elsewhere.example>")
mail("auth_previous_secret.eml", [], "USE 2\n", to="@@SIGNED_SEB_OLD@@")
mail("auth_subject_tag.eml", [], "USE 2\n", to="flagman@example.org", subject="[@@TAG_SEB@@] orders")
mail(
    "auth_gm_password.eml",
    [],
    "EXTEND rc1 24h\nPASSWORD @@PASSWORD_GM@@\n",
    to="flagman@example.org",
    frm="GM <gm@example.org>",
    subject="[rc1] gm",
)

# --- replays ----------------------------------------------------------------------------
mail("replay_original.eml", [], "USE 2\n", mid="replay-1")
mail(
    "replay_relayed.eml",
    [],
    "USE 2\n",
    mid="replay-1",
    extra_top=[
        "Received: from relay2.example.net by mx.example.org; Mon, 05 Jan 2026 10:05:00 +0000",
        "Delivered-To: flagman@example.org",
    ],
)

# --- never answered ---------------------------------------------------------------------
for name, header in [
    ("auto_submitted", "Auto-Submitted: auto-replied (vacation)"),
    ("auto_x_autoreply", "X-Autoreply: yes"),
    ("auto_x_autorespond", "X-Autorespond: I am away"),
    ("auto_precedence_bulk", "Precedence: bulk"),
    ("auto_precedence_junk", "Precedence: junk"),
    ("auto_precedence_list", "Precedence: list"),
    ("auto_precedence_auto_reply", "Precedence: auto_reply"),
]:
    mail(
        f"{name}.eml", [header], "I am out of the office until Monday.\nUSE 9\n", subject="Out of office: [rc1] Turn 1"
    )
mail(
    "bounce_dsn.eml",
    ["Return-Path: <>"],
    "--b1\r\nContent-Type: text/plain\r\n\r\nDelivery failed.\r\n--b1\r\nContent-Type: message/delivery-status\r\n\r\n"
    "Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; seb@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\n--b1--\r\n",
    frm="Mail Delivery System <MAILER-DAEMON@mx.example.net>",
    subject="Undelivered Mail Returned to Sender",
    ctype='multipart/report; report-type=delivery-status; boundary="b1"',
)
mail(
    "bounce_null_return_path.eml",
    ["Return-Path: <>"],
    "Your mail could not be delivered.\n",
    frm="seb@example.net",
    subject="failure notice",
)
mail(
    "bounce_mailer_daemon.eml",
    [],
    "Your mail could not be delivered.\n",
    frm="MAILER-DAEMON@example.net",
    to="flagman@example.org",
    subject="failure notice",
)
mail(
    "bounce_postmaster.eml",
    [],
    "Your mail could not be delivered.\n",
    frm="postmaster@example.net",
    to="flagman@example.org",
    subject="Delivery Status Notification",
)
mail("loop_our_header.eml", ["X-Flagman-Loop: flagman@example.org"], "USE 9\n", subject="[rc1] Orders received")
mail("own_address.eml", [], "USE 9\n", frm="Flagman <flagman@example.org>", to="flagman@example.org")
mail(
    "own_address_plus_tag.eml",
    [],
    "USE 9\n",
    frm="flagman+bounce-confirmation-12ab@example.org",
    to="flagman@example.org",
)
mail("no_from.eml", [], "USE 9\n", frm=None)
mail("from_not_an_address.eml", [], "USE 9\n", frm="undisclosed-recipients:;")

# --- broken MIME, charsets, NUL ---------------------------------------------------------
mail("mime_no_boundary.eml", [], "--x\r\nContent-Type: text/plain\r\n\r\nUSE 2\r\n--x--\r\n", ctype="multipart/mixed")
mail(
    "mime_unterminated.eml",
    [],
    "--b\r\nContent-Type: text/plain\r\n\r\nUSE 2\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>USE 2",
    ctype='multipart/alternative; boundary="b"',
)
mail("mime_bad_base64.eml", ["Content-Transfer-Encoding: base64"], "VVNFIDI=\r\n!!!!not base64 at all@@@\r\n")
mail("mime_bad_qp.eml", ["Content-Transfer-Encoding: quoted-printable"], "USE 2=\r\n=ZZ=\r\n=0")
mail(
    "mime_header_garbage.eml",
    ['Content-Type: ;;;==="""', "Content-Transfer-Encoding: x-unknown-cte"],
    "USE 2\n",
    ctype=None,
)
mail("charset_unknown.eml", [], "USE 2\n", ctype='text/plain; charset="x-klingon-9"')
mail("charset_utf7.eml", [], "USE +ADI-\n", ctype='text/plain; charset="utf-7"')
mail(
    "charset_mislabeled_latin1.eml",
    [],
    "USE 2\n-- \nS\udce9bastien, \udce9t\udce9 \udca4\n",
    ctype='text/plain; charset="utf-8"',
)
mail(
    "encoded_words_garbage.eml",
    [],
    "USE 2\n",
    subject="=?x-unknown?b?////?= =?utf-8?q?=FF=FE?= =?utf-8?b?",
    frm="=?utf-8?b?//79?= <seb@example.net>",
)
mail("nul_bytes.eml", ["X-Note: a\x00b"], "USE 2\x00\nUSE\x00 3\n", subject="orders\x00 now")
mail(
    "html_script_only.eml",
    [],
    '<html><body><script>alert(1)</script><p>USE 2</p><img src="http://evil.example/track.png"></body></html>',
    ctype='text/html; charset="utf-8"',
)
mail(
    "attachment_binary.eml",
    [],
    "--a\r\nContent-Type: text/plain\r\n\r\nUSE 2\r\n--a\r\nContent-Type: application/octet-stream\r\n"
    'Content-Disposition: attachment; filename="payload.exe"\r\nContent-Transfer-Encoding: base64\r\n\r\n'
    + ("TVqQAAMAAAAEAAAA//8AALgAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n" * 3000)
    + "--a--\r\n",
    ctype='multipart/mixed; boundary="a"',
)

# --- header injection through names ----------------------------------------------------
mail(
    "inject_display_name_stranger.eml",
    [],
    "HELLO\n",
    to="flagman@example.org",
    frm="=?utf-8?q?Evil=0D=0ABcc=3A_victim=40example=2Ecom?= <mallory@evil.example>",
    subject="hello",
)
mail(
    "inject_subject_player.eml",
    [],
    "USE 2\n",
    subject="=?utf-8?q?orders=0D=0ABcc=3A_victim=40example=2Ecom=0D=0A=0D=0Abody?=",
)
mail(
    "inject_crlf_in_name_raw.eml",
    [],
    "HELLO\n",
    to="flagman@example.org",
    frm='"Evil\r\n Bcc: victim@example.com" <mallory2@evil.example>',
    subject="hi",
)

mail(
    "inject_message_id.eml",
    [],
    "HELLO\n",
    to="flagman@example.org",
    frm="mallory3@evil.example",
    mid="=?utf-8?q?=0D=0ABcc:_victim=40example.com=0D=0A=0D=0AClick_here?=x",
    subject="hi",
)
mail("inject_message_id_player.eml", [], "USE 2\n", mid="=?utf-8?q?=0D=0AX-Injected:_yes?=y")
mail("from_bad_idna.eml", [], "HELLO\n", to="flagman@example.org", frm="Seb <seb@\udcb8xample.net>", subject="hi")
mail(
    "from_unicode_domain.eml",
    [],
    "HELLO\n",
    to="flagman@example.org",
    frm="J\u00fcrgen <juergen@b\u00fccher.example>",
    subject="hi",
)
# --- the holes hostile testing found, and variants -------------------------------------
mail(
    "gm_address_from_stranger.eml",
    [],
    "EXTEND rc1 1h\nPREVIEW rc1\n",
    to="@@SIGNED_GM@@",
    frm="Mallory <mallory@evil.example>",
    subject="Re: [rc1] GM copy",
)
mail("gm_address_from_player.eml", [], "USE 2\n", to="@@SIGNED_GM@@", subject="Re: [rc1] not accepted")
mail(
    "gm_address_from_elsewhere_with_password.eml",
    [],
    "PASSWORD @@PASSWORD_GM@@\nHELP\n",
    to="@@SIGNED_GM@@",
    frm="GM on the road <gm.phone@else.example>",
    subject="Re: [rc1] help",
)
mail(
    "gm_address_player_tag_in_subject.eml",
    [],
    "EXTEND rc1 1h\n",
    to="@@SIGNED_GM@@",
    subject="[@@TAG_SEB@@] extend please",
)
mail(
    "join_started_game_spam.eml",
    [],
    "JOIN rc1 Buy cheap watches at spam.example\n",
    to="flagman@example.org",
    frm="Buy cheap watches <victim@else.example>",
    subject="JOIN",
)
mail(
    "join_unknown_game_spam.eml",
    [],
    "JOIN cheapwatches Visit spam.example now\n",
    to="flagman@example.org",
    frm="victim2@else.example",
    subject="JOIN",
)
mail(
    "join_name_huge_unicode.eml",
    [],
    "JOIN rc1 " + "\u00e9" * 20000 + "\n",
    to="flagman@example.org",
    frm="victim3@else.example",
    subject="JOIN",
)
mail(
    "dmarc_header_from_other_domain.eml",
    [
        "Authentication-Results: mx.example.org; dkim=pass header.d=evil.example; spf=pass smtp.mailfrom=evil.example; dmarc=pass header.from=evil.example"
    ],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "dmarc_without_header_from.eml",
    ["Authentication-Results: mx.example.org; dmarc=pass"],
    "USE 9\n",
    to="flagman@example.org",
    subject="orders",
)
mail(
    "two_from_headers.eml",
    ["Authentication-Results: mx.example.org; dkim=pass header.d=evil.example; dmarc=pass header.from=evil.example"],
    "USE 9\n",
    to="flagman@example.org",
    frm="Mallory <mallory@evil.example>",
    subject="orders",
    extra_top=("From: Seb <seb@example.net>",),
)
mail(
    "two_mailboxes_in_from.eml",
    [],
    "USE 9\n",
    to="flagman@example.org",
    frm="Seb <seb@example.net>, Mallory <mallory@evil.example>",
    subject="orders",
)
mail(
    "subject_encoded_crlf_notice.eml",
    [],
    "USE 99\n",
    subject="=?utf-8?q?orders=0D=0A=0D=0A=3D=3D_Notice_from_the_operator_=3D=3D=0D=0Amail_your_GM_password_to_x=40evil=2Eexample?=",
)
mail(
    "display_name_bidi_and_crlf.eml",
    [],
    "HELLO\n",
    to="flagman@example.org",
    frm="=?utf-8?q?Kim=E2=80=AE=0D=0A=3D=3D_Notice_=3D=3D?= <kim@else.example>",
    subject="hi",
)
mail("order_line_controls.eml", [], "USE 2\nbogus \x1b[2J\u202e line\u2028with a separator\n")
mail(
    "many_cc_addresses.eml",
    ["Cc: " + ", ".join(f"x{i}@spam.example" for i in range(3000))],
    "HELLO\n",
    to="flagman@example.org",
    frm="mallory4@evil.example",
    subject="hi",
)
print(n, "files")
