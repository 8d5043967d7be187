"""The Shell's signed reply addresses: signed once a process for each seat, always under the
settings in force (mail-interface.md, "Addresses and identity": a reply address is the seat's
capability, so it must change with the secret, the seat's salt and the bot's address)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.clock import FixedClock
from bot.db import Database
from bot.mail_in.auth import parse_tag, signed_address, tag_in_recipients, verify_tag
from bot.mail_out.render import Renderer
from bot.settings import BotSettings, Secrets, Settings
from bot.shell import Shell
from tests.bot.gm_helpers import START

_NAME = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,12}", fullmatch=True)


def shell_of(address: str, secret: str) -> Shell:
    config = Settings(bot=BotSettings(address=address), secrets=Secrets(site_secret=secret))
    return Shell(db=Database("sqlite://"), settings=config, clock=FixedClock(START), renderer=Renderer())


@settings(max_examples=40, deadline=None)
@given(
    secrets=st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=3, unique=True),
    game=_NAME,
    seat=_NAME,
    salts=st.lists(st.sampled_from(["", "a1", "b2"]), min_size=1, max_size=3),
)
def test_a_reply_address_is_signed_under_the_settings_in_force(
    secrets: list[str], game: str, seat: str, salts: list[str]
) -> None:
    """Property: however often a seat's address was asked for before, under other secrets, salts
    or bot addresses, it is the one `signed_address` makes of the settings now, and it verifies
    under the secret in force alone."""
    shell = shell_of("flagman@example.org", secrets[0])
    for secret in [*secrets, *reversed(secrets)]:
        for salt in salts:
            for address in ("flagman@example.org", "race@example.net"):
                shell.settings = dataclasses.replace(
                    shell.settings,
                    bot=dataclasses.replace(shell.settings.bot, address=address),
                    secrets=Secrets(site_secret=secret),
                )
                reply = shell.reply_address(game, seat, salt)
                assert reply == signed_address(address, secret, game, seat, salt)
                tag = tag_in_recipients(address, [reply])
                assert tag is not None and parse_tag(tag) is not None
                assert verify_tag(tag, (secret,), salt) is not None
                assert all(verify_tag(tag, (other,), salt) is None for other in secrets if other != secret)
