"""Identity: signed reply addresses, secret rotation, Authentication-Results (mail-interface.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.auth import (
    authentication_passes,
    password_in_text,
    signed_address,
    tag_in_recipients,
    tag_in_subject,
    verify_tag,
)
from bot.inbound import AuthResult

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
    """issue 6: HMAC under a site secret, rotatable without breaking games in progress."""
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
    ours_pass = AuthResult("mx.example.org", "pass", (), None)
    ours_fail = AuthResult("mx.example.org", "fail", (), None)
    forged = AuthResult("evil.example", "pass", ("example.com",), None)
    assert authentication_passes([ours_pass], "mx.example.org", "a@example.com")
    assert not authentication_passes([ours_fail, ours_pass], "mx.example.org", "a@example.com")
    assert not authentication_passes([forged], "mx.example.org", "a@example.com")
    assert not authentication_passes([forged, ours_pass], "mx.example.org", "a@example.com"), \
        "a header above ours was added after our server: anyone could have written it"
    aligned = AuthResult("mx.example.org", None, ("mail.example.com",), None)
    unaligned = AuthResult("mx.example.org", None, ("example.net",), None)
    assert authentication_passes([aligned], "mx.example.org", "a@example.com")
    assert not authentication_passes([unaligned], "mx.example.org", "a@example.com")
    assert not authentication_passes([ours_pass], "", "a@example.com")
