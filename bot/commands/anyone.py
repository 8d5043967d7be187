"""Commands for anyone, strangers too (mail-interface.md, "Player commands"): LIST, RULES,
OBSERVE, UNOBSERVE, and CONFIRM, the answer to a confirmation mail.

What a stranger is answered, and how often, is the intake's call (`bot.intake`: a few answers
a day per address, a cap an hour for all of them); the answers themselves repeat none of the
mail's words -- a game is named only once it is found -- and carry the plain address only.

OBSERVE from a stranger does not start the observation: it mails the From a code
(`bot.mail_in.tokens`), and the observation starts when the address sends it back (a reply to
that mail, or a CONFIRM line). A player or GM, whose mail proved their registered address,
observes at once, at that address.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from bot import letters, store
from bot.commands.grammar import (
    Confirm,
    ListGames,
    Observe,
    Practice,
    Record,
    ShowRules,
    Stop,
    Substitute,
    Unobserve,
)
from bot.commands.handlers import CommandContext, Reply
from bot.fate import Letter, Notice, Refused
from bot.games import bench, observers, practice, reliability, requests, season_tiers, seats, signups, turns
from bot.letters import ToAddress, notices
from bot.letters.context import deadline_text, game_context
from bot.letters.records import Came, command_label
from bot.letters.words import say
from bot.mail_in import tokens
from bot.models import Game, GameStatus, Observer, Player, RequestStatus
from bot.outlook import timing
from bot.safe_text import name_from_address
from rules import find_game
from rules.reliability import Reliability

MAX_LISTED = 40  # running games in one LIST answer; the rest are counted
MAX_FINISHED = 10  # finished games named in it, the latest


def _unknown(ctx: CommandContext, verb: str) -> Reply:
    # The name is not repeated: for a stranger it is the sender's own words.
    raise ctx.refuse(
        say("commands_unknown_game_title"),
        say("commands_unknown_game", verb=verb),
        kind=verb.lower(),
        label=command_label(verb, came=Came.REFUSED),
    )


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def list_games(ctx: CommandContext, command: ListGames) -> Reply:
    """The games, the ones open for sign-ups first (free seats, how to join), then the ones
    under way (the open turn and its deadline, in the sender's zone if a player, else the
    game's), then the latest finished ones, by name."""
    session = ctx.session
    games = list(
        session.scalars(
            select(Game).options(selectinload(Game.seats)).where(Game.practice.is_(False)).order_by(Game.id)
        )
    )  # practice games are their person's alone
    running = sorted(
        (g for g in games if g.status != GameStatus.FINISHED),
        key=lambda g: (g.status != GameStatus.SIGNUP, timing(g, None).paused, g.name),
    )
    open_turns = store.open_turns(session, [g for g in running if g.status != GameStatus.SIGNUP])
    player = ctx.player()
    listed: list[dict[str, object]] = []
    for game in running[:MAX_LISTED]:
        rules = turns.rules_of(game)
        seated = len(store.active_seats(game))
        facts: dict[str, object] = {"name": game.name, "title": rules.title, "seated": seated}
        if game.status == GameStatus.SIGNUP:
            facts.update(
                open=True,
                free=max(0, rules.max_players - seated),
                min=rules.min_players,
                max=rules.max_players,
                spec=game.deadline_spec,
                zone=game.timezone,
            )
        else:
            turn = open_turns.get(game.id)
            zone = player.timezone if player is not None else game.timezone
            facts.update(
                open=False,
                turn=turn.label if turn is not None else "",
                paused=timing(game, turn).paused,
                due=(deadline_text(timing(game, turn), zone) or say("at_gm_call")) if turn is not None else "-",
            )
        listed.append(facts)
    finished = [g.name for g in games if g.status == GameStatus.FINISHED][-MAX_FINISHED:]
    text = say("commands_list", games=listed, more=max(0, len(running) - MAX_LISTED), finished=finished)
    return Reply(
        (Notice(ctx.to, say("commands_list_title"), text, kind="list", error=False),), label=command_label("LIST")
    )


def rules(ctx: CommandContext, command: ShowRules) -> Reply:
    """The rules summary JOIN's welcome mail gives, with the order syntax of the first turn and
    the game's settings (deadlines, early resolution, press)."""
    game = store.find_game_row(ctx.session, command.game, with_seats=True)
    if game is None:
        return _unknown(ctx, "RULES")
    rules = turns.rules_of(game)
    values = game_context(ctx.shell, game, rules)
    values.update(
        {
            "greeting": letters.greeting(ctx.to),
            "summary": rules.rules_summary(),
            "help": seats.sample_help(game),
            "min_players": rules.min_players,
            "max_players": rules.max_players,
            "players": len(store.active_seats(game)),
            "deadline_spec": game.deadline_spec,
            "game_timezone": game.timezone,
            "early": timing(game, None).early,
            "press": game.press,
        }
    )
    return Reply(
        (Letter(ctx.to, ctx.shell.renderer.render("rules", values, game=game.kind), "rules", game=game),),
        label=command_label("RULES", game.name),
    )


def observe(ctx: CommandContext, command: Observe) -> Reply:
    session, now = ctx.session, ctx.shell.now()
    game = store.find_game_row(session, command.game, with_seats=True)
    if game is None or game.practice:  # a practice game is its person's alone
        return _unknown(ctx, "OBSERVE")
    if game.status == GameStatus.FINISHED:
        raise ctx.refuse(
            say("commands_observe_title", what="over", game=game.name),
            say("commands_observe", what="over", game=game.name),
            kind="observe",
            label=command_label("OBSERVE", came=Came.REFUSED),
        )
    if ctx.seat_in(game) is not None or any(g.id == game.id for g in ctx.who.gm_of):
        return Reply(
            (
                Notice(
                    ctx.to,
                    say("commands_observe_title", what="in", game=game.name),
                    say("commands_observe", what="in", game=game.name, player=ctx.seat_in(game) is not None),
                    kind="observe",
                    error=False,
                ),
            ),
            label=command_label("OBSERVE"),
        )
    address = ctx.address
    if observers.is_observing(session, game, address):
        return Reply(
            (
                Notice(
                    ctx.to,
                    say("commands_observe_title", what="already", game=game.name),
                    say("commands_observe", what="already", game=game.name, unobserve=True),
                    kind="observe",
                    error=False,
                ),
            ),
            label=command_label("OBSERVE"),
        )
    count = session.scalar(select(func.count()).select_from(Observer).where(Observer.game_id == game.id)) or 0
    if count >= observers.MAX_OBSERVERS:
        raise ctx.refuse(
            say("commands_observe_title", what="full", game=game.name),
            say("commands_observe", what="full", game=game.name, most=observers.MAX_OBSERVERS),
            kind="observe",
            label=command_label("OBSERVE", came=Came.REFUSED),
        )
    if not ctx.stranger:  # the mail proved the registered address: no confirmation needed
        observers.observe(session, game, address, now)
        return Reply(
            (
                Notice(
                    ctx.to,
                    say("commands_observe_title", what="yes", game=game.name),
                    _observing_text(game),
                    kind="observe",
                    error=False,
                ),
            ),
            label=command_label("OBSERVE", game.name),
        )
    secrets = ctx.shell.settings.secrets
    code = tokens.make(secrets.site_secret, tokens.OBSERVE, game.name, now, address)
    values = game_context(ctx.shell, game, turns.rules_of(game))
    # Signed as every letter of the game, in the game's zone (a stranger has none of their own).
    values.update(
        {
            "code": code,
            "subject_tag": tokens.subject_tag(code),
            "valid_days": tokens.VALID_DAYS,
            "timezone": game.timezone,
        }
    )
    rendered = ctx.shell.renderer.render("observe_confirm", values, game=game.kind)
    return Reply(
        (Letter(ToAddress(address), rendered, "observe_confirm", game=game),),
        label=command_label("OBSERVE", game.name, came=Came.ASKED),
    )


def _observing_text(game: Game) -> str:
    return say("commands_observe", what="yes", game=game.name)


def unobserve(ctx: CommandContext, command: Unobserve) -> Reply:
    session = ctx.session
    game = None
    if command.game:
        game = store.find_game_row(session, command.game)
        if game is None:
            return _unknown(ctx, "UNOBSERVE")
    stopped = observers.unobserve(session, ctx.address, game)
    if not stopped:
        text = say("commands_unobserve", stopped=[], game=game.name if game is not None else "")
        return Reply(
            (Notice(ctx.to, say("commands_unobserve_title", stopped=[]), text, kind="unobserve", error=False),),
            label=command_label("UNOBSERVE"),
        )
    return Reply(
        (
            Notice(
                ctx.to,
                say("commands_unobserve_title", stopped=stopped),
                say("commands_unobserve", stopped=stopped),
                kind="unobserve",
                error=False,
            ),
        ),
        label=command_label("UNOBSERVE", *stopped),
    )


def code_stands(ctx: CommandContext, text: str) -> bool:
    """Whether the code `text` verifies now: an OBSERVE code from the address it was mailed to,
    a JOIN or ADDRESS code from the address it was mailed to for a request still waiting, a STOP
    code for an address change not made yet. What a code of ours does is done whatever the caps
    on answers say."""
    code = tokens.parse(text)
    if code is None:
        return False
    if code.kind == tokens.OBSERVE:
        return tokens.verify(code, ctx.shell.secrets_in_force, ctx.shell.now(), ctx.inbound.sender)
    if code.kind == tokens.BENCH:
        return bench.kind_named(code.ref) is not None and tokens.verify(
            code, ctx.shell.secrets_in_force, ctx.shell.now(), ctx.inbound.sender
        )
    if code.kind == tokens.OFFER:
        return bench.offer_of(ctx.shell, ctx.session, text, ctx.inbound.sender) is not None
    if code.kind == tokens.SERIES:
        return (
            season_tiers.series_of(ctx.session, code.ref) == code.ref
            and requests.series_standing(ctx.shell, ctx.session, text, ctx.inbound.sender) is not None
        )
    return requests.standing(ctx.shell, ctx.session, text, ctx.inbound.sender) is not None


def _not_valid(ctx: CommandContext, verb: str) -> Reply:
    raise ctx.refuse(
        say("commands_code_not_valid_title", verb=verb),
        say("commands_code_not_valid", days=tokens.VALID_DAYS),
        kind=verb.lower(),
        label=command_label(verb, came=Came.REFUSED),
    )


def confirm(ctx: CommandContext, command: Confirm) -> Reply:
    """The answer to a confirmation mail: the code it carried, sent back from the address it
    was mailed to, starts what it stands for."""
    code = tokens.parse(command.code)
    if code is None or not code_stands(ctx, command.code):
        return _not_valid(ctx, "CONFIRM")
    if code.kind in (tokens.JOIN, tokens.ADDRESS, tokens.PRACTICE):
        request = requests.standing(ctx.shell, ctx.session, command.code, ctx.inbound.sender)
        assert request is not None  # code_stands
        if code.kind == tokens.PRACTICE:
            label, answer = practice.confirm(ctx.shell, ctx.session, request, sender_name=_name_in_from(ctx))
            return Reply((answer,) if answer is not None else (), label=label)  # else: the first sheet
        if code.kind == tokens.JOIN:
            label, answer = signups.confirm_join(ctx.shell, ctx.session, request)
            return Reply((answer,), label=label)
        text = requests.confirm_address(ctx.shell, ctx.session, request)
        return Reply(
            (
                Notice(
                    ToAddress(request.address),
                    say("commands_new_address_title"),
                    text,
                    kind="address",
                    error=False,
                    essential=True,
                ),
            ),
            label=command_label("CONFIRM ADDRESS"),
        )
    if code.kind == tokens.STOP:
        return _not_valid(ctx, "CONFIRM")  # a STOP code is sent back with STOP, not CONFIRM
    if code.kind == tokens.OFFER:
        return _take_offer(ctx, command.code)
    if code.kind == tokens.BENCH:
        kind = bench.kind_named(code.ref)
        assert kind is not None  # code_stands
        return _sit(ctx, kind, label=command_label("CONFIRM SUBSTITUTE"))
    if code.kind == tokens.SERIES:
        return _enter_series(ctx, code.ref, command.code)
    session, sender = ctx.session, ctx.inbound.sender
    game = store.find_game_row(session, code.ref)
    if game is None or game.status == GameStatus.FINISHED:
        raise ctx.refuse(
            say("commands_confirm_over_title"),
            say("commands_confirm_over"),
            kind="confirm",
            label=command_label("CONFIRM", came=Came.REFUSED),
        )
    if not observers.observe(session, game, sender, ctx.shell.now()):
        return Reply(
            (
                Notice(
                    ctx.to,
                    say("commands_observe_title", what="already", game=game.name),
                    say("commands_observe", what="already", game=game.name, unobserve=False),
                    kind="observe",
                    error=False,
                ),
            ),
            label=command_label("CONFIRM"),
        )
    return Reply(
        (
            Notice(
                ctx.to,
                say("commands_observe_title", what="yes", game=game.name),
                _observing_text(game),
                kind="observe",
                error=False,
                essential=True,
            ),
        ),
        label=command_label("CONFIRM OBSERVE", game.name),
    )


def _name_in_from(ctx: CommandContext) -> str:
    """The name the mail's From gives its sender: its display name, else its address's local
    part as a name is written (`name_from_address`)."""
    return ctx.inbound.sender_name or name_from_address(ctx.inbound.sender_local)


def practice_(ctx: CommandContext, command: Practice) -> Reply:
    """PRACTICE <game kind> in mail that proved its sender's registered address (a player's or
    a GM's): the practice game at once, at that address (a stranger's PRACTICE is the intake's:
    a code first, `practice.ask`)."""
    if ctx.stranger:  # the intake asks a stranger for the code first (bot.intake.strangers)
        raise ctx.refuse(
            say("commands_practice_confirm_title"),
            say("commands_practice_confirm"),
            kind="practice",
            label=command_label("PRACTICE", came=Came.REFUSED),
        )
    name = practice.start_now(
        ctx.shell,
        ctx.session,
        ctx.address.strip().lower(),
        command.kind,
        command.level,
        sender_name=_name_in_from(ctx),
    )
    return Reply((), label=command_label("PRACTICE", name))  # the answer: its first sheet, the welcome at its top


def _take_offer(ctx: CommandContext, code: str) -> Reply:
    """The answer to a seat's offer to the bench: the seat, or why not (someone was quicker)."""
    made = bench.offer_of(ctx.shell, ctx.session, code, ctx.inbound.sender)
    assert made is not None  # code_stands
    address = ctx.inbound.sender
    try:
        text, seat = bench.take(ctx.shell, ctx.session, made, address)
    except Refused as refused:
        raise ctx.refuse(
            say("bench_take_refused_title"),
            str(refused),
            kind="seat_offer",
            label=command_label("OFFER", came=Came.REFUSED),
        ) from None
    notice = Notice(ToAddress(address), say("bench_take_title", seat=seat.name), text, kind="seat_taken", error=False)
    return Reply((notice,), label=command_label("OFFER", seat.game.name, seat.name, came=Came.TAKEN))


def _enter_series(ctx: CommandContext, series: str, code: str) -> Reply:
    """The code of a JOIN <series> came back from its address: that person is in the series'
    next season, under the name they gave (refused if a race of it has opened for sign-ups
    since: JOIN that race)."""
    request = requests.series_standing(ctx.shell, ctx.session, code, ctx.inbound.sender)
    assert request is not None  # code_stands
    requests.close(ctx.shell, request, RequestStatus.DONE)
    person = seats.player_for(ctx.session, ctx.address.strip().lower(), request.name, ctx.shell.now(), "UTC")
    entered = season_tiers.enter_series(ctx.session, series, person, ctx.shell.now())
    if entered is None:
        raise ctx.refuse(
            say("join_season_closed_title", season=series),
            say("series_open_now", series=series),
            kind="join",
            label=command_label("CONFIRM", came=Came.REFUSED),
        )
    return Reply(
        (
            Notice(
                ctx.to,
                say("series_entered_title", series=entered),
                say("series_entered", series=entered),
                kind="join",
                error=False,
            ),
        ),
        label=command_label("CONFIRM JOIN", entered, came=Came.NEXT_SEASON),
    )


def _sit(ctx: CommandContext, kind: str, *, label: str) -> Reply:
    """The sender on the bench of `kind`, at their address (its code came back, or their mail
    proved it). A person new to the bot is named as JOIN names a newcomer: the display name of
    their From when it reads as a name, else the From's local part as a name is written."""
    address = ctx.address.strip().lower()
    name = signups.newcomer_name("", ctx.inbound.sender_name) or name_from_address(ctx.inbound.sender_local)
    person = seats.player_for(ctx.session, address, name, ctx.shell.now(), "UTC")
    added = bench.sit(ctx.session, person, kind, ctx.shell.now())
    title = find_game(kind).title
    text = say("bench_on", title=title, kind=kind, already=not added)
    return Reply(
        (Notice(ctx.to, say("bench_on_title", title=title), text, kind="substitute", error=False),), label=label
    )


def substitute(ctx: CommandContext, command: Substitute) -> Reply:
    """SUBSTITUTE ON|OFF <game kind>: on (or off) the kind's substitutes bench. A stranger's ON
    mails the From a code first (the bench is theirs when it comes back); OFF from a stranger
    asks nothing: it only ever takes an address off."""
    kind = bench.kind_named(command.kind)
    if kind is None:
        raise ctx.refuse(
            say("bench_unknown_kind_title"),
            say("bench_unknown_kind", kinds=practice.kinds()),
            kind="substitute",
            label=command_label("SUBSTITUTE", came=Came.REFUSED),
        )
    title = find_game(kind).title
    if not command.on:
        person = ctx.player() if not ctx.stranger else None
        if person is None:
            person = ctx.session.scalar(select(Player).where(Player.address == ctx.inbound.sender))
        stood = person is not None and bench.stand_up(ctx.session, person, kind)
        text = say("bench_off", title=title, kind=kind, was=stood)
        return Reply(
            (Notice(ctx.to, say("bench_off_title", title=title), text, kind="substitute", error=False),),
            label=command_label("SUBSTITUTE", on=False),
        )
    if not ctx.stranger:
        return _sit(ctx, kind, label=command_label("SUBSTITUTE", kind, on=True))
    now = ctx.shell.now()
    code = tokens.make(ctx.shell.settings.secrets.site_secret, tokens.BENCH, kind, now, ctx.inbound.sender)
    rendered = notices.bench_confirm(
        ctx.shell, title, code=code, subject_tag=tokens.subject_tag(code), valid_days=tokens.VALID_DAYS
    )
    return Reply(
        (Letter(ToAddress(ctx.inbound.sender), rendered, "bench_confirm"),),
        label=command_label("SUBSTITUTE", on=True, came=Came.ASKED),
    )


def record(ctx: CommandContext, command: Record) -> Reply:
    """RECORD: the sender's reliability record, to their own address alone (a stranger's: the
    From's, whose record it is)."""
    address = ctx.address.strip().lower()
    person = ctx.session.scalar(select(Player).where(Player.address == address))
    found = reliability.record(ctx.session, person) if person is not None else Reliability()
    benches = bench.benches_of(ctx.session, person) if person is not None else []
    text = say(
        "record",
        turns=found.turns,
        on_time=found.on_time,
        ratio=found.shown_ratio(),
        nmrs=found.nmrs,
        abandoned=found.abandoned,
        substitute=found.substitute,
        games=found.games,
        benches=benches,
    )
    return Reply(
        (Notice(ctx.to, say("record_title"), text, kind="record", error=False),), label=command_label("RECORD")
    )


def stop(ctx: CommandContext, command: Stop) -> Reply:
    """STOP <code>, from the note an ADDRESS request sent the old address: the change is not made."""
    code = tokens.parse(command.code)
    request = requests.standing(ctx.shell, ctx.session, command.code, ctx.inbound.sender)
    if code is None or code.kind != tokens.STOP or request is None:
        return _not_valid(ctx, "STOP")
    text = requests.stop(ctx.shell, ctx.session, request)
    # To the old address, whoever sent the code back: it is that address's change to stop.
    return Reply(
        (
            Notice(
                ToAddress(request.old_address),
                say("commands_address_stopped_title"),
                text,
                kind="address",
                error=False,
                essential=True,
            ),
        ),
        label=command_label("STOP ADDRESS"),
    )


__all__ = ["MAX_FINISHED", "MAX_LISTED", "code_stands"]
