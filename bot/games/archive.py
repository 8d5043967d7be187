"""The game archive: a static site per game, plain HTML and CSS, no JavaScript.

Pages (all links relative, so the site works from a file system or any static web server):

* ``index.html``: the game, where the race stands or its final result, every turn;
* ``turn-NNN.html`` and ``turn-NNN.png``: one resolved turn's public report and its picture;
* ``rules.html``: the game's `rules_summary()`;
* ``style.css``.

Everything comes from the view for `Viewer.PUBLIC` and the turns' public events; nothing a
player sees privately is ever written here. The pictures are the ones the turn's mails
carry (same scene, same bytes).

`write_archive` writes a whole site (the CLI) or only what a new turn changes (the bot,
after every turn, when ``[bot] archive_dir`` is set: see `publish`). Files are written
to a temporary name and renamed, so a web server never serves half a page.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot import dice, pictures
from bot.games import ratings, record, seasons
from bot.letters.cache import DrawnPictures
from bot.letters.context import seat_labels
from bot.letters.reveal import ordinal
from bot.letters.words import say
from bot.mail_out.render import Renderer
from bot.models import Commitment, Game, GameStatus, Season, Turn
from bot.pictures import Picture, Scene, season_chart
from bot.shell import Shell
from bot.verify import CHECK_SCRIPT, RECORD, check_script, shown_time
from rules import find_game
from rules.api import Resolution, View, Viewer

if TYPE_CHECKING:
    from bot.db import Database

log = logging.getLogger("flagman.archive")


@dataclass(frozen=True, slots=True)
class TurnPage:
    number: int
    label: str
    file: str
    picture: str


def page_name(number: int) -> str:
    return f"turn-{number:03d}.html"


def picture_name(number: int) -> str:
    return f"turn-{number:03d}.png"


def _write(path: Path, data: bytes) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _render(renderer: Renderer, name: str, context: Mapping[str, object]) -> bytes:
    return renderer.env.get_template(f"archive/{name}").render(**context).encode("utf-8")


def write_archive(
    session: Session,
    game: Game,
    directory: Path,
    *,
    renderer: Renderer | None = None,
    turns: Iterable[int] | None = None,
    known: Mapping[int, Picture | None] | None = None,
) -> Path:
    """Write the static site of `game` into `directory`; returns the path of its index.

    `turns`: only these turns' pages (and their neighbours', whose links change) are
    rewritten, with the index; None writes every page. `known` gives pictures already drawn
    (by the turn's mails), by turn number.
    """
    renderer = renderer or Renderer()
    rules = find_game(game.kind)
    directory.mkdir(parents=True, exist_ok=True)
    rows = list(session.scalars(select(Turn).where(Turn.game_id == game.id).order_by(Turn.number)))
    wanted = set(range(1, len(rows) + 2)) if turns is None else {n + d for n in turns for d in (-1, 0, 1)}
    common = {
        "game": {"name": game.name, "title": rules.title, "kind": game.kind, "status": str(game.status)},
        # The seats as the letters name them (robots, seats handed to another person).
        "robots": seat_labels(game.seats),
        "utc": shown_time,
        "ordinal": ordinal,
    }
    # The record of the dice, first: each turn's page shows its part (which draw, the GM's hand).
    kept = record.build(session, game)
    dice_of = {t["number"]: t for t in kept["turns"]}
    pages, last_view = _write_turn_pages(directory, renderer, common, game, rows, wanted, dice_of, known or {})
    open_turn = next((t for t in rows if t.state_after is None), None)
    _write(
        directory / "index.html",
        _render(
            renderer,
            "index.html",
            {
                **common,
                "view": last_view,
                "turns": pages,
                "finished": bool(last_view and last_view.get("finished")),
                "open_label": open_turn.label if open_turn is not None else None,
                "latest": pages[-1] if pages else None,
            },
        ),
    )
    _take_down_stale_pages(directory, {page.number for page in pages})
    _write_record_and_fixed_pages(directory, renderer, common, rules.rules_summary, kept, every=turns is None)
    return directory / "index.html"


def _write_turn_pages(
    directory: Path,
    renderer: Renderer,
    common: Mapping[str, object],
    game: Game,
    rows: list[Turn],
    wanted: set[int],
    dice_of: Mapping[int, object],
    known: Mapping[int, Picture | None],
) -> tuple[list[TurnPage], View | None]:
    """Write the page and picture of every resolved turn in `wanted`; returns every resolved
    turn's `TurnPage` and the public view after the last one (None before any)."""
    rules = find_game(game.kind)
    resolved = [t for t in rows if t.state_after is not None]
    history = pictures.needs_history(game.kind)
    # Public views without events: the frames pictures are drawn from (as in the mails).
    frames: list[View] = [rules.view(rules.load_state(rows[0].state), None, Viewer.PUBLIC)] if rows else []
    pages: list[TurnPage] = []
    numbers = [t.number for t in resolved]
    last_view: View | None = frames[0] if frames else None
    for position, turn in enumerate(resolved):
        assert turn.state_after is not None
        state = rules.load_state(turn.state_after)
        needed = turn.number in wanted
        if history or needed:
            frames.append(rules.view(state, None, Viewer.PUBLIC))
        events = record.events_of(turn)
        view = rules.view(state, Resolution(state, events), Viewer.PUBLIC) if needed or turn is resolved[-1] else None
        if view is not None:
            last_view = view
        pages.append(TurnPage(turn.number, turn.label, page_name(turn.number), picture_name(turn.number)))
        if not needed:
            continue
        picture = known.get(turn.number)
        if picture is None:
            scene_frames = (
                frames if history else [rules.view(rules.load_state(turn.state), None, Viewer.PUBLIC), frames[-1]]
            )
            picture = pictures.draw(game.kind, Scene(tuple(scene_frames), tuple(e.to_json() for e in events)))
        if picture is not None:
            _write(directory / picture_name(turn.number), picture.png)
        prev_n = numbers[position - 1] if position > 0 else None
        next_n = numbers[position + 1] if position + 1 < len(numbers) else None
        assert view is not None
        _write(
            directory / page_name(turn.number),
            _render(
                renderer,
                "turn.html",
                {
                    **common,
                    "view": view,
                    "turn": {"number": turn.number, "label": turn.label},
                    "dice": dice_of.get(turn.number),
                    "chance": rules.chance,
                    "picture": {
                        "file": picture_name(turn.number),
                        "alt": picture.alt,
                        "width": picture.width,
                        "height": picture.height,
                    }
                    if picture is not None
                    else None,
                    "prev": page_name(prev_n) if prev_n else None,
                    "next": page_name(next_n) if next_n else None,
                },
            ),
        )
    return pages, last_view


def _take_down_stale_pages(directory: Path, resolved: set[int]) -> None:
    """Remove the page and picture of a turn no longer resolved (a ROLLBACK reopened it): the
    index, the record and the pages say the same turns."""
    for stale in directory.glob("turn-*.*"):
        number = stale.stem.removeprefix("turn-")
        if stale.suffix in (".html", ".png") and number.isdigit() and int(number) not in resolved:
            stale.unlink(missing_ok=True)


def _write_record_and_fixed_pages(
    directory: Path,
    renderer: Renderer,
    common: Mapping[str, object],
    rules_summary: Callable[[], str],
    kept: Mapping[str, object],
    *,
    every: bool,
) -> None:
    """The record of the dice and the page saying what was committed when: every time, since
    each turn opened, reopened or resolved adds to them (and a finished game publishes its
    orders); with them the script a player checks a results mail with (the dice's own
    arithmetic). The pages that never change (the script, the rules, the style) are written
    when `every` is asked for or when missing."""
    _write(directory / RECORD, json.dumps(kept, indent=1, sort_keys=True).encode("utf-8"))
    _write(directory / "dice.html", _render(renderer, "dice.html", {**common, "record": kept}))
    if every or not (directory / CHECK_SCRIPT).exists():
        _write(directory / CHECK_SCRIPT, check_script().encode("utf-8"))
    if every or not (directory / "rules.html").exists():
        _write(
            directory / "rules.html",
            _render(
                renderer,
                "rules.html",
                {**common, "paragraphs": [p.strip() for p in rules_summary().split("\n\n") if p.strip()]},
            ),
        )
    if every or not (directory / "style.css").exists():
        _write(directory / "style.css", _render(renderer, "style.css", {}))


def write_game_archive(db: Database, name: str, directory: Path, renderer: Renderer | None = None) -> Path:
    """The whole site of the game called `name` (the CLI); ValueError if there is no such game."""
    with db.read() as session:
        game = session.scalar(select(Game).where(Game.name == name.strip().lower()))
        if game is None:
            raise ValueError(f"no game called {name}")
        if not game.turns:
            raise ValueError(f"game {game.name} has not started: nothing to archive")
        return write_archive(session, game, directory, renderer=renderer)


# -- a season's page -------------------------------------------------------------------------

SEASONS_DIR = "_seasons"  # under the archive: no game's name starts with "_"


def write_season_page(session: Session, season: Season, directory: Path, renderer: Renderer | None = None) -> Path:
    """A season's page in `directory` (``index.html`` and ``style.css``): its table, worked out
    from its races' results, and its races, each linked to its game's archive beside it
    (``../../<game>/``) once published. Returns the path of the page."""
    renderer = renderer or Renderer()
    directory.mkdir(parents=True, exist_ok=True)
    table = seasons.table_of(session, season)
    races = [
        {
            "game": race.game.name,
            "finished": race.game.status == GameStatus.FINISHED,
            "published": bool(race.game.turns) and not race.game.practice,
        }
        for race in season.races
    ]
    drawn = season_chart.chart(
        [(f"{row.place}{'=' if row.shared else ''}", row.name, row.points, row.after) for row in table.rows],
        table.races_planned,
    )
    _write(directory / "index.html", _render(renderer, "season.html", {"table": table, "races": races, "chart": drawn}))
    _write(directory / "style.css", _render(renderer, "style.css", {}))
    return directory / "index.html"


def write_season_archive(db: Database, name: str, directory: Path, renderer: Renderer | None = None) -> Path:
    """The page of the season called `name` (the CLI); ValueError if there is no such season."""
    with db.read() as session:
        season = seasons.find_season(session, name)
        if season is None:
            raise ValueError(say("season_none", season=name[:40]))
        return write_season_page(session, season, directory, renderer)


# -- the ratings page ------------------------------------------------------------------------

RATINGS_DIR = "_ratings"  # under the archive: no game's name starts with "_"


@dataclass(frozen=True, slots=True)
class RatingsShown:
    """What the ratings page shows: for each kind of game with a finished game, its title and
    the people whose rating is shown (RATING ON, `shown_after` rated races finished)."""

    shown_after: int
    kinds: tuple[tuple[str, tuple[ratings.Rated, ...]], ...]


def ratings_shown(session: Session, shown_after: int) -> RatingsShown:
    return RatingsShown(
        shown_after,
        tuple(
            (find_game(kind).title, tuple(ratings.standings(session, kind, shown_after, shown_only=True)))
            for kind in ratings.kinds_raced(session)
        ),
    )


def write_ratings_page(session: Session, directory: Path, shown_after: int, renderer: Renderer | None = None) -> Path:
    """The ratings page in `directory` (``index.html`` and ``style.css``): in each kind of game,
    the ratings of the people who asked for theirs to be shown (RATING ON) and have finished
    `shown_after` rated races of it, best first; nobody else's. Returns the path of the page."""
    return write_ratings_shown(ratings_shown(session, shown_after), directory, renderer or Renderer())


def write_ratings_shown(shown: RatingsShown, directory: Path, renderer: Renderer) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    kinds = [
        {
            "title": title,
            "rows": [
                {"place": r.place, "name": r.name, "rating": r.rating.shown, "races": r.rating.races} for r in rows
            ],
        }
        for title, rows in shown.kinds
    ]
    _write(
        directory / "index.html", _render(renderer, "ratings.html", {"kinds": kinds, "shown_after": shown.shown_after})
    )
    _write(directory / "style.css", _render(renderer, "style.css", {}))
    return directory / "index.html"


# What this process last wrote on each archive's ratings page: written again only when it changes.
_ratings_written: dict[Path, RatingsShown] = {}


def _publish_ratings(shell: Shell, root: Path) -> None:
    """The archive's ratings page, written when what it shows changed since this process last
    wrote it (a rated race finished or rolled back, a RATING ON or OFF): one read of the
    ratings at each publish, the page rendered only when it differs. A kind whose stored
    ratings no longer count the record's rated races (after an upgrade, or two finals of a
    kind written side by side) is worked out again and stored first."""
    with shell.db.read() as reader:
        stale = [kind for kind in ratings.kinds_raced(reader) if not ratings.current(reader, kind)]
    for kind in stale:  # stored ratings that no longer count the record's races: stored anew
        with shell.db.transaction() as writer:
            ratings.rebuild(writer, kind)
    with shell.db.read() as reader:
        shown = ratings_shown(reader, shell.settings.ratings.shown_after)
    if _ratings_written.get(root) == shown:
        return
    try:
        write_ratings_shown(shown, root / RATINGS_DIR, shell.renderer)
    except OSError as exc:  # written again at the next publish
        log.error("the ratings page not written: %s", exc)
        return
    _ratings_written[root] = shown


# -- after every turn ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewTurn:
    """A turn just resolved, to publish once committed: its game, its number, and the pictures
    its letters drew (`bot.letters.cache.DrawnPictures`: the archive shows the same ones)."""

    game_id: int
    number: int
    pictures: DrawnPictures


def publish(shell: Shell, resolved: Iterable[NewTurn]) -> None:
    """With ``[bot] archive_dir``, write the turns `resolved` to their games' archives, and the
    commitments page and record of every game with a commitment its archive has not published yet
    (a turn opened at a game's start, reopened by a ROLLBACK: published before its orders close,
    so that a player can compare the commitment mailed with the one published). Called after the
    transaction that resolved or opened them commits, never before (a rolled-back turn must not be
    published): by the deadline after each turn (`bot.games.deadline.run`), by the service after a
    batch of mail (a GM's PROCESS, ROLLBACK, START, a JOIN that starts a game), by ``flagman gm``
    and ``flagman game new``. A practice game is its person's alone and counts for nothing
    (bot.games.practice): it is not published (`flagman archive` still writes one on demand)."""
    if not shell.settings.bot.archive_dir:
        return
    pending: dict[int, set[int]] = {}
    known: dict[int, dict[int, Picture | None]] = {}
    for turn in resolved:
        pending.setdefault(turn.game_id, set()).add(turn.number)
        for key, picture in turn.pictures.items():
            if key[0] == turn.game_id and key[1] == turn.number:
                known.setdefault(turn.game_id, {})[turn.number] = picture
    with shell.db.read() as reader:
        for game_id in reader.scalars(
            select(Commitment.game_id)
            .join(Game, Game.id == Commitment.game_id)
            .where(Commitment.published_at.is_(None), Game.practice.is_(False))
            .distinct()
        ):
            pending.setdefault(game_id, set())
    root = shell.settings.resolve_path(shell.settings.bot.archive_dir)
    for game_id, numbers in pending.items():
        try:
            with shell.db.read() as reader:
                game = reader.get(Game, game_id)
                if game is None or game.practice:
                    continue
                written = dice.end_of(dice.entries(reader, game_id))[0]  # the log as this snapshot has it
                write_archive(
                    reader,
                    game,
                    root / game.name,
                    renderer=shell.renderer,
                    turns=numbers,
                    known=known.get(game_id, {}),
                )
                raced = seasons.season_of(reader, game)
                if raced is not None:  # its season's table may have changed with it
                    write_season_page(reader, raced[0], root / SEASONS_DIR / raced[0].name, shell.renderer)
        except OSError as exc:
            # The turn and its mails are committed; the archive can be rewritten at any time
            # with `flagman archive`, so a full disk must not stop the deadline. Its commitments
            # stay unpublished: the next call tries again.
            log.error("archive of game %s not written: %s", game_id, exc)
            continue
        with shell.db.transaction() as writer:
            writer.execute(
                update(Commitment)
                .where(Commitment.game_id == game_id, Commitment.published_at.is_(None), Commitment.seq <= written)
                .values(published_at=shell.now())
            )
    _publish_ratings(shell, root)
