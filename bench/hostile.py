"""hostile: `parse_inbound` on mails built to stall it, next to a normal order mail.

A stranger can send any header section within the size cap (`[limits] max_mail_bytes`, 2 MiB
by default; four cases are somewhat larger, as a site may raise the cap). Each case below is one such
mail; each is parsed `runs` times (5 by default) and the median seconds per mail is compared
with the bound. No servers, no database: this times the parser alone, which is what held the
poll (86-218 s for one mail before the fix, on the shared 2-core VM).

Bound: 0.2 s per mail, 200 order mails' worth (an order mail costs ~1 ms to parse). The poll
reads batches of 100 mails (`batch_size`); at 0.2 s a mail, a batch made only of hostile mails
is parsed in 20 s, within one poll interval (`poll_seconds`, 60 s), so a stream of them
cannot make the service fall behind, and an order in the same batch is still confirmed within
half a minute. The reference case (a Gmail order mail) shows the scale and meets it too.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.mails import Seat, order_mail

BOUND_SECONDS = 0.2
RUNS = 5
OWN = ("flagman@example.org",)
_MB = 1_000_000


def _mail(headers: list[str], body: str = "USE 2\r\n", content_type: str = "text/plain; charset=utf-8") -> bytes:
    """A mail from whole header fields (already folded, without the final CRLF) and a body."""
    base = [
        "Message-ID: <hostile@evil.example>",
        "Date: Tue, 01 Dec 2026 09:00:00 +0000",
        "MIME-Version: 1.0",
        f"Content-Type: {content_type}",
        "Content-Transfer-Encoding: 8bit",
    ]
    return ("\r\n".join(headers + base) + "\r\n\r\n" + body).encode("utf-8", "surrogateescape")


_STRANGER = ["From: Mallory <mallory@evil.example>", "To: flagman@example.org", "Subject: orders"]


def reference() -> bytes:
    """A registered player's Gmail reply to the signed address, with our server's header on top."""
    seat = Seat("rc1", "seb", "seb@example.net", "Seb", "flagman+rc1.seb.abcdefghijkl@example.org")
    _, data = order_mail(seat, 0)  # serial 0: the Gmail style, multipart/alternative, base64
    header = (
        b"Authentication-Results: mx.example.org; dkim=pass header.d=example.net header.s=s1;\r\n"
        b" spf=pass smtp.mailfrom=example.net; dmarc=pass (p=none) header.from=example.net\r\n"
    )
    return header + data


def auth_results_many() -> bytes:
    """2 MB of Authentication-Results: 2,000 headers of 1,000 characters, each full of results."""
    one = "; ".join(f"dkim=pass header.d=d{i}.evil.example header.s=sel{i} (comment {i})" for i in range(15))
    value = ("mx.example.org; " + one)[:1000]
    return _mail(_STRANGER + ["Authentication-Results: " + value] * 2000)


def auth_results_long() -> bytes:
    """2 MB of Authentication-Results: 125 headers, each one 16,000-character token (no "=")."""
    return _mail(_STRANGER + ["Authentication-Results: mx.example.org; " + "a" * 16_000] * 125)


def auth_results_one() -> bytes:
    """One Authentication-Results header of 2 MB, folded: tokens, comments, quotes, no end."""
    chunk = 'dkim=pass (x(y) "q;" z) header.d=a.example;'
    lines = [chunk * 2] * (_MB * 2 // (len(chunk) * 2 + 3))
    return _mail(_STRANGER + ["Authentication-Results: mx.example.org; " + "\r\n ".join(lines)])


def cc_one_header() -> bytes:
    """140,000 Cc addresses in one folded Cc header (~3 MB)."""
    addresses = ",\r\n ".join(f"u{i}@x{i % 97}.example" for i in range(140_000))
    return _mail(_STRANGER + ["Cc: " + addresses])


def cc_many_headers() -> bytes:
    """140,000 Cc addresses in 1,400 Cc headers of 100 each (~2.7 MB)."""
    headers = [
        "Cc: " + ", ".join(f"u{i}@x{i % 97}.example" for i in range(start, start + 100))
        for start in range(0, 140_000, 100)
    ]
    return _mail(_STRANGER + headers)


def _encoded_words(text: str) -> str:
    """`text` as RFC 2047 B-encoded UTF-8 words of at most 75 characters, folded."""
    import base64

    words = []
    for i in range(0, len(text), 12):  # 12 two-byte characters: 24 bytes, 32 in base64
        words.append("=?utf-8?b?" + base64.b64encode(text[i : i + 12].encode()).decode() + "?=")
    return "\r\n ".join(words)


_LONG = ("é\u202eñ" * 34_000)[:100_000]  # non-ASCII, and bidi overrides among it


def name_raw() -> bytes:
    """A From display name of 100,000 non-ASCII characters, as raw UTF-8 (8-bit header)."""
    return _mail([f"From: {_LONG} <mallory@evil.example>", "To: flagman@example.org", "Subject: hi"])


def name_encoded() -> bytes:
    """A From display name of 100,000 non-ASCII characters, as 8,334 RFC 2047 words."""
    return _mail([f"From: {_encoded_words(_LONG)} <mallory@evil.example>", "To: flagman@example.org", "Subject: hi"])


def name_long_encoded() -> bytes:
    """A From display name of 2,900 characters as RFC 2047 words: 15,700 characters, within the
    cap on a From value, so it is decoded (from its first 4,000 characters) and echoed."""
    return _mail(
        [f"From: {_encoded_words(_LONG[:2_900])} <mallory@evil.example>", "To: flagman@example.org", "Subject: hi"]
    )


def subject_raw() -> bytes:
    """A Subject of 100,000 non-ASCII characters, as raw UTF-8."""
    return _mail(_STRANGER[:2] + [f"Subject: {_LONG}"])


def subject_encoded() -> bytes:
    """A Subject of 100,000 non-ASCII characters, as RFC 2047 words (one decodes to CR LF)."""
    return _mail(_STRANGER[:2] + ["Subject: =?utf-8?q?=0D=0ABcc:_x@evil.example?=\r\n " + _encoded_words(_LONG)])


def many_from() -> bytes:
    """1,000 From headers (a forged first one among strangers)."""
    froms = ["From: Seb <seb@example.net>"] + [f"From: m{i} <m{i}@evil.example>" for i in range(999)]
    return _mail(froms + ["To: flagman@example.org", "Subject: orders"])


def many_fields() -> bytes:
    """100,000 short header fields (~2 MB), the real ones at the very end."""
    return _mail([f"X-Pad-{i}: {'v' * 8}" for i in range(100_000)] + _STRANGER)


def part_fields() -> bytes:
    """A MIME part of 100,000 header fields (~2.3 MB) in a multipart/mixed body."""
    fields = "".join(f"X-Pad-{i}: {'v' * 8}\r\n" for i in range(100_000))
    return _mail(
        _STRANGER,
        f"--B\r\n{fields}Content-Type: text/plain\r\n\r\nUSE 2\r\n--B--\r\n",
        content_type="multipart/mixed; boundary=B",
    )


CASES: tuple[tuple[str, Callable[[], bytes]], ...] = (
    ("reference", reference),
    ("auth-results-many", auth_results_many),
    ("auth-results-long", auth_results_long),
    ("auth-results-one", auth_results_one),
    ("cc-one-header", cc_one_header),
    ("cc-many-headers", cc_many_headers),
    ("name-raw", name_raw),
    ("name-encoded", name_encoded),
    ("name-long-encoded", name_long_encoded),
    ("subject-raw", subject_raw),
    ("subject-encoded", subject_encoded),
    ("many-from", many_from),
    ("many-fields", many_fields),
    ("part-fields", part_fields),
)


def time_parse(raw: bytes, runs: int) -> tuple[list[float], Any]:
    """Seconds of each of `runs` parses of `raw`, and the last `Inbound`."""
    from bot.mail_in.parse import parse_inbound

    seconds = []
    inbound = None
    for _ in range(runs):
        t0 = time.perf_counter()
        inbound = parse_inbound(raw, own_addresses=OWN)
        seconds.append(time.perf_counter() - t0)
    return seconds, inbound


def case_line(name: str, size: int, median: float, ok: bool, outcome: str) -> str:
    return (
        f"hostile  {name:<18} {size / 1000:6,.0f} kB: {median:9.4f} s/mail (bound {BOUND_SECONDS} s) "
        f"{'OK' if ok else 'MISSED'} [{outcome}]"
    )


def run(runs: int = RUNS, names: tuple[str, ...] | None = None, *, progress: bool = False) -> dict[str, Any]:
    """Every case (or those named), `runs` parses each; one line per case."""
    cases: list[dict[str, Any]] = []
    lines: list[str] = []
    for name, make in CASES:
        if names is not None and name not in names:
            continue
        raw = make()  # not timed
        seconds, inbound = time_parse(raw, runs)
        median = statistics.median(seconds)
        ok = median <= BOUND_SECONDS
        outcome = (
            f"ignored: {inbound.ignore.value}"
            if inbound.ignore is not None
            else f"from {inbound.sender or '?'}, {len(inbound.recipients)} recipients"
        )
        cases.append(
            {
                "case": name,
                "bytes": len(raw),
                "runs_seconds": seconds,
                "median_seconds": median,
                "met": ok,
                "outcome": outcome,
                "subject_chars": len(inbound.subject),
                "name_chars": len(inbound.sender_name),
                "auth_results": len(inbound.auth_results),
            }
        )
        lines.append(case_line(name, len(raw), median, ok, outcome))
        if progress:
            print(lines[-1], flush=True)
    worst = max(c["median_seconds"] for c in cases)
    return {
        "benchmark": "hostile",
        "cases": cases,
        "runs": runs,
        "bound_seconds": BOUND_SECONDS,
        "ratio": worst / BOUND_SECONDS,
        "target": f"each mail parsed in <= {BOUND_SECONDS} s (median of {runs})",
        "met": all(c["met"] for c in cases),
        "line": "\n".join(lines),
    }


if __name__ == "__main__":  # the cases one by one, with progress: python -m bench.hostile [RUNS]
    import sys

    run(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS, progress=True)
