"""The Shell: what every use case needs (the database, the settings, the clock, the templates,
the crash points, where the dice's secrets come from), in a module of its own below `games/`,
the letters and the commands, so that each of them imports it from here and none has to
import another for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.clock import Clock, as_utc
from bot.db import Database
from bot.dice import Entropy, OsEntropy
from bot.faults import NO_FAULTS, Faults
from bot.mail_in.auth import signed_address
from bot.mail_out.render import Renderer
from bot.settings import Settings


@dataclass
class Shell:
    """What every use case needs: the database, the settings, the clock, the templates, the crash
    points and where the dice's secrets come from."""

    db: Database
    settings: Settings
    clock: Clock
    renderer: Renderer
    faults: Faults = NO_FAULTS  # the crash points (bot.faults); the tests' worker kills at one
    entropy: Entropy = OsEntropy()  # where each turn's dice secret comes from (bot.dice)

    def now(self) -> datetime:
        return as_utc(self.clock.now())

    @property
    def secrets_in_force(self) -> tuple[str, ...]:
        return (self.settings.secrets.site_secret, *self.settings.secrets.previous_secrets)

    def reply_address(self, game: str, seat: str, salt: str = "") -> str:
        """The signed reply address of `seat` in `game` (`bot.mail_in.auth.signed_address`) under
        the secret in force (its MAC worked out once a process, `bot.mail_in.auth.mac`)."""
        return signed_address(self.settings.bot.address, self.settings.secrets.site_secret, game, seat, salt)
