"""ratings: how well the rating (`bot.ratings`, Plackett-Luce by openskill) predicts finishing
orders, against pairwise Elo trained on the same races.

The field: `DRIVERS` simulated robot drivers of known strength (seeded): driver i's strength is
drawn once from a normal of spread `SPREAD`; in a race each runner's performance is its strength
plus normal noise of spread 1 (a Thurstone race, not the Plackett-Luce model the rating assumes),
and the finishing order is by performance, best first. Each race seats 2 to 8 drivers drawn
at random. The first `train` races train both ratings in order; the next `test` races are held
out: predicted from the trained ratings alone, never learnt from.

Figures over the held-out races (lower is better):

* ``pairwise``: the mean over every pair of runners of a race of -ln P(the pair's observed
  order), the rating's P from openskill's Plackett-Luce (`order_probability` of the two), Elo's
  1 / (1 + 10^(-(R_i - R_j) / 400));
* ``order`` (the rating alone): the mean over races of -ln P(the whole finishing order), by
  the Plackett-Luce probability, per runner; a coin's would be ln(n!) / n;
* ``pairwise_by_beta``: the rating's pairwise figure with each beta of `BETAS` (trained and
  predicting with it), to show where `bot.ratings.BETA` stands among them.

Elo is multiplayer Elo as leagues run it: every race is each pair of its runners as a game,
K / (n - 1) a pair, ratings from 1500; its K is the best of `ELO_KS` on the last quarter of the
training races (trained on the first three quarters), then it is trained on them all. The
rating's beta is fixed (`bot.ratings.BETA`), not tuned per field. The figures are the means
over `SEEDS` fields. Everything is seeded: the same arguments, the same figures. No servers,
no database.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from bot.ratings import BETA, RatedRace, Rating, order_probability, rate

DRIVERS = 40
SPREAD = 1.0  # the drivers' strengths' spread, against the race's noise of 1
TRAIN = 600
TEST = 300
SEED = 42
SEEDS = (42, 7, 1, 2, 3, 4, 5, 6)
ELO_KS = (4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0)
OPENSKILL_BETA = 25.0 / 6.0  # openskill's default, for comparison
# The betas the held-out log-loss is reported for (`pairwise_by_beta`): openskill's default, its
# double, ours (`bot.ratings.BETA`), and two wider.
BETAS = (OPENSKILL_BETA, 25.0 / 3.0, 12.5, 16.0, 25.0)


def simulate(races: int, seed: int = SEED) -> tuple[list[float], list[list[int]]]:
    """`races` finishing orders (driver numbers, best first) and the drivers' strengths."""
    rng = random.Random(seed)
    strengths = [rng.gauss(0.0, SPREAD) for _ in range(DRIVERS)]
    orders: list[list[int]] = []
    for _ in range(races):
        field = rng.sample(range(DRIVERS), rng.randint(2, 8))
        performance = {d: strengths[d] + rng.gauss(0.0, 1.0) for d in field}
        orders.append(sorted(field, key=lambda d: -performance[d]))
    return strengths, orders


def elo(orders: Sequence[Sequence[int]], k: float) -> dict[int, float]:
    ratings: dict[int, float] = {}
    for order in orders:
        before = {d: ratings.get(d, 1500.0) for d in order}
        share = k / (len(order) - 1)
        for a, b in combinations(order, 2):  # a finished ahead of b
            expected = 1.0 / (1.0 + 10 ** ((before[b] - before[a]) / 400.0))
            ratings[a] = ratings.get(a, 1500.0) + share * (1.0 - expected)
            ratings[b] = ratings.get(b, 1500.0) - share * (1.0 - expected)
    return ratings


def elo_pairwise(ratings: dict[int, float], orders: Sequence[Sequence[int]]) -> float:
    losses = [
        math.log1p(10 ** ((ratings.get(b, 1500.0) - ratings.get(a, 1500.0)) / 400.0))
        for order in orders
        for a, b in combinations(order, 2)
    ]
    return sum(losses) / len(losses)


def rating_pairwise(ratings: dict[str, Rating], orders: Sequence[Sequence[int]], *, beta: float = BETA) -> float:
    losses = [
        -math.log(order_probability(ratings, [str(a), str(b)], beta=beta))
        for order in orders
        for a, b in combinations(order, 2)
    ]
    return sum(losses) / len(losses)


def rating_order(ratings: dict[str, Rating], orders: Sequence[Sequence[int]]) -> tuple[float, float]:
    """The rating's -ln P(order) per runner, and a coin's (every order alike), over races."""
    ours = [-math.log(order_probability(ratings, [str(d) for d in order])) / len(order) for order in orders]
    coin = [math.lgamma(len(order) + 1) / len(order) for order in orders]
    return sum(ours) / len(ours), sum(coin) / len(coin)


def one(train: int, test: int, seed: int) -> dict[str, Any]:
    """One seeded field: both trained on `train` races, judged on the `test` after them."""
    strengths, orders = simulate(train + test, seed)
    trained, held = orders[:train], orders[train:]
    # Elo's K: the best on the last quarter of the training races, trained on the rest.
    fit, check = trained[: train * 3 // 4], trained[train * 3 // 4 :]
    best_k = min(ELO_KS, key=lambda k: elo_pairwise(elo(fit, k), check))
    races = [RatedRace(f"r{i}", tuple((str(d),) for d in order)) for i, order in enumerate(trained)]
    ratings = rate(races)
    per_runner, coin = rating_order(ratings, held)
    default = rate(races, beta=OPENSKILL_BETA)
    truth = [
        # the true P(a ahead of b) in these races, Phi((s_a - s_b) / sqrt 2): the floor of any rating
        -math.log(0.5 * (1.0 + math.erf((strengths[a] - strengths[b]) / 2.0)))
        for order in held
        for a, b in combinations(order, 2)
    ]
    return {
        "seed": seed,
        "rating": rating_pairwise(ratings, held),
        "rating_openskill_default_beta": rating_pairwise(default, held, beta=OPENSKILL_BETA),
        "elo": elo_pairwise(elo(trained, best_k), held),
        "elo_k": best_k,
        "elo_by_k_on_held_out": {str(k): elo_pairwise(elo(trained, k), held) for k in ELO_KS},
        "truth": sum(truth) / len(truth),
        "order_rating_per_runner": per_runner,
        "order_coin_per_runner": coin,
        "rating_by_beta": {f"{b:.4g}": rating_pairwise(rate(races, beta=b), held, beta=b) for b in BETAS},
    }


def run(train: int = TRAIN, test: int = TEST, seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    t0 = time.process_time()
    fields = [one(train, test, seed) for seed in seeds]
    cpu = time.process_time() - t0

    def mean(key: str) -> float:
        return sum(float(f[key]) for f in fields) / len(fields)

    by_beta = {b: sum(float(f["rating_by_beta"][b]) for f in fields) / len(fields) for b in fields[0]["rating_by_beta"]}
    wins = sum(1 for f in fields if f["rating"] < f["elo"])
    met = mean("rating") < mean("elo")
    line = (
        f"ratings  held-out pairwise log-loss, mean of {len(fields)} seeded fields: {mean('rating'):.4f} "
        f"the rating (Plackett-Luce, beta {BETA:g}) vs {mean('elo'):.4f} Elo (K chosen on the training races); "
        f"the rating lower in {wins} of {len(fields)}; openskill's default beta {mean('rating_openskill_default_beta'):.4f}; "
        f"the truth {mean('truth'):.4f}; order log-loss a runner {mean('order_rating_per_runner'):.4f} "
        f"vs {mean('order_coin_per_runner'):.4f} a coin's; by beta "
        + ", ".join(f"{b} {v:.4f}" for b, v in by_beta.items())
        + f"; {DRIVERS} drivers, {train} races trained, {test} held out; "
        f"{cpu:.1f} s CPU; target rating < Elo: {'met' if met else 'MISSED'}"
    )
    return {
        "benchmark": "ratings",
        "drivers": DRIVERS,
        "train": train,
        "test": test,
        "beta": BETA,
        "fields": fields,
        "pairwise_rating": mean("rating"),
        "pairwise_elo": mean("elo"),
        "pairwise_truth": mean("truth"),
        "pairwise_by_beta": by_beta,
        "rating_lower_in": wins,
        "cpu_seconds": cpu,
        "target_met": met,
        "line": line,
    }
