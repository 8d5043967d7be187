"""`flagman demo`: a whole game of Racecraft by mail, on the embedded default, in a temp dir.

Five scripted players read their turn sheets from their Maildirs and reply to them, as a
mail client would, into the bot's Maildir inbox; the bot answers through the real pipeline
(SQLite, Maildir, inbound parsing, authentication by the signed reply address, the outbox).
The clock is simulated so the game's deadlines pass in seconds; nothing else is.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from datetime import timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import TextIO

from bot.app import build_app
from bot.cli.init import init_dir
from bot.dice import SeededEntropy
from bot.games.turns import PlayerSpec, create_game
from bot.mail_in.inbox import deliver_to_maildir
from bot.settings import load_settings
from bot.testing import FakeClock, body_of, reply_to
from rules.api import Viewer

PLAYERS = (
    PlayerSpec("kelly", "kelly@example.org", "Kelly", "Europe/London"),
    PlayerSpec("seb", "seb@example.org", "Seb", "Europe/Paris"),
    PlayerSpec("steve", "steve@example.org", "Steve", "America/New_York"),
    PlayerSpec("roger", "roger@example.org", "Roger", "Australia/Sydney"),
    PlayerSpec("anna", "anna@example.org", "Anna", "UTC"),
)

# What each player replies, turn by turn. Turns 1 and 2 are the worked example of
# shared/design/racecraft.md; Anna forgets turn 3 (and gets the NMR default); Steve's first
# mail of turn 2 asks for more EP than he has, is refused, and he corrects it.
SCRIPT: dict[int, dict[str, list[str]]] = {
    1: {
        "kelly": ["USE 0"],
        "seb": ["Hi GM!\nUSE 2\nCheers, Seb"],
        "steve": ["2"],
        "roger": ["BID 5"],
        "anna": ["USE 1"],
    },
    2: {"kelly": ["USE 2"], "seb": ["A 3"], "steve": ["USE 12", "OVERTAKE"], "roger": ["CRUISE"], "anna": ["B"]},
    3: {"kelly": ["CRUISE"], "seb": ["USE 1"], "steve": ["C"], "roger": ["USE 4"]},
    4: {"kelly": ["USE 3"], "seb": ["CRUISE"], "steve": ["USE 2"], "roger": ["OVERTAKE"], "anna": ["USE 5"]},
}


class Demo:
    def __init__(self, root: Path, out: TextIO, quiet: bool) -> None:
        self.root = root
        self.out = out
        self.quiet = quiet
        config = init_dir(root, "flagman@demo.example")
        self.clock = FakeClock()
        # The demo's dice secrets are fixed, as its seed is, so that it shows the same race each time.
        self.app = build_app(load_settings(config, env={}), clock=self.clock, entropy=SeededEntropy(2026))
        self.inbox_path = self.app.settings.resolve_path(self.app.settings.inbox.path)
        self.read: dict[str, int] = {}
        self.mails_shown = 0

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def mailbox(self, address: str) -> Path:
        return self.app.mailer.mailbox(address)  # type: ignore[attr-defined, no-any-return]

    def new_mail(self, address: str) -> list[EmailMessage]:
        folder = self.mailbox(address) / "new"
        if not folder.exists():
            return []
        files = sorted(folder.iterdir(), key=lambda p: p.name)
        seen = self.read.get(address, 0)
        self.read[address] = len(files)
        msgs = []
        for path in files[seen:]:
            msg = message_from_bytes(path.read_bytes(), policy=policy.default)
            assert isinstance(msg, EmailMessage)
            msgs.append(msg)
        return msgs

    def show(self, address: str, msgs: list[EmailMessage]) -> None:
        for msg in msgs:
            self.mails_shown += 1
            if self.quiet:
                continue
            self.say(f"----- mail to {address} -----")
            self.say(f"From: {msg['From']}\nTo: {msg['To']}\nReply-To: {msg['Reply-To']}\nSubject: {msg['Subject']}\n")
            self.say(body_of(msg).rstrip())
            self.say()

    def run_jobs(self) -> None:
        service = self.app.service
        service.poll()
        service.tick()
        service.send()

    def deliver_reply(self, player: PlayerSpec, to_msg: EmailMessage, text: str, n: int) -> None:
        data = reply_to(
            to_msg,
            text,
            sender=f"{player.name} <{player.address}>",
            message_id=f"<demo-{player.seat}-{n}@client.example>",
        )
        # Delivered at the demo's (simulated) time, as a mail server on the same clock would.
        deliver_to_maildir(self.inbox_path, data, clock_ns=int(self.clock.now().timestamp() * 1_000_000_000))
        if not self.quiet:
            shown = " / ".join(text.splitlines())
            self.say(f">>>>> {player.name} replies: {shown}")

    def read_all(self, latest: dict[str, EmailMessage], gm: str) -> None:
        """Every player (and the GM) reads new mail; players keep the last turn sheet to reply to."""
        for player in PLAYERS:
            self.keep_latest(latest, player, self.new_mail(player.address))
        self.show(gm, self.new_mail(gm))

    def keep_latest(self, latest: dict[str, EmailMessage], player: PlayerSpec, msgs: list[EmailMessage]) -> None:
        """Show a player's new mail, keeping the last turn sheet (a mail to reply to, no [ERROR])
        as the one the player replies to next: the results that open the next turn included."""
        self.show(player.address, msgs)
        for msg in msgs:
            if msg["Reply-To"] is not None and "[ERROR]" not in str(msg["Subject"]):
                latest[player.seat] = msg

    def open_turn_number(self) -> int | None:
        from bot.store import find_game_row, open_turn

        with self.app.db.read() as session:
            game = find_game_row(session, "demo1")
            turn = open_turn(session, game) if game is not None else None
            return turn.number if turn is not None else None

    def play(self) -> int:
        """The whole game; the app is closed when it ends, however it ends."""
        with self.app:
            return self._play()

    def _play(self) -> int:
        gm = "gm@demo.example"
        with self.app.db.transaction() as session:
            create_game(
                self.app.shell,
                session,
                kind="racecraft",
                name="demo1",
                players=PLAYERS,
                gm_address=gm,
                deadline="48h",
                timezone="Europe/London",
                seed=2026,
            )
        self.say(f"Flagman demo: Racecraft game demo1, five players, by mail on SQLite + Maildir in {self.root}")
        self.say(
            "The schedule: a turn every 48 hours (Europe/London), resolved early once every order is in; "
            "the GM gets a daily digest. The clock is simulated: a deadline passes in a moment.\n"
        )
        self.app.service.send()
        latest: dict[str, EmailMessage] = {}
        for _ in range(20):
            self.read_all(latest, gm)
            turn = self.open_turn_number()
            if turn is None:
                break
            if turn == 2:
                self.gm_at_work(gm)
            n = 0
            for player in PLAYERS:
                for text in SCRIPT.get(turn, {}).get(player.seat, []):
                    n += 1
                    self.deliver_reply(player, latest[player.seat], text, turn * 100 + n)
                    self.run_jobs()
                    self.keep_latest(latest, player, self.new_mail(player.address))
            if self.open_turn_number() == turn:
                # Someone's orders are missing (Anna forgets turn 3): let the deadline pass.
                self.say(f"..... the deadline of turn {turn} passes .....")
                self.clock.advance(hours=49)
            self.run_jobs()
        self.read_all(latest, gm)
        with self.app.db.read() as session:
            from bot.games.turns import current_state
            from bot.store import find_game_row

            game = find_game_row(session, "demo1")
            assert game is not None
            rules, state, _ = current_state(session, game)
            finished = rules.is_finished(state)
            played = len(game.turns)
            self.say("=" * 60)
            if finished:
                self.say(f"The race is over after {played} turns; {self.mails_shown} mails were sent. Final result:")
            else:
                self.say(f"The race did not finish ({played} turns); {self.mails_shown} mails were sent. Standings:")
            # The result as the final mail writes it: competition places, names only.
            for placing in rules.view(state, None, Viewer.PUBLIC).standings:
                self.say(
                    f"  {placing.place}. " + ", ".join(placing.players) + (f" ({placing.note})" if placing.note else "")
                )
        self.where_it_all_is()
        return 0 if finished else 1

    def gm_at_work(self, gm: str) -> None:
        """The GM's side: the daily digest (sent now rather than at [schedule] digest_time), and
        a command in the reply to it, confirmed to the GM and told to the players."""
        from bot.gm import digest

        self.say("..... the GM's daily digest goes out ([schedule] digest_time, 08:00 in the GM's zone) .....")
        digest.send_due_digests(self.app.shell, force=True)
        self.app.service.send()
        mails = self.new_mail(gm)
        self.show(gm, mails)
        (sheet,) = [m for m in mails if str(m["Subject"]).startswith("[GM digest]")]
        command = "EXTEND demo1 12h"
        data = reply_to(sheet, command, sender=f"The GM <{gm}>", message_id="<demo-gm-1@client.example>")
        deliver_to_maildir(self.inbox_path, data, clock_ns=int(self.clock.now().timestamp() * 1_000_000_000))
        if not self.quiet:
            self.say(f">>>>> the GM replies to the digest: {command}")
        self.run_jobs()
        self.show(gm, self.new_mail(gm))

    def where_it_all_is(self) -> None:
        """The game's archive written, and where it, the mail and the database are."""
        from bot.games.archive import write_game_archive

        archive = self.root / "archive" / "demo1"
        index = write_game_archive(self.app.db, "demo1", archive)
        outbox = self.app.settings.resolve_path(self.app.settings.outbox.path)
        self.say("")
        self.say(f"The game's public archive (HTML, each turn's report and picture, the dice): {index}")
        self.say(f"Every mail sent, HTML parts and pictures included, one Maildir per address: {outbox}/")
        self.say(f"The database: {self.root / 'flagman.sqlite'}; the mail read: {self.inbox_path}/.Processed/")
        if self.root.name.startswith("flagman-demo-"):
            self.say("(These are removed as the demo ends: `flagman demo --keep DIR` keeps them.)")


def run_demo(keep: str | None = None, quiet: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="flagman-demo-"))
    try:
        return Demo(root, out, quiet).play()
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


__all__ = ["run_demo", "timedelta"]
