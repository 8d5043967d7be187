"""``SEASON <game> NEW <season> [settings]``, ``SEASON <game> ADD <season>`` and ``SEASON <game>
NEXT [CONFIRM|REDRAW]``: a GM makes a championship season by mail, with the game named as its first
race, adds the game to a season of theirs as its next race, or sees (and with CONFIRM makes) the
next season of the series the game's season belongs to, its tiers drawn by the bot (and with
REDRAW draws it again after a correction made the draw shown stale) (docs/championships.md). The game named proves the GM: only
the holder of that game's GM power may use it, and only a season whose GM is that game's GM
takes it."""

from __future__ import annotations

from bot.commands.gm import GmAction
from bot.games import season_tiers, seasons
from bot.letters.words import say
from bot.safe_text import echo
from rules import find_game

# The settings words of SEASON ... NEW, each followed by its value, and the `SeasonSettings`
# field each sets.
SETTINGS = {
    "SCORING": "scoring",
    "DROP": "drop",
    "NOSHOW": "no_show_penalty",
    "NMR": "nmr_penalty",
    "RACES": "races",
    "TRACKS": "tracks",
    "SERIES": "series",
    "TIER": "tier",
    "UP": "promote",
    "DOWN": "relegate",
    "FIELD": "min_field",
    "BENCH": "bench_newcomers",
}
_NUMBERS = frozenset({"drop", "no_show_penalty", "nmr_penalty", "races", "tier", "promote", "relegate", "min_field"})


def season(ctx: GmAction, args: tuple[str, ...]) -> str:
    words = " ".join(args).split()
    what, rest = (words[0].upper(), words[1:]) if words else ("", [])
    if what == "NEW" and rest:
        return _new(ctx, rest[0], rest[1:])
    if what == "ADD" and len(rest) == 1:
        found = seasons.find_season(ctx.session, rest[0])
        if found is None or found.gm_address != ctx.game.gm_address.strip().lower():
            raise seasons.SeasonRequestError(say("season_none_of_yours", season=echo(rest[0], 40)))
        race = seasons.add_race(ctx.session, found, ctx.game.name)
        return say("season_race_added", season=found.name, game=ctx.game.name, round=race.round)
    if what == "NEXT" and len(rest) <= 1 and (not rest or rest[0].upper() in ("CONFIRM", "REDRAW")):
        return _next(ctx, then=rest[0].upper() if rest else "")
    raise seasons.SeasonRequestError(say("season_mail_syntax", game=ctx.game.name))


def _next(ctx: GmAction, *, then: str) -> str:
    """The next season of the series the game's season belongs to: the draw (stored the first
    time it is shown), the draw drawn again (REDRAW), or the draw made (CONFIRM). Only the GM of
    the game's season may see, redraw or confirm it: a GM confirms the tiers they run, the draw
    made once every tier's GM has."""
    raced = seasons.season_of(ctx.session, ctx.game)
    gm = ctx.game.gm_address.strip().lower()
    if raced is None or raced[0].gm_address != gm:
        raise seasons.SeasonRequestError(say("season_not_a_race", game=ctx.game.name))
    series = raced[0].series
    if then == "CONFIRM":
        return say("season_draw", draw=season_tiers.confirm_next(ctx.shell, ctx.session, series, gm_address=gm))
    if then == "REDRAW":
        season_tiers.gm_of_a_tier(ctx.session, series, gm)
        return say("season_draw", draw=season_tiers.redraw(ctx.session, series, ctx.shell.now(), gm)[0])
    found = season_tiers.show_draw(ctx.session, series, ctx.shell.now(), gm)
    if found is None:
        raise seasons.SeasonRequestError(say("season_no_draw", series=series))
    return say("season_draw", draw=found[0])


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
        elif field == "bench_newcomers":
            if value.upper() not in ("ON", "OFF"):
                raise seasons.SeasonRequestError(say("season_mail_on_off", word=key.upper(), value=echo(value, 20)))
            given[field] = value.upper() == "ON"
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
        kind=find_game(made.kind).title,
        scoring=made.scoring,
        races=made.races_planned,
        games=[ctx.game.name],
        drop=made.drop_results,
        no_show_penalty=made.no_show_penalty,
        nmr_penalty=made.nmr_penalty,
        tracks=list(made.tracks),
        series=made.series,
        tier=made.tier,
        promote=made.promote,
        relegate=made.relegate,
        min_field=made.min_field,
        bench_newcomers=made.bench_newcomers,
    )


__all__ = ["SETTINGS", "season"]
