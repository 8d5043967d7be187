"""A seat's and the GM's letters about a game as it stands: turn sheets, results, the final
result, a status or a sheet sent again (`post_seat_letter`, `post_gm_letter`), built from one
context (`seat_context`, `gm_context`, on `bot.letters.context.game_context`), with the seat's
one-tap orders, its own options picture, the turn's picture and its calendar part. `games/`
decides when a letter goes (`bot.games.turns`: a game's start, a turn resolved, REPLACE,
RESEND); this module says how it reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from bot import outlook, store
from bot.facts import Claims, Recheck, Refiled, SeasonTable, Withdrawn
from bot.letters import carried as carried_words
from bot.letters import claims, invitations, reveal
from bot.letters.addressing import ToGm, ToSeat, post
from bot.letters.cache import LetterCache
from bot.letters.context import deadline_text, game_context, practice_terms
from bot.letters.defaults import gets
from bot.letters.pictures import html_body
from bot.letters.reports import public_report
from bot.letters.words import say
from bot.mail_out import calendar as ical
from bot.mail_out import queue as mailout
from bot.mail_out.compose import InlineImage
from bot.mail_out.html import html_template
from bot.mail_out.one_tap import mailto_link, one_tap_orders
from bot.mail_out.render import sharing
from bot.models import Game, GameStatus, Seat, Turn
from bot.outlook import Outcome, timing
from bot.pictures import draw_options
from bot.ratings import Change
from bot.shell import Shell
from rules.api import AnyGame, GameState, View


def _filled_by(outcome: Outcome | None, seat: str) -> str:
    """What a defaulted seat's orders were (the results say the GM's plot was used)."""
    return "the GM's plot" if outcome is not None and outcome.filled.get(seat) == "plot" else "the default"


@dataclasses.dataclass(frozen=True, slots=True)
class TurnBefore:
    """The turn resolved just before a turn that needed no orders and ran at once (Racecraft's
    final sprint): its results go out with that turn's, in one letter, not in a letter of their
    own a second before. `state`: the game after it; `outcome`: its resolution, replayed."""

    turn: Turn
    state: GameState
    outcome: Outcome


def _corrected(resolved: Turn, before: TurnBefore | None) -> str:
    """The label of the turn this letter's results replace after a ROLLBACK ("" none): the turn
    resolved, or the one resolved just before it in the same letter (a ROLLBACK of a Racecraft
    race's last tactical turn is resolved again with the final sprint after it)."""
    if resolved.corrections:
        return resolved.label
    if before is not None and before.turn.corrections:
        return before.turn.label
    return ""


def _before(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    before: TurnBefore | None,
    seat: str | None,
    zone: str,
    *,
    cache: LetterCache,
) -> dict[str, Any] | None:
    if before is None:
        return None
    report = public_report(shell.renderer, cache, rules, before.state, before.outcome, cache.labels_of(game))
    outcome = before.outcome
    return {
        "label": before.turn.label,
        "report": report,
        "defaulted": list(outcome.given_the_default),
        "plotted": list(outcome.given_the_plot),
        "you_defaulted": seat is not None and seat in outcome.defaulted,
        "you_defaulted_by": _filled_by(outcome, seat) if seat is not None else "",
        "dice": reveal.revealed(session, cache, game, rules, before.turn, outcome, seat, zone, final=True),
    }


def rating_words(change: Change | None, title: str) -> str:
    """What a person's own final result says of their rating in `title` ("": not shown)."""
    if change is None:
        return ""
    delta = change.delta
    if change.first:
        why = "first"
    elif delta >= 0 and change.beat_above:
        why = "beat_above"
    elif delta < 0 and change.lost_below:
        why = "lost_below"
    else:
        why = "up" if delta >= 0 else "down"
    return say("rating_change", change=change, title=title, why=why)


def season_words(season: SeasonTable | None) -> str:
    """A season's table as a results letter shows it ("": the game is no season's race)."""
    return say("season_table", table=season) if season is not None else ""


def _seat_words(seat: Seat, labels: Mapping[str, str]) -> dict[str, Any]:
    """The seat a letter goes to, as its templates name it (``shown``: its label, or its name)."""
    return {
        "name": seat.name,
        "display": seat.player.name,
        "address": seat.player.address,
        "shown": labels.get(seat.name, seat.name),
    }


def seat_context(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    seat: Seat,
    outcome: Outcome | None = None,
    resolved: Turn | None = None,
    subs: store.BySeat | None = None,
    *,
    cache: LetterCache,
    before: TurnBefore | None = None,
) -> dict[str, Any]:
    zone = seat.player.timezone
    when = timing(game, turn)
    expecting = rules.expected_players(state)
    expected = turn is not None and seat.name in expecting
    on_file_text: str | None = None
    gets_text: str | None = None
    said: tuple[Claims, ...] = ()  # what the letter claims (`bot.letters.claims`), beside its text
    if turn is not None and expected:
        seat_subs = store.submissions(session, turn, seat) if subs is None else subs.get(seat.id, ())
        on_file = outlook.on_file(rules, state, seat, seat_subs)
        on_file_text = rules.format_orders(on_file) if on_file is not None else None
        # The one default the sheet states, from the outlook (the GM's plot where it stands).
        counting = outlook.what_counts(rules, state, seat, on_file)
        gets_text = gets(counting) if on_file is None else None
        said = (claims.of_turn(game, turn, claims.counts(seat.name, counting)),)
    elif turn is not None and not when.resolved and expecting:
        said = (claims.of_turn(game, turn),)  # a turn that needs no orders is run at once: no claim
    labels = cache.labels_of(game)
    ctx = game_context(shell, game, rules)
    # The public view is worked out once for the turn's letters (the report's); each seat's view
    # is it with the seat's own part put in (`Game.player_view`), a new value for each seat.
    report = public_report(shell.renderer, cache, rules, state, outcome, labels)
    ctx.update(
        {
            "seat": _seat_words(seat, labels),
            "view": rules.player_view(state, report.view, seat.name),
            "report": report,
            "robots": labels,
            "turn": {
                "number": turn.number if turn else None,
                "label": turn.label if turn else None,
                # what the orders are for: the turn, or the round a program runs ahead to
                "orders_for": rules.orders_label(state, seat.name) if expected else None,
                "deadline": deadline_text(when, zone),
                "expected": expected,
                "early": when.early,
                "practice": practice_terms(shell, when),
                "needs_no_orders": turn is not None and not expecting,
                "dice": reveal.committed(session, cache, game, rules, turn, zone),
            },
            "resolved": {
                "number": resolved.number,
                "label": resolved.label,
                "defaulted": list(outcome.given_the_default) if outcome else [],
                "plotted": list(outcome.given_the_plot) if outcome else [],
                "you_defaulted": bool(outcome and seat.name in outcome.defaulted),
                "you_defaulted_by": _filled_by(outcome, seat.name),
                "correction": _corrected(resolved, before),
                "dice": reveal.revealed(
                    session, cache, game, rules, resolved, outcome, seat.name, zone, final=turn is None
                ),
                "gm_orders": reveal.gm_orders_in(session, cache, game, resolved, zone),
            }
            if resolved
            else None,
            "help": rules.order_help(state, seat.name) if expected else "",
            "on_file": on_file_text,
            "gets": gets_text,
            "before": _before(shell, session, game, rules, before, seat.name, zone, cache=cache),
            "timezone": zone,
            "claims": said,
        }
    )
    return ctx


def gm_context(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    outcome: Outcome | None = None,
    resolved: Turn | None = None,
    subs: store.BySeat | None = None,
    *,
    cache: LetterCache,
    before: TurnBefore | None = None,
) -> dict[str, Any]:
    ctx = game_context(shell, game, rules)
    # Who is still missing: the seats the outlook fills with the GM's plot or the default.
    missing = (
        list(
            outlook.of_turn(
                game, rules, state, store.turn_submissions(session, turn) if subs is None else subs
            ).defaulted
        )
        if turn is not None
        else []
    )
    report = public_report(shell.renderer, cache, rules, state, outcome, cache.labels_of(game))
    ctx.update(
        {
            # The GM's view is the public view (`rules.api.Game.view`): the report's, worked out once.
            "view": report.view,
            "report": report,
            "robots": cache.labels_of(game),
            "turn": {
                "number": turn.number if turn else None,
                "label": turn.label if turn else None,
                "deadline": deadline_text(timing(game, turn), game.timezone),
                "expected": False,
                "needs_no_orders": turn is not None and not rules.expected_players(state),
                "dice": reveal.committed(session, cache, game, rules, turn, game.timezone),
            },
            "resolved": {
                "number": resolved.number,
                "label": resolved.label,
                "defaulted": list(outcome.given_the_default) if outcome else [],
                "plotted": list(outcome.given_the_plot) if outcome else [],
                "you_defaulted": False,
                "correction": _corrected(resolved, before),
                "defaulted_by": [
                    {"seat": name, "by": _filled_by(outcome, name), "orders": rules.format_orders(outcome.orders[name])}
                    for name in outcome.defaulted
                ]
                if outcome
                else [],
                "dice": reveal.revealed(
                    session, cache, game, rules, resolved, outcome, None, game.timezone, final=turn is None
                ),
                "gm_orders": reveal.gm_orders_in(session, cache, game, resolved, game.timezone),
            }
            if resolved
            else None,
            "missing": missing,
            "before": _before(shell, session, game, rules, before, None, game.timezone, cache=cache),
            "seats": [
                {
                    "name": s.name,
                    "display": s.player.name,
                    "address": s.player.address,
                    "active": s.active,
                    "robot": s.robot,
                    "robot_level": s.robot_level,
                    "nmr_streak": s.nmr_streak,
                }
                for s in game.seats
            ],
            "timezone": game.timezone,
        }
    )
    return ctx


def post_seat_letter(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    seat: Seat,
    template: str,
    outcome: Outcome | None,
    resolved: Turn | None = None,
    subs: store.BySeat | None = None,
    into: mailout.NewRows | None = None,
    note: str | None = None,
    *,
    cache: LetterCache,
    before: TurnBefore | None = None,
    carried: Refiled | Withdrawn | None = None,
    season: SeasonTable | None = None,
    rating: Change | None = None,
    unrated_robot: bool = False,
) -> None:
    """`carried`: what became of the seat's orders a ROLLBACK kept for `turn` (its results say it);
    `season`: the table of the season `game` is a race of, for its results to show; `rating`:
    what the race did to the rating of the seat's holder, for their own final result alone;
    `unrated_robot`: the holder opted in and the race is not rated, a robot having driven a seat."""
    with sharing(cache.fragments):  # what every letter of the work shows alike, rendered once
        ctx = seat_context(
            shell, session, game, rules, state, turn, seat, outcome, resolved, subs, cache=cache, before=before
        )
        ctx["season"] = season_words(season)
        ctx["season_facts"] = season
        ctx["rating"] = rating_words(rating, str(ctx["game"]["title"])) or (
            say("rating_not_rated_robot", title=ctx["game"]["title"]) if unrated_robot else ""
        )
        if note:
            ctx["note"] = note
        ctx["carried"] = carried_words.in_results(carried, ctx["turn"]["deadline"]) if carried is not None else ""
        if template == "turn_sheet":
            # The first sheet of a seat tells its holder the seat password (mail-interface.md,
            # identity): this mail goes to the seat's registered address only, never in a log.
            ctx["seat"]["password"] = seat.secret
        rendered = shell.renderer.render(template, ctx, game=game.kind).claiming(*ctx["claims"])
        own = _own_picture(shell, game, template, ctx["view"], seat, turn, resolved)
        if own is not None:
            ctx["options_picture"] = own[0]
        ctx["one_tap"] = (
            one_tap_links(shell, game, rules, state, turn, seat)
            if html_template(shell.renderer, game.kind, template) is not None
            else []
        )
        html = html_body(
            shell.renderer,
            session,
            cache,
            game,
            rules,
            template,
            ctx,
            state=state,
            turn=turn,
            resolved=resolved,
            domain=shell.settings.bot.domain,
        )
        if html is not None and own is not None:
            html = dataclasses.replace(html, images=(*html.images, own[1]))
        # The deadline in the player's calendar: the open turn's, and the cancel of a turn resolved early.
        calendars = invitations.seat_parts(
            ical.Sender(shell.settings.bot.address, shell.settings.bot.name),
            shell.now(),
            game,
            rules,
            state,
            turn,
            seat,
            template,
            resolved=resolved,
            resolved_seats=tuple(outcome.orders) if outcome is not None else (),
        )
        post(shell, session, ToSeat(seat), rendered, kind=template, html=html, into=into, calendars=calendars)


def one_tap_links(
    shell: Shell, game: Game, rules: AnyGame, state: GameState, turn: Turn | None, seat: Seat
) -> list[dict[str, str]]:
    """Orders in one tap: for the HTML of the seat's own mail, each legal one-line
    order of the open turn as a ``mailto:`` link to the seat's signed reply address with the
    order in the subject (the bot reads it from there, `Intake._subject_orders`). The signed
    address goes into this seat's mail alone, as its Reply-To does."""
    if turn is None or game.status != GameStatus.ACTIVE:
        return []
    address = shell.reply_address(game.name, seat.name, seat.reply_salt)
    return [
        {"label": label, "order": order, "href": mailto_link(address, order)}
        for label, order in one_tap_orders(rules, state, seat.name)
    ]


def _own_picture(
    shell: Shell, game: Game, template: str, view: View, seat: Seat, turn: Turn | None, resolved: Turn | None
) -> tuple[dict[str, object], InlineImage] | None:
    """The seat's own options this turn as a picture, for the HTML of its mail:
    drawn from the seat's own view, so it goes into this seat's mail alone (the turn's public
    picture is still drawn once for everyone). None when the mail has no HTML or the game
    draws no options for this view."""
    if html_template(shell.renderer, game.kind, template) is None:
        return None
    picture = draw_options(game.kind, view)
    if picture is None:
        return None
    number = resolved.number if resolved is not None else (turn.number if turn is not None else 0)
    cid = f"options{number}.{seat.name}.{game.name}.picture@{shell.settings.bot.domain}"
    shown = {"cid": cid, "alt": picture.alt, "width": picture.width, "height": picture.height}
    return shown, InlineImage(cid, picture.png, f"{game.name}-turn-{number}-{seat.name}.png")


def post_gm_letter(
    shell: Shell,
    session: Session,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn | None,
    template: str,
    outcome: Outcome | None,
    resolved: Turn | None = None,
    subs: store.BySeat | None = None,
    into: mailout.NewRows | None = None,
    *,
    cache: LetterCache,
    before: TurnBefore | None = None,
    recheck: Recheck | None = None,
    season: SeasonTable | None = None,
) -> None:
    """`recheck`: what became of the orders a ROLLBACK kept for `turn` (the GM's copy says it);
    `season`: the table of the season `game` is a race of."""
    with sharing(cache.fragments):  # what every letter of the work shows alike, rendered once
        ctx = gm_context(shell, session, game, rules, state, turn, outcome, resolved, subs, cache=cache, before=before)
        ctx["season"] = season_words(season)
        ctx["season_facts"] = season
        ctx["carried"] = carried_words.in_gm_results(recheck, turn.label if turn else "") if recheck else ""
        if template == "turn_sheet_gm":
            ctx["gm_password"] = game.gm_secret  # the GM's own proof for mail to the plain address
        rendered = shell.renderer.render(template, ctx, game=game.kind)
        html = html_body(
            shell.renderer,
            session,
            cache,
            game,
            rules,
            template,
            ctx,
            state=state,
            turn=turn,
            resolved=resolved,
            domain=shell.settings.bot.domain,
        )
        post(shell, session, ToGm(game), rendered, kind=template, html=html, into=into)
