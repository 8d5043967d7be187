"""``SEASON <game> NEW <season> [settings]`` and ``SEASON <game> ADD <season>``: a GM makes a
championship season by mail, with the game named as its first race, or adds the game to a
season of theirs as its next race (docs/championships.md). The game named proves the GM: only
the holder of that game's GM power may use it, and only a season whose GM is that game's GM
takes it."""

from __future__ import annotations

from bot.commands.gm import GmAction
from bot.games import seasons
from bot.letters.words import say
from bot.safe_text import echo

# The settings words of SEASON ... NEW, each followed by its value, and the `SeasonSettings`
# field each sets.
SETTINGS = {
    "SCORING": "scoring",
    "DROP": "drop",
    "NOSHOW": "no_show_penalty",
    "NMR": "nmr_penalty",
    "RACES": "races",
    "TRACKS": "tracks",
}
_NUMBERS = frozenset({"drop", "no_show_penalty", "nmr_penalty", "races"})


def season(ctx: GmAction, args: tuple[str, ...]) -> str:
    what, rest = args[0].upper(), args[1].split()
    if what == "NEW" and rest:
        return _new(ctx, rest[0], rest[1:])
    if what == "ADD" and len(rest) == 1:
        found = seasons.find_season(ctx.session, rest[0])
        if found is None or found.gm_address != ctx.game.gm_address.strip().lower():
            raise seasons.SeasonRequestError(say("season_none_of_yours", season=echo(rest[0], 40)))
        race = seasons.add_race(ctx.session, found, ctx.game.name)
        return say("season_race_added", season=found.name, game=ctx.game.name, round=race.round)
    raise seasons.SeasonRequestError(say("season_mail_syntax", game=ctx.game.name))


def _new(ctx: GmAction, name: str, words: list[str]) -> str:
    given: dict[str, object] = {}
    if len(words) % 2:
        raise seasons.SeasonRequestError(say("season_mail_syntax", game=ctx.game.name))
    for key, value in zip(words[::2], words[1::2], strict=True):
        field = SETTINGS.get(key.upper())
        if field is None or field in given:
            raise seasons.SeasonRequestError(say("season_mail_setting", word=echo(key, 20), known=list(SETTINGS)))
        if field in _NUMBERS:
            if not value.isdigit() or len(value) > 4:
                raise seasons.SeasonRequestError(say("season_mail_number", word=key.upper(), value=echo(value, 20)))
            given[field] = int(value)
        elif field == "tracks":
            given[field] = tuple(value.split(","))
        else:
            given[field] = value
    settings = seasons.SeasonSettings(
        name=name,
        kind=ctx.game.kind,
        gm_address=ctx.game.gm_address,
        games=(ctx.game.name,),
        **given,  # type: ignore[arg-type]
    )
    made = seasons.create_season(ctx.shell, ctx.session, settings)
    return say(
        "season_created",
        season=made.name,
        kind=made.kind,
        scoring=made.scoring,
        races=made.races_planned,
        games=[ctx.game.name],
        drop=made.drop_results,
        no_show_penalty=made.no_show_penalty,
        nmr_penalty=made.nmr_penalty,
        tracks=list(made.tracks),
    )


__all__ = ["SETTINGS", "season"]
