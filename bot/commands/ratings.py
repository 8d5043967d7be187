"""RATING ON|OFF (mail-interface.md, "Player commands"; docs/championships.md, "Ratings"):
whether a player's rating is shown to them, in their own results letters. The answer says what
it is now in each kind of game they have rated races of (shown once they have finished
`[ratings] shown_after` of them)."""

from __future__ import annotations

from sqlalchemy import select

from bot.commands.grammar import Rating
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Notice
from bot.games import preferences
from bot.games.ratings import ratings_of
from bot.letters.words import say
from bot.models import Game, Player
from rules import find_game


def _now_rated(ctx: CommandContext, player: Player) -> list[dict[str, object]]:
    kinds = sorted(set(ctx.session.scalars(select(Game.kind).distinct())))
    shown_after = ctx.shell.settings.ratings.shown_after
    found: list[dict[str, object]] = []
    for kind in kinds:
        mine = ratings_of(ctx.session, kind).get(str(player.id))
        if mine is None:
            continue
        found.append(
            {
                "game": find_game(kind).title,
                "rating": mine.shown,
                "races": mine.races,
                "shown": mine.races >= shown_after,
                "more": max(0, shown_after - mine.races),
            }
        )
    return found


def rating(ctx: CommandContext, command: Rating) -> Reply:
    player = ctx.player()
    if player is None:
        raise ctx.refuse(
            say("commands_players_only_title", verb="RATING"),
            say("commands_players_only", verb="RATING", gm_zone=False),
            kind="rating",
            label="RATING refused",
        )
    changed = preferences.set_rating(player, command.on)
    text = say(
        "commands_rating",
        on=command.on,
        changed=changed,
        shown_after=ctx.shell.settings.ratings.shown_after,
        rated=_now_rated(ctx, player) if command.on else [],
    )
    return Reply(
        (Notice(ctx.to, say("commands_rating_title", on=command.on), text, kind="rating", error=False),),
        label=f"RATING {'ON' if command.on else 'OFF'}",
    )
