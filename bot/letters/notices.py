"""The letters of a game's life outside the turn's own (`bot.letters.sheets`): the reminder
before a deadline, the welcome of a seat's new holder, the codes a stranger's JOIN,
PRACTICE or SUBSTITUTE ON brings, and a seat's offer to the substitutes bench. `games/` decides that they go and to whom; here they are composed, from the
one context builder (`bot.letters.context`)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.letters import claims
from bot.letters.context import bot_context, deadline_text, game_context, seat_labels
from bot.letters.defaults import gets
from bot.mail_out.lists import mailto_link
from bot.mail_out.render import RenderedMail
from bot.models import Game, Seat, Turn
from bot.outlook import Counts, timing
from bot.shell import Shell
from rules.api import AnyGame, GameOrder, GameState


def reminder(
    shell: Shell,
    game: Game,
    rules: AnyGame,
    state: GameState,
    turn: Turn,
    seat: Seat,
    *,
    on_file: Sequence[GameOrder] | None,
    counting: Counts,
    left: str,
    early: bool,
) -> RenderedMail:
    """The reminder to `seat` of the deadline of `turn`, `left` before it: what it has on file
    and lacks, or that nothing is, and what counts if nothing else arrives (`counting`)."""
    zone = seat.player.timezone
    ctx = game_context(shell, game, rules)
    ctx.update(
        {
            "seat": {"name": seat.name, "display": seat.player.name},
            "turn": {
                "label": turn.label,
                "orders_for": rules.orders_label(state, seat.name),
                "deadline": deadline_text(timing(game, turn), zone),
                "early": early,
            },
            "left": left,
            "gets": gets(counting),
            "lacks": list(rules.missing_orders(state, seat.name, on_file)) if on_file is not None else None,
            "filled": "\n".join(counting.filled),
            "on_file": rules.format_orders(on_file) if on_file is not None else None,
            "help": rules.order_help(state, seat.name),
            "timezone": zone,
        }
    )
    return shell.renderer.render("reminder", ctx, game=game.kind).claiming(
        claims.of_turn(game, turn, claims.counts(seat.name, counting), early=early)
    )


def welcome(
    shell: Shell, game: Game, rules: AnyGame, seat: Seat, *, help_text: str, players: Sequence[str]
) -> RenderedMail:
    """The welcome mail of a seat's new holder before the start: the seat's password and reply
    address, the rules in short, the order syntax (`help_text`), the seats so far (`players`)."""
    ctx = game_context(shell, game, rules)
    ctx.update(
        {
            "seat": {
                "name": seat.name,
                "display": seat.player.name,
                "password": seat.secret,
                "shown": seat_labels([seat]).get(seat.name, seat.name),
            },
            "reply_address": shell.reply_address(game.name, seat.name, seat.reply_salt),
            "summary": rules.rules_summary(),
            "help": help_text,
            "players": list(players),
            "min_players": rules.min_players,
            "max_players": rules.max_players,
            "deadline_spec": game.deadline_spec,
            "game_timezone": game.timezone,
            "timezone": seat.player.timezone,
        }
    )
    return shell.renderer.render("welcome", ctx, game=game.kind)


def join_confirm(
    shell: Shell, game: Game, rules: AnyGame, *, code: str, subject_tag: str, valid_days: int
) -> RenderedMail:
    """The code mail of a stranger's JOIN: reply to it (or send `code`) to take the seat. It signs
    as every letter of the game, its times in the game's zone (a stranger has none of their own)."""
    values = game_context(shell, game, rules)
    values.update({"code": code, "subject_tag": subject_tag, "valid_days": valid_days, "timezone": game.timezone})
    return shell.renderer.render("join_confirm", values, game=game.kind)


def practice_confirm(
    shell: Shell,
    title: str,
    *,
    code: str,
    subject_tag: str,
    valid_days: int,
    idle_days: int,
    not_done: Sequence[str] = (),
) -> RenderedMail:
    """The code mail of a stranger's PRACTICE: reply to it to start a practice game of `title`;
    the other commands of the mail that asked for it (`not_done`, their verbs) are named as not
    done, with when to send them."""
    values = {
        "not_done": list(not_done),
        "bot": bot_context(shell),
        "title": title,
        "code": code,
        "subject_tag": subject_tag,
        "valid_days": valid_days,
        "idle_days": idle_days,
    }
    return shell.renderer.render("practice_confirm", values)


def seat_offer(
    shell: Shell,
    game: Game,
    rules: AnyGame,
    *,
    seat: str,
    why: str,
    greeting: str,
    timezone: str,
    code: str,
    subject_tag: str,
    valid_days: int,
    season_part: str = "",
) -> RenderedMail:
    """A seat offered to one person of the substitutes bench: reply (or the one-tap link, or
    ``CONFIRM <code>``) to take it over. The code is that person's alone; its sign-off says
    the person's `timezone`, as every letter of the game does."""
    values = game_context(shell, game, rules)
    values.update(
        {
            "seat": seat,
            "why": why,
            "greeting": greeting,
            "timezone": timezone,
            "code": code,
            "subject_tag": subject_tag,
            "valid_days": valid_days,
            "season_part": season_part,
            "link": mailto_link(shell.settings.bot.address, f"{subject_tag} Take over {seat} in {game.name}"),
        }
    )
    return shell.renderer.render("seat_offer", values, game=game.kind)


def series_confirm(shell: Shell, series: str, *, code: str, subject_tag: str, valid_days: int) -> RenderedMail:
    """The code mail of a stranger's JOIN <series> between seasons: reply to it to be in the
    series' next season."""
    values = {
        "bot": bot_context(shell),
        "series": series,
        "code": code,
        "subject_tag": subject_tag,
        "valid_days": valid_days,
    }
    return shell.renderer.render("series_confirm", values)


def bench_confirm(shell: Shell, title: str, *, code: str, subject_tag: str, valid_days: int) -> RenderedMail:
    """The code mail of a stranger's SUBSTITUTE ON: reply to it to be on the bench of `title`."""
    values = {
        "bot": bot_context(shell),
        "title": title,
        "code": code,
        "subject_tag": subject_tag,
        "valid_days": valid_days,
    }
    return shell.renderer.render("bench_confirm", values)
