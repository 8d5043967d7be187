"""The mail whose orders complete a turn that resolves early, or whose NOWAIT releases it, is
answered "yours were the last orders: the turn is resolved, the results follow" -- never "you
may send new orders until ..." -- and the answer goes before the results (mail-interface.md,
early resolution: "the turn resolves as soon as every order is in")."""

from __future__ import annotations

from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.models import Outbox
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, body_of, last, mails, player_says, turns

gapp, rc = gm_helpers.gapp, gm_helpers.rc  # the shared fixtures


def _flat(text: str) -> str:
    return " ".join(text.split())


def _outbox_order(app: TestApp, to: str) -> list[tuple[str, str]]:
    """The mail queued for `to`, in the order queued (and sent): (kind, subject)."""
    with app.db.read() as session:
        return [
            (o.kind, o.subject)
            for o in session.scalars(select(Outbox).where(Outbox.recipient == to).order_by(Outbox.id))
        ]


def test_the_orders_that_complete_the_turn_are_told_it_is_resolved_and_go_before_the_results(rc: TestApp) -> None:
    for seat in ("kelly", "seb", "steve", "roger"):
        player_says(rc, seat, "USE 3")
        assert turns(rc)[0].resolved_at is None
    before = len(mails(rc, ADDRESS["anna"]))
    player_says(rc, "anna", "USE 4")
    assert turns(rc)[0].resolved_at is not None
    answer, results = mails(rc, ADDRESS["anna"])[before:]
    text = _flat(body_of(answer))
    assert "Orders received" in str(answer["Subject"])
    assert "Yours were the last orders: the turn is resolved, and the results follow." in text, text
    assert "You may send new orders" not in text and "If nothing else arrives" not in text
    assert "which may be before then" not in text
    assert "Results of Turn 1" in str(results["Subject"])
    kinds = [kind for kind, _ in _outbox_order(rc, ADDRESS["anna"])]
    assert kinds[-2:] == ["confirmation", "results"]


def test_orders_that_do_not_complete_the_turn_still_say_until_when_they_may_change(rc: TestApp) -> None:
    player_says(rc, "kelly", "USE 3")
    text = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert "You may send new orders until then" in text and "the last orders" not in text


def test_the_nowait_that_releases_a_complete_turn_is_told_it_is_resolved(rc: TestApp) -> None:
    player_says(rc, "steve", "WAIT")
    for seat in ("kelly", "seb", "steve", "roger", "anna"):
        player_says(rc, seat, "USE 3")
    assert turns(rc)[0].resolved_at is None  # held
    before = len(mails(rc, ADDRESS["steve"]))
    player_says(rc, "steve", "NOWAIT")
    assert turns(rc)[0].resolved_at is not None
    answer, results = mails(rc, ADDRESS["steve"])[before:]
    text = _flat(body_of(answer))
    assert "the turn is resolved, and the results follow" in text, text
    assert "It resolves as soon as every order is in" not in text
    assert "Results of Turn 1" in str(results["Subject"])


def test_the_gms_order_that_completes_the_turn_resolves_it_and_says_so(rc: TestApp) -> None:
    """The GM's ORDER for the last seat without orders: the turn is resolved with the GM's mail,
    and the seat is told its orders are used and the turn resolved, not that they count "unless
    you send others before the deadline"."""
    for seat in ("kelly", "seb", "steve", "roger"):
        player_says(rc, seat, "USE 3")
    gm_helpers.gm_says(rc, "ORDER rc1 anna USE 2")
    assert turns(rc)[0].resolved_at is not None
    told = _flat(body_of(last(rc, ADDRESS["anna"])))
    assert "so the turn is resolved (its results come in a mail of their own)" in told, told
    assert "unless you send others" not in told


def test_nowait_with_the_last_orders_in_one_mail_says_once_that_the_turn_is_resolved(rc: TestApp) -> None:
    """NOWAIT with the last orders in one mail was answered "It resolves as soon as every order
    is in" just before "Yours were the last orders: the turn is resolved". The answer makes one
    statement of what the turn does next, the true one: the confirmation's, made once the whole
    mail is applied. NOWAIT alone still says when the turn resolves."""
    player_says(rc, "kelly", "WAIT")
    for seat in ("seb", "steve", "roger", "anna"):
        player_says(rc, seat, "USE 3")
    before = len(mails(rc, ADDRESS["kelly"]))
    player_says(rc, "kelly", "USE 2\nNOWAIT")
    assert turns(rc)[0].resolved_at is not None
    answer = mails(rc, ADDRESS["kelly"])[before]
    text = _flat(body_of(answer))
    assert "You no longer hold Turn 1 of 5: start of rc1." in text, text
    assert "Yours were the last orders: the turn is resolved, and the results follow." in text, text
    assert "resolves as soon as every order is in" not in text, text
    assert "waits for its deadline" not in text, text
    player_says(rc, "kelly", "WAIT")
    player_says(rc, "kelly", "NOWAIT")
    assert "It resolves as soon as every order is in, or at its deadline." in _flat(body_of(last(rc, ADDRESS["kelly"])))


def test_the_gms_order_that_completes_the_turn_sends_the_others_their_results_alone(rc: TestApp) -> None:
    """Played by mail (playtest4): after the GM's ORDER for the last seat, the other players got
    the results and then "Turn 1 ... is resolved: With what the GM just did, every order ... is
    in: the turn is resolved, and the results follow. The deadline is unchanged: Turn 2 ... is
    due ...": a mail with nothing the results lack, "follow" after them, and "unchanged" of a
    turn just opened. The results are the others' news; the seat the GM ordered for is told the
    next turn is now due."""
    for seat in ("kelly", "seb", "steve", "roger"):
        player_says(rc, seat, "USE 3")
    before = len(mails(rc, ADDRESS["kelly"]))
    gm_helpers.gm_says(rc, "ORDER rc1 anna USE 2")
    assert turns(rc)[0].resolved_at is not None
    (results,) = mails(rc, ADDRESS["kelly"])[before:]
    assert "Results of Turn 1" in str(results["Subject"])
    told = _flat(body_of(last(rc, ADDRESS["anna"])))
    assert "The deadline is unchanged" not in told and "Turn 2 of 5: tactical is now due" in told, told


def test_orders_for_a_finished_game_are_pointed_to_the_players_game_running_now(rc: TestApp) -> None:
    """Played by mail (playtest4): in a season, runners answered race 2's final result with
    orders while race 3 was open; they were told only "[ERROR] cup-a-r2 has finished; no more
    orders are taken". The refusal names the player's game running now."""
    gm_helpers.to_the_finish(rc, "rc1")
    with rc.db.transaction() as session:
        create_game(
            rc.shell,
            session,
            kind="racecraft",
            name="rc2",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb", "anna", "roger", "steve")],
            gm_address=gm_helpers.GM,
            deadline="48h",
        )
    rc.service.send()
    player_says(rc, "kelly", "USE 1")
    text = _flat(body_of(last(rc, ADDRESS["kelly"])))
    assert "rc1 has finished; no more orders are taken." in text, text
    assert "Your game running now is rc2: send its orders in reply to its latest mail." in text, text
