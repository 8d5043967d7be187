"""A choice only one seat may have (a SpeedPhreakz colour, §4.2 "players choose a colour") and
another seat already asked for is refused at intake, naming who has it and what is free; main
took "COLOUR green" from a second seat and the set-up's resolution then gave green by seat
order, so the seat that asked first was told "asked for green, already taken" after the fact.
A Speed Circuit PATH the car cannot drive from where it stands is refused at intake with the
reason (main took "PATH C C" from lane A and drove something else at the deadline)."""

from __future__ import annotations

from sqlalchemy import select

from bot.games.turns import PlayerSpec, create_game
from bot.models import OrderSubmission
from bot.testing import TestApp
from tests.bot import gm_helpers
from tests.bot.gm_helpers import ADDRESS, GM, body_of, last, one_lap_race, player_says

gapp = gm_helpers.gapp


def _flat(text: str) -> str:
    return " ".join(text.split())


def _filed(app: TestApp) -> list[str]:
    with app.db.read() as session:
        return list(session.scalars(select(OrderSubmission.text).order_by(OrderSubmission.id)))


def _speedphreakz(app: TestApp) -> None:
    with app.db.transaction() as session:
        create_game(
            app.shell,
            session,
            kind="speedphreakz",
            name="sp1",
            players=[PlayerSpec(s, ADDRESS[s], s.title(), "UTC") for s in ("kelly", "seb")],
            gm_address=GM,
            deadline="48h",
            seed=5,
        )
    app.service.send()


def test_a_colour_another_seat_asked_for_first_is_refused_naming_who_and_what_is_free(gapp: TestApp) -> None:
    """ "I'd like the green car please. Start on 3,5 facing north. Round 1 F3" from kelly, after
    seb's "COLOUR green": the start and the round are taken, the colour refused with who has
    it and the colours free."""
    _speedphreakz(gapp)
    player_says(gapp, "seb", "COLOUR GREEN", game="sp1")
    player_says(
        gapp, "kelly", "I'd like the green car please. Start on 3,5 facing north. Round 1 F3\nRound 2 F2", game="sp1"
    )
    assert _filed(gapp)[-1] == "START 3,5 FACING N\nROUND 1: F3\nROUND 2: F2"
    text = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert "green is taken by seb; free: red blue yellow orange purple white black pink silver" in text, text
    before = len(_filed(gapp))
    player_says(gapp, "kelly", "COLOUR green", game="sp1")
    assert len(_filed(gapp)) == before
    refusal = last(gapp, ADDRESS["kelly"])
    assert "not accepted" in str(refusal["Subject"])
    assert "green is taken by seb" in _flat(body_of(refusal))
    player_says(gapp, "kelly", "COLOUR red", game="sp1")
    assert _filed(gapp)[-1] == "COLOUR red"


def test_a_path_the_car_cannot_drive_is_refused_at_intake(gapp: TestApp) -> None:
    one_lap_race(gapp, ("kelly", "seb"))
    player_says(gapp, "kelly", "SPEED 40\nPATH C C", game="sc1")
    assert _filed(gapp)[-1] == "SPEED 40"
    text = _flat(body_of(last(gapp, ADDRESS["kelly"])))
    assert "PATH C C cannot be driven: from A74 the 1st space entered is in lane A or B, not C" in text, text


def test_orders_taken_beside_a_refused_line_are_answered_as_done_in_part(gapp: TestApp) -> None:
    """mail-interface.md, one answer in sections: "what was done, what was not understood (with
    the reason)". kelly's set-up with a colour seb holds and a NOWAIT: her START and ROUND 1 are
    on file, so her confirmation is not filed under "Not done" (it was, beside the NOWAIT's
    "Nothing to lift" under "Done") but under "Done in part", with the line refused in it."""
    _speedphreakz(gapp)
    player_says(gapp, "seb", "COLOUR GREEN", game="sp1")
    player_says(gapp, "kelly", "COLOUR green\nSTART 3,5 FACING N\nROUND 1: F3\nNOWAIT", game="sp1")
    assert _filed(gapp)[-1] == "START 3,5 FACING N\nROUND 1: F3"
    answer = last(gapp, ADDRESS["kelly"])
    body = body_of(answer)
    assert str(answer["Subject"]).endswith("Answers to your mail"), answer["Subject"]
    done, _, rest = body.partition("== Done in part ==")
    assert "--- Nothing to lift ---" in done
    assert "--- Orders received for Set-up and round 1 (1 line not allowed now) ---" in rest, body
    assert "green is taken by seb" in _flat(rest)
    assert "== Not done ==" not in body, body
