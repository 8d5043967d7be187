"""Identity: signed reply addresses, secret rotation, Authentication-Results (mail-interface.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.mail_in.auth import (
    authentication_passes,
    password_in_text,
    signed_address,
    tag_in_recipients,
    tag_in_subject,
    verify_tag,
)
from bot.mail_in.parse import AuthResult

names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,29}", fullmatch=True)


@given(game=names, seat=names, secret=st.text(min_size=1, max_size=40))
def test_a_signed_address_verifies_to_its_game_and_seat(game: str, seat: str, secret: str) -> None:
    """mail-interface.md: flagman+<game>.<seat>.<mac>@example.org authenticates the seat."""
    address = signed_address("flagman@example.org", secret, game, seat)
    tag = tag_in_recipients("flagman@example.org", ["someone@else.org", address])
    assert tag is not None
    verified = verify_tag(tag, [secret])
    assert verified is not None and (verified.game, verified.seat) == (game, seat)


def test_a_tag_for_another_seat_or_under_another_secret_fails() -> None:
    tag = tag_in_recipients("flagman@example.org", [signed_address("flagman@example.org", "s1", "rc1", "seb")])
    assert tag is not None
    assert verify_tag(tag.replace(".seb.", ".kelly."), ["s1"]) is None
    assert verify_tag(tag, ["other"]) is None


def test_rotating_the_secret_keeps_games_in_progress_working() -> None:
    """HMAC under a site secret, rotatable without breaking games in progress."""
    tag = tag_in_recipients("flagman@example.org", [signed_address("flagman@example.org", "old", "rc1", "seb")])
    assert tag is not None
    assert verify_tag(tag, ["new", "old"]) is not None


def test_a_tag_on_another_domain_is_not_ours() -> None:
    assert tag_in_recipients("flagman@example.org", ["flagman+rc1.seb.aaaaaaaaaaaa@evil.org"]) is None


def test_password_line_and_subject_tag_are_found() -> None:
    assert password_in_text("USE 3\n  password: abc-123 \n") == "abc-123"
    assert password_in_text("USE 3") is None
    assert tag_in_subject("Re: [rc1] orders [rc1.seb.abcdefghijkl]") == "rc1.seb.abcdefghijkl"


def test_only_the_topmost_authentication_results_of_our_server_counts() -> None:
    """mail-interface.md: the topmost Authentication-Results header with the configured authserv-id."""
    ours_pass = AuthResult("mx.example.org", "pass", (), None, dmarc_from="example.com")
    ours_fail = AuthResult("mx.example.org", "fail", (), None, dmarc_from="example.com")
    forged = AuthResult("evil.example", "pass", ("example.com",), None, dmarc_from="example.com")
    assert authentication_passes([ours_pass], "mx.example.org", "a@example.com")
    assert not authentication_passes([ours_fail, ours_pass], "mx.example.org", "a@example.com")
    assert not authentication_passes([forged], "mx.example.org", "a@example.com")
    assert not authentication_passes([forged, ours_pass], "mx.example.org", "a@example.com"), (
        "a header above ours was added after our server: anyone could have written it"
    )
    aligned = AuthResult("mx.example.org", None, ("mail.example.com",), None)
    unaligned = AuthResult("mx.example.org", None, ("example.net",), None)
    assert authentication_passes([aligned], "mx.example.org", "a@example.com")
    assert not authentication_passes([unaligned], "mx.example.org", "a@example.com")
    assert not authentication_passes([ours_pass], "", "a@example.com")


def test_dmarc_pass_counts_only_for_the_from_domain_it_names() -> None:
    """``dmarc=pass header.from=other.domain`` says nothing about a From in another
    domain. DMARC counts only when its header.from is the domain of the From the bot parsed
    (case and a trailing dot aside); a pass that names no domain is not accepted."""

    def top(dmarc_from: str | None) -> list[AuthResult]:
        return [AuthResult("mx.example.org", "pass", (), None, dmarc_from=dmarc_from)]

    assert authentication_passes(top("example.com"), "mx.example.org", "a@example.com")
    assert authentication_passes(top("EXAMPLE.com."), "mx.example.org", "a@example.com")
    assert authentication_passes(top("example.com"), "mx.example.org", "a@Example.COM")
    assert not authentication_passes(top("evil.example"), "mx.example.org", "a@example.com")
    assert not authentication_passes(top(None), "mx.example.org", "a@example.com")
    assert not authentication_passes(top(""), "mx.example.org", "a@example.com")
    # DMARC alignment is for the exact From domain: a parent or a child domain is another domain.
    assert not authentication_passes(top("mail.example.com"), "mx.example.org", "a@example.com")
    assert not authentication_passes(top("example.com"), "mx.example.org", "a@mail.example.com")
    assert not authentication_passes(top("example.com"), "mx.example.org", "")
    # A Unicode header.from is the same domain as the A-label the bot keeps for a From.
    assert authentication_passes(top("bücher.example"), "mx.example.org", "a@xn--bcher-kva.example")


def test_a_misaligned_dmarc_pass_does_not_hide_an_aligned_dkim_pass() -> None:
    """The DKIM rule is unchanged: an aligned dkim=pass still counts next to a DMARC pass for another domain."""
    result = AuthResult("mx.example.org", "pass", ("example.com",), None, dmarc_from="evil.example")
    assert authentication_passes([result], "mx.example.org", "a@example.com")
    assert not authentication_passes([result], "mx.example.org", "a@example.net")


def test_only_the_topmost_header_counts_for_the_dmarc_domain_too() -> None:
    """A second header of ours (further down, anyone may have written it) cannot supply the domain."""
    results = [
        AuthResult("mx.example.org", "pass", (), None, dmarc_from=None),
        AuthResult("mx.example.org", "pass", (), None, dmarc_from="example.com"),
    ]
    assert not authentication_passes(results, "mx.example.org", "a@example.com")
