"""deadline: G games x 8 players, every order on file; one tick resolves them all, and every
results mail is handed to the SMTP server.

Set-up (not timed): G Racecraft games started, their turn sheets marked sent, a valid
``USE n`` on file for every seat. Timed, in the bot's worker: `Service.tick()` (resolve
every game, queue 8 results mails and the GM's per game) then `Service.send()` over the real
`SmtpMailer` to the SMTP sink (aiosmtpd, no onward delivery).
Reference: the very bytes the bot sent (same number, same sizes), sent again over one
smtplib connection. Each side runs `RUNS` times, alternated (the bot's database put back as set
up before each of its runs), and the median of each side counts. Target: bot total time <= 1.2
x reference (`TARGET`), and <= 1.5 x with CPU burners beside both (`TARGET_BURNING`, `python -m
bench --burn 1`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.world import World, load_settings, median_run, run_beside, setup_games

TARGET = 1.2  # the bot's whole deadline against the reference, on a machine otherwise idle
TARGET_BURNING = 1.5  # the same with CPU burners running beside both (`python -m bench --burn 1`)
RUNS = 3  # runs of each side, alternated; the median of each counts


def put_orders_on_file(spec: dict[str, Any]) -> int:
    """A valid first-turn order for every seat of every active game (as if mailed in)."""
    from sqlalchemy import select

    from bot.db import Database
    from bot.models import OrderSubmission, Seat, Turn

    settings = load_settings(spec)
    db = Database(settings.database_url)
    count = 0
    try:
        with db.transaction() as session:
            turns = {t.game_id: t for t in session.scalars(select(Turn).where(Turn.resolved_at.is_(None)))}
            for seat in session.scalars(select(Seat).order_by(Seat.id)):
                turn = turns[seat.game_id]
                session.add(
                    OrderSubmission(
                        turn_id=turn.id,
                        seat_id=seat.id,
                        inbound_id=None,
                        source="mail",
                        text=f"USE {seat.id % 11}",
                        received_at=turn.opened_at,
                    )
                )
                count += 1
    finally:
        db.dispose()
    return count


def export_sent(spec: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """The results mails the bot sent, one file each in directory `path`, for the reference to send again."""
    from sqlalchemy import select

    from bot.db import Database
    from bot.models import Outbox, OutboxBody, OutboxStatus

    settings = load_settings(spec)
    db = Database(settings.database_url)
    mails: list[dict[str, Any]] = []
    try:
        path.mkdir(exist_ok=True)
        with db.read() as session:
            rows = session.execute(
                select(Outbox.envelope_from, Outbox.recipient, OutboxBody.data)
                .join(OutboxBody, OutboxBody.id == Outbox.id)
                .where(Outbox.status == OutboxStatus.SENT, Outbox.kind.in_(("results", "results_gm")))
                .order_by(Outbox.id)
            )
            for i, row in enumerate(rows):
                file = path / f"{i}.eml"
                file.write_bytes(row.data)
                mails.append({"from": row.envelope_from, "to": row.recipient, "file": str(file)})
    finally:
        db.dispose()
    return mails


def run(world: World, games: int = 500, *, profile: Path | None = None, burning: bool = False) -> dict[str, Any]:
    """`burning`: CPU burners run beside the bot and the reference (``--burn``): the target is
    `TARGET_BURNING` then."""
    target = TARGET_BURNING if burning else TARGET
    box = world.mailbox("flagman-deadline")
    spec = world.settings_spec(address=box, url=world.database_url("deadline"), smtp=True)
    t0 = time.perf_counter()
    setup_games(spec, games, prefix="dl")
    orders = put_orders_on_file(spec)
    setup_seconds = time.perf_counter() - t0
    # When the sink accepted the last mail (the machine's monotonic clock, which the worker
    # processes read too): each side's seconds end there.
    accepted: list[float] = []

    def on_arrival(_mail: Any) -> None:
        accepted.append(time.clock_gettime(time.CLOCK_MONOTONIC))

    world.on_arrival.append(on_arrival)
    try:
        return _measured(world, spec, games, orders, setup_seconds, target, accepted, profile)
    finally:
        world.on_arrival.remove(on_arrival)


def _last_accepted(run: dict[str, Any], accepted: list[float]) -> None:
    """`run`'s seconds from the start of its clock to the sink's acceptance of its last mail
    (`seconds`), the seconds until its worker was done kept as `done_seconds`."""
    run["done_seconds"] = run["seconds"]
    if accepted and "started_at" in run:
        start = run["started_at"]
        run["seconds"] = max(accepted) - start
        # How the sending kept up: the first mail's acceptance, and how many the sink had
        # accepted when the tick ended (the bot's; the rest is the send after it).
        run["first_accepted_seconds"] = min(accepted) - start
        if run.get("tick_seconds") is not None:
            run["accepted_during_tick"] = sum(1 for t in accepted if t - start <= run["tick_seconds"])
    accepted.clear()


def _measured(
    world: World,
    spec: dict[str, Any],
    games: int,
    orders: int,
    setup_seconds: float,
    target: float,
    accepted: list[float],
    profile: Path | None,
) -> dict[str, Any]:
    url = spec["data"]["database"]["url"]
    kept = world.kept(url)  # the games as set up: each of the bot's runs starts from them
    bots: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    arrived_bots: list[int] = []
    arrived_refs: list[int] = []
    mails: list[dict[str, Any]] = []
    # RUNS runs of each side, alternated (bot, reference, bot, ...), the median of each counting:
    # a busy moment of a shared machine moves one run of one side, not the ratio.
    for attempt in range(RUNS):
        if attempt:
            world.put_back(url, kept)
        world.sink.reset()
        accepted.clear()
        greetings = world.sink.greetings
        bot = run_beside(
            world,
            "deadline-bot",
            {"settings": spec, "log_file": str(world.root / "deadline-bot.log")},
            profile=profile if not attempt else None,
        )
        bot["connections"] = world.sink.greetings - greetings  # EHLOs the sink answered: one a connection
        _last_accepted(bot, accepted)
        bots.append(bot)
        arrived_bots.append(len(world.sink.messages))
        if not attempt:  # the reference sends the very bytes of the bot's first run
            mails = export_sent(spec, world.root / "deadline-mails")
        world.sink.reset()
        accepted.clear()
        greetings = world.sink.greetings
        refs.append(
            run_beside(world, "deadline-ref", {"host": world.sink.host, "port": world.sink.port, "mails": mails})
        )
        refs[-1]["connections"] = world.sink.greetings - greetings
        _last_accepted(refs[-1], accepted)
        arrived_refs.append(len(world.sink.messages))
    world.sink.reset()
    bot = median_run(bots)
    ref = median_run(refs)
    ratio = bot["seconds"] / ref["seconds"]
    expected = games * 9
    problems = []
    if any(run["resolved"] != games for run in bots):
        problems.append(f"resolved {[run['resolved'] for run in bots]} of {games} games")
    sent = [run["sent"] for run in bots]
    if {*sent, *arrived_bots, *arrived_refs, len(mails)} != {expected}:
        problems.append(
            f"mails: bot sent {sent}, sink got {arrived_bots}; reference sent "
            f"{len(mails)}, sink got {arrived_refs}; expected {expected}"
        )
    met = ratio <= target and not problems
    avg = ref.get("bytes", 0) / max(1, len(mails))
    return {
        "benchmark": "deadline",
        "games": games,
        "orders_on_file": orders,
        "setup_seconds": setup_seconds,
        "bot": bot,
        "reference": ref,
        "mails": expected,
        "average_mail_bytes": avg,
        "ratio": ratio,
        "target": f"<= {target} x reference",
        "met": met,
        "problems": problems,
        "line": (
            f"deadline {games:>4} games: bot {bot['seconds']:7.2f} s (tick {bot['tick_seconds']:.2f} s, send "
            f"{bot['send_seconds']:.2f} s; CPU {bot['cpu_seconds']:.1f} s + {bot['worker_cpu_seconds']:.1f} s in "
            f"{bot['turn_workers']} turn worker), reference {ref['seconds']:7.2f} s for {expected} mails of "
            f"{avg:.0f} bytes, ratio {ratio:.2f} (target <= {target}) {'OK' if met else 'MISSED'}"
            + (f" [{'; '.join(problems)}]" if problems else "")
            + "\n"
            + competition(bot, ref)
            + f"\n  {len(bots)} runs of each side, alternated (the median run of each above): bot "
            + ", ".join(f"{seconds:.2f}" for seconds in bot["runs_seconds"])
            + " s; reference "
            + ", ".join(f"{seconds:.2f}" for seconds in ref["runs_seconds"])
            + " s"
        ),
    }


def competition(bot: dict[str, Any], ref: dict[str, Any]) -> str:
    """Who used the cores during the bot's run and the reference's (`bench.usage`; run-queue
    waits are the seconds a thread was ready to run but had no core): the second line of the
    deadline's figures."""

    def beside(run: dict[str, Any], name: str) -> str:
        use = run.get("beside", {}).get(name, {})
        return f"{use.get('cpu', 0):.1f} s CPU (waited {use.get('waiting', 0):.1f} s)"

    main = bot.get("usage", {}).get("first_thread", {})
    worker = bot.get("worker_usage", {})
    client = ref.get("usage", {}).get("first_thread", {})
    return (
        f"  SMTP connections: the bot {bot.get('connections', 0)} in {bot.get('sends', 0)} sends, the reference "
        f"{ref.get('connections', 0)}; beside the bot: sink {beside(bot, 'sink')}, burners {beside(bot, 'burners')}"
        + (f", PostgreSQL {beside(bot, 'database')}" if "database" in bot.get("beside", {}) else "")
        + "; "
        f"beside the reference: sink {beside(ref, 'sink')}, burners {beside(ref, 'burners')}; "
        f"run-queue waits: the bot's tick thread {main.get('waiting', 0):.1f} s, its turn worker "
        f"{worker.get('waiting', 0):.1f} s (started ahead: {bot.get('worker_start_cpu_seconds', 0):.1f} s CPU, "
        f"not timed), the reference's client {client.get('waiting', 0):.1f} s; the sink accepted the bot's first "
        f"mail at {bot.get('first_accepted_seconds', 0):.2f} s and {bot.get('accepted_during_tick', 0)} by the "
        f"tick's end"
    )
