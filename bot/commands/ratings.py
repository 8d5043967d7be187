"""RATING [ON|OFF] (mail-interface.md, "Player commands"; docs/championships.md, "Ratings"):
whether a player's rating is shown, in their own results letters and on the archive's ratings
page; RATING alone asks for it. The answer says what it is now in each kind of game they have
rated races of (shown once they have finished `[ratings] shown_after` of them). RATING is about
the person, not a game: RATING alone from a person's plain registered address is answered at
that address (which is theirs, so a forged From tells the person only what is theirs); RATING
ON|OFF changes their setting, and wants a mail that proves them (a reply to a mail of ours)."""

from __future__ import annotations

from sqlalchemy import select

from bot.commands.grammar import Rating
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Notice
from bot.games import preferences
from bot.games.ratings import ratings_of_person
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.models import Player
from rules import find_game


def _now_rated(ctx: CommandContext, player: Player) -> list[dict[str, object]]:
    shown_after = ctx.shell.settings.ratings.shown_after
    return [
        {
            "game": find_game(mine.kind).title,
            "rating": mine.rating.shown,
            "races": mine.rating.races,
            "shown": mine.rating.races >= shown_after,
            "more": max(0, shown_after - mine.rating.races),
        }
        for mine in ratings_of_person(ctx.session, player, shown_after)
    ]


def by_plain_address(ctx: CommandContext) -> Player | None:
    """The person whose registered address is the mail's From, if any (proved or not)."""
    sender = ctx.inbound.sender
    return ctx.session.scalar(select(Player).where(Player.address == sender)) if sender else None


def rating(ctx: CommandContext, command: Rating) -> Reply:
    """RATING ON|OFF: the preference, confirmed with the ratings so far; RATING alone: the
    ratings so far. Answered to the registered address of the player the mail proved alone;
    RATING alone, from a plain From that is a person's registered address, at that address."""
    player = ctx.player()
    if player is None and ctx.stranger:
        person = by_plain_address(ctx)
        if person is not None and command.on is not None:
            raise ctx.refuse(
                say("commands_rating_unproven_title", on=command.on),
                say("commands_rating_unproven", on=command.on),
                kind="rating",
                label=command_label("RATING", came=Came.WANTS_PROOF),
            )
        player = person
    if player is None:
        raise ctx.refuse(
            say("commands_players_only_title", verb="RATING"),
            say("commands_players_only", verb="RATING", gm_zone=False),
            kind="rating",
            label=command_label("RATING", came=Came.REFUSED),
        )
    settings = ctx.shell.settings
    page = (
        settings.bot.public_url.rstrip("/") + "/_ratings/"
        if settings.bot.public_url and settings.bot.archive_dir
        else ""
    )
    if command.on is None:
        text = say(
            "commands_rating_asked",
            on=bool(player.rating),
            shown_after=settings.ratings.shown_after,
            rated=_now_rated(ctx, player),
            page=page,
            archive=bool(settings.bot.archive_dir),
        )
        return Reply(
            (Notice(ctx.to, say("commands_rating_title", on=None), text, kind="rating", error=False),),
            label=command_label("RATING"),
        )
    changed = preferences.set_rating(player, command.on)
    text = say(
        "commands_rating",
        on=command.on,
        changed=changed,
        shown_after=settings.ratings.shown_after,
        rated=_now_rated(ctx, player) if command.on else [],
        page=page,
        archive=bool(settings.bot.archive_dir),
    )
    return Reply(
        (Notice(ctx.to, say("commands_rating_title", on=command.on), text, kind="rating", error=False),),
        label=command_label("RATING", on=command.on),
    )
