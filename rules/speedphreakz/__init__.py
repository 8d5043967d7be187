"""SpeedPhreakz: the push-your-luck grid race (design: shared/design/speedphreakz.md).

`GAME` implements `rules.api.Game` for `Race` states and `Order` values. The modules:
`model` (values), `parse` (the order grammar and HELP), `resolve` (a round), `view` (what a
viewer sees), `options` (where a car can get in the round it orders, at what control cost),
`storage` (versioned JSON), `game` (the `Game` object), `data` (loading the
chart, the terrain key and the maps, which are data in `rules/speedphreakz/data/`: formats
and how to add a map in its README.md).

Shell turn t resolves round t and collects the program for round t+1 (turn 1: the set-up
plus rounds 1 and 2); a car that crashed in round t-1 sends round t again (S9) with an
optional RESTART. Queued programs live in the state (`Car.programs`).

Points the design leaves open, and what this package does (each cited where it is coded):

* Oil (§4.6): the oil roll is not a loss of control: recklessness does not push it, it
  gives no "+1 for the first action", and it does not spoil a clean round.
* A terrain surcharge that takes a car over C mid-action (§4.6, S4) rolls the rest of that
  action; an action is rolled at most once.
* A crashed car stops at once and runs no more actions, but its wreck stays on its square
  until it is re-placed: a car that ends the round there crashes (the seed: "end the round
  on the same square as someone"; §4.5). The wreck spreads adjacency only in its crash step
  (S8: no chains). A finisher is gone at once and shares no square.
* Adjacency is the 8-neighbourhood plus the same square.
* The carried deficit survives a crash and a round with an empty program (S14: it waits for
  the next first action); so does an unpaid crash surcharge (they add up).
* A round with an empty program has no loss of control, so recklessness resets (§4.2).
* Re-placing (S10): a legal square is on the map, not solid and not taken by a racing car;
  cars re-placed in the same turn are placed in seating order, and a RESTART square taken
  meanwhile falls back to the S10 default.
* The race ends after the round in which the first car crosses the line; everyone who
  crossed that round is ranked (S12, then crashes, then S16's "earlier submission"). The
  shell gives `resolve` the order in which the seats' final sets of the turn arrived
  (`submitted`, stored with the turn); the state keeps, for each round not yet run, the
  order its programs arrived in (`Race.arrivals`: earlier turns first, a program sent again
  after a crash from when it was sent again), and a round's finishers are ranked by who
  sent that round's program first. A player who sent nothing (the NMR default, a GM plot)
  comes after those who did, in seating order; with no order given, seating order.
* A colour asked for by two players at the set-up goes to the first in seating order.
* The start (§5, S13): a chosen start square stands, shared or not. A silent player's
  default is `START FREE` ("a start square no one chose"): `default_orders` cannot see the
  others' orders, so the resolver places every FREE start once all STARTs are known, in
  seating order, each on the first start square (in the map's order) no car holds yet; if
  none is free, on the first of those with the fewest cars; facing the race direction.
  A player may send START FREE too.
* A GM plot (§5 "a standing default per player") stands for the round in hand
  (`parse.standing_plot`): its program is carried over to the rounds open now (the plot's
  program for that round, else its program without a round number, else the one for the
  latest earlier round), COLOUR and START only at the set-up, RESTART only while it is
  legal; the NMR default fills in the rest.
* No round limit by default (§5); option `max_rounds` ends a race nobody finishes after
  that round, classified (the finish order) by laps and checkpoints done, then distance to
  the next checkpoint, then fewer crashes, then the earlier submission (as above).
* A race nobody finishes (§5: no round limit by default) is noticed: a round *gets nearer the
  end* when some car passes a checkpoint or the line, or ends the round nearer its next
  checkpoint (king moves round the solids, `data.distances`) than it has ended any round
  since it passed the last one; holding position, driving back over ground already
  covered, and crashing in place do not. After `STALL_ROUNDS` (10) rounds in a row without
  it (`Race.stalled`), and every 10 rounds after while it lasts, `Game.stall` tells the
  shell, which mails the GM the command that ends the race: the GM figure `max_rounds`
  (``SET <game> <any seat> max_rounds <n>``, from the round open now to 500), the race's
  last round, after which it is classified as the option does.
* The robot driver (`robot`) reads what its seat may see: the other cars' queued
  programs, deficit, crash surcharge and oil are blanked before it plans.
"""

from __future__ import annotations

from rules.speedphreakz.game import GAME, SpeedPhreakz
from rules.speedphreakz.model import Car, CarStatus, Circuit, Heading, Order, Race, Square, Terrain
from rules.speedphreakz.options import Band, ProgramOptions, SquareOption, program_options
from rules.speedphreakz.view import CarOnMap, CourseMark, SpeedPhreakzView

__all__ = [
    "GAME",
    "Band",
    "Car",
    "CarOnMap",
    "CarStatus",
    "Circuit",
    "CourseMark",
    "Heading",
    "Order",
    "ProgramOptions",
    "Race",
    "SpeedPhreakz",
    "SpeedPhreakzView",
    "Square",
    "SquareOption",
    "Terrain",
    "program_options",
]
