"""`flagman demo --season`: a short championship season by mail, on the embedded default, in a
temp dir (docs/championships.md).

Three scripted players and two robot drivers race a season of three Racecraft races: the first
made here, the next ones made and started by the bot as the one before ends, their grid drawn
from the table. The players read their turn sheets from their Maildirs and reply to them, as
`flagman demo` does; Steve forgets to order in race 1 (a no-show, and its penalty). After each
race the demo prints the season's table as the final result mail carried it to the players,
and at the end the final table and the season's page. The clock is simulated; nothing else is.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import TextIO

from bot.cli.demo import Demo
from bot.games import seasons
from bot.games.archive import write_season_page
from bot.games.turns import PlayerSpec, create_game
from bot.letters.words import say
from bot.mail_in.inbox import deliver_to_maildir
from bot.models import Game
from bot.testing import body_of, reply_to

SEASON = "demo-cup"
RACES = 3
PEOPLE = (
    PlayerSpec("kelly", "kelly@example.org", "Kelly", "Europe/London"),
    PlayerSpec("seb", "seb@example.org", "Seb", "Europe/Paris"),
    PlayerSpec("steve", "steve@example.org", "Steve", "America/New_York"),
)
ROBOTS = ("robo", "tin:easy")
NO_SHOW = ("steve", 1)  # never orders in race 1
GM = "gm@demo.example"


class SeasonDemo(Demo):
    def play(self) -> int:
        with self.app:
            return self._season()

    def _season(self) -> int:
        with self.app.db.transaction() as session:
            create_game(
                self.app.shell, session, kind="racecraft", name=f"{SEASON}-r1", players=PEOPLE, robot_seats=ROBOTS,
                gm_address=GM, deadline="48h", timezone="Europe/London", seed=2026, options={"turns": "3"},
            )  # fmt: skip
            seasons.create_season(
                self.app.shell,
                session,
                seasons.SeasonSettings(
                    name=SEASON,
                    kind="racecraft",
                    gm_address=GM,
                    scoring="f1",
                    drop=1,
                    no_show_penalty=5,
                    races=RACES,
                    games=(f"{SEASON}-r1",),
                ),  # fmt: skip
            )
        self.say(
            f"Flagman demo: season {SEASON}, {RACES} Racecraft races of three players and two robots, "
            f"by mail on SQLite + Maildir in {self.root}"
        )
        self.say(
            "Scoring f1 (25-18-15-...), each driver's best two races counting, a no-show loses 5 points; the bot makes each "
            "next race when the last ends, its grid drawn from the table. The clock is simulated.\n"
        )
        self.app.service.send()
        for round_ in range(1, RACES + 1):
            game = f"{SEASON}-r{round_}"
            if not self._race(game, round_):
                self.say(f"Race {round_} ({game}) was not made or did not finish.")
                return 1
            self.say(f"===== after race {round_} of {RACES} ({game}), the table as the final result mailed it:")
            self.say(self._table_mailed(game))
            self.say()
        self.run_jobs()  # the season ends at the tick after its last race
        with self.app.db.read() as session:
            season = seasons.find_season(session, SEASON)
            assert season is not None
            self.say("=" * 60)
            self.say(f"The season is {season.status}; {self.mails_shown} mails were read by the players. Final table:")
            self.say(say("season_table", table=seasons.table_of(session, season)))
            page = write_season_page(session, season, self.root / "archive" / "_seasons" / SEASON)
        self.say(f"\nThe season's page (its table and a chart of points over races): {page}")
        if self.root.name.startswith("flagman-demo-"):
            self.say("(It is removed as the demo ends: `flagman demo --season --keep DIR` keeps it.)")
        return 0

    def _race(self, game: str, round_: int) -> bool:
        """Race `game` by mail to its end: each turn every player replies to their sheet (but the
        no-show), and a deadline passes when an order is missing."""
        latest: dict[str, EmailMessage] = {}
        for turn in range(1, 12):
            if self._game(game) is None:
                return False
            if self._finished(game):
                self.run_jobs()  # the next race, made at the tick after
                return True
            self._read(game, latest)
            for n, person in enumerate(PEOPLE):
                if (person.seat, round_) == NO_SHOW or person.seat not in latest:
                    continue
                orders = f"USE {(n + round_) % 4}" if turn == 1 else "CRUISE"
                data = reply_to(
                    latest[person.seat],
                    orders,
                    sender=f"{person.name} <{person.address}>",
                    message_id=f"<season-{person.seat}-{round_}-{turn}@client.example>",
                )
                deliver_to_maildir(self.inbox_path, data, clock_ns=int(self.clock.now().timestamp() * 1_000_000_000))
                if not self.quiet:
                    self.say(f">>>>> {person.name} replies to [{game}]: {orders}")
            self.run_jobs()
            self.clock.advance(hours=49)  # the deadline passes (the no-show's, or a sprint's)
            self.run_jobs()
        return self._finished(game)

    def _read(self, game: str, latest: dict[str, EmailMessage]) -> None:
        for person in PEOPLE:
            for msg in self.new_mail(person.address):
                self.mails_shown += 1
                subject = str(msg["Subject"])
                if not self.quiet:
                    self.say(f"----- {person.name} reads: {subject}")
                if f"[{game}]" in subject and msg["Reply-To"] is not None and "[ERROR]" not in subject:
                    latest[person.seat] = msg

    def _table_mailed(self, game: str) -> str:
        """The season's table in Kelly's final result of `game`, as mailed."""
        folder = self.mailbox("kelly@example.org") / "new"
        for path in sorted(folder.iterdir(), key=lambda p: p.name):
            msg = message_from_bytes(path.read_bytes(), policy=policy.default)
            if f"[{game}] Final result" in str(msg["Subject"]) and isinstance(msg, EmailMessage):
                text = body_of(msg).replace("\r\n", "\n")
                start = text.find(f"Season {SEASON} (")
                return text[start:].split("\n\n", 1)[0].rstrip() if start >= 0 else text
        return f"(no final result of {game} in Kelly's mail)"

    def _game(self, name: str) -> Game | None:
        from bot.store import find_game_row

        with self.app.db.read() as session:
            return find_game_row(session, name)

    def _finished(self, name: str) -> bool:
        game = self._game(name)
        return game is not None and str(game.status) == "finished"


def run_season_demo(keep: str | None = None, quiet: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="flagman-demo-"))
    try:
        return SeasonDemo(root, out, quiet).play()
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


__all__ = ["run_season_demo"]
