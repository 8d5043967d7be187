"""The picture a letter shows, and the HTML part it is shown in.

`html_body` renders the mail's HTML template (`bot.mail_out.html.html_template`) from the very
context the text part was rendered from, plus ``picture`` (its ``cid``, ``alt``, ``width``,
``height``, or None). The picture is drawn from public views only (`bot.pictures`), once per
game and turn: the PNG is kept in the letters' `LetterCache` (one a turn at the deadline), so
500 games x 8 players at a deadline draw 500 pictures, not 4,000.
"""

from __future__ import annotations

from collections.abc import Mapping

import jinja2
from sqlalchemy.orm import Session

from bot import pictures, store
from bot.letters.cache import LetterCache, PictureKey
from bot.mail_out.compose import HtmlBody, InlineImage
from bot.mail_out.html import html_template
from bot.mail_out.render import Renderer, TemplateError
from bot.models import Game, Turn
from bot.pictures import Picture, Scene
from rules.api import AnyGame, GameState, View, Viewer


def public_frames(rules: AnyGame, states: list[GameState]) -> tuple[View, ...]:
    return tuple(rules.view(state, None, Viewer.PUBLIC) for state in states)


def scene_of(
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    resolved: Turn | None,
    decoded: Mapping[int, GameState] | None = None,
) -> Scene:
    """The public frames a picture of `state` needs, and the public events of `resolved`.

    `state` is the state the mail is about: the state after `resolved` for a results mail,
    the open turn's state for a turn sheet. `decoded`: turns' states already decoded, by turn
    id (`LetterCache.states`), used instead of decoding their ``state`` column again.
    """
    known = decoded or {}

    def state_of(turn: Turn) -> GameState:
        found = known.get(turn.id)
        return found if found is not None else rules.load_state(turn.state)

    events = tuple(resolved.events or ()) if resolved is not None else ()
    if not pictures.needs_history(game.kind):
        before = [state_of(resolved)] if resolved is not None else []
        return Scene(public_frames(rules, [*before, state]), events)
    turns = store.game_turns(session, game)
    states: list[GameState] = [state_of(turns[0])] if turns else []
    upto = resolved.number if resolved is not None else None
    for turn in turns:
        if turn.state_after is None or (upto is not None and turn.number >= upto):
            continue
        states.append(rules.load_state(turn.state_after))
    # A results mail adds the state it reports; a turn sheet's state is the last one stored.
    if resolved is not None or not states:
        states.append(state)
    return Scene(public_frames(rules, states), events)


def picture_for(
    session: Session,
    cache: LetterCache,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    resolved: Turn | None,
) -> Picture | None:
    """The picture of the game as it stands in this mail, drawn once per `cache`."""
    drawn = cache.pictures
    key: PictureKey = (
        game.id,
        resolved.number if resolved is not None else None,
        turn.number if turn is not None else None,
    )
    if key not in drawn:
        drawn[key] = pictures.draw(game.kind, scene_of(session, game, rules, state, resolved, cache.states))
    return drawn[key]


def picture_cid(game: Game, turn: Turn | None, resolved: Turn | None, domain: str) -> str:
    number = resolved.number if resolved is not None else (turn.number if turn is not None else 0)
    return f"turn{number}.{game.name}.picture@{domain}"


def html_body(
    renderer: Renderer,
    session: Session,
    cache: LetterCache,
    game: Game,
    rules: AnyGame,
    name: str,
    context: Mapping[str, object],
    *,
    state: GameState,
    turn: Turn | None,
    resolved: Turn | None,
    domain: str,
) -> HtmlBody | None:
    """The HTML alternative of mail `name`, or None when the game has no HTML template for it."""
    template = html_template(renderer, game.kind, name)
    if template is None:
        return None
    picture = picture_for(session, cache, game, rules, state, turn, resolved)
    images: tuple[InlineImage, ...] = ()
    shown = None
    if picture is not None:
        cid = picture_cid(game, turn, resolved, domain)
        number = resolved.number if resolved is not None else (turn.number if turn is not None else 0)
        images = (InlineImage(cid, picture.png, f"{game.name}-turn-{number}.png"),)
        shown = {"cid": cid, "alt": picture.alt, "width": picture.width, "height": picture.height}
    try:
        text = template.render(**context, picture=shown)
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"template {name!r} (HTML): {exc}") from exc
    return HtmlBody(text, images)
