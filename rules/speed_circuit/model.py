"""The race state and the game options."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace

from rules.api import OptionError
from rules.speed_circuit.car import Car, Status
from rules.speed_circuit.track import Track, bundled_track_text, bundled_tracks, load_track


class Phase(enum.Enum):
    DESIGN = "design"
    QUALIFYING = "qualifying"
    RACE = "race"
    FINISHED = "finished"


class PlotDefault(enum.Enum):
    GM_THEN_SAFE = "gm_then_safe"
    GM_THEN_MPS = "gm_then_mps"


@dataclass(frozen=True, slots=True)
class Options:
    track: str = "harbour_loop"
    laps: int = 3
    staggered_lane_change: bool = False
    """P32: diagonal moves across staggered rows (seed 003 optional rule)."""
    option_tyres_top_speed: bool = False
    """P12: option tyres may also replace the top speed test (as CFR does)."""
    plot_default: PlotDefault = PlotDefault.GM_THEN_SAFE
    """P29: what an NMR gets when no GM plot is on file."""


OPTION_HELP = """\
track=NAME            the track: {tracks} (default harbour_loop)
laps=N                race length 1..10 laps (default: the track's own, 3); wear and skill scale with it (P3)
lane_change=aligned|staggered   diagonal moves need aligned rows (default) or may cross staggered rows (P32)
option_tyres_top=no|yes         option tyres may also replace the top speed test (default no, P12)
plot_default=safe|mps           NMR without a GM plot: the bot's safe plot (default) or maintain speed (P29)"""


def parse_options(options: Mapping[str, str]) -> Options:
    known = {"track", "laps", "lane_change", "option_tyres_top", "plot_default"}
    for key in options:
        if key not in known:
            raise OptionError(f"unknown option {key!r}; known: {', '.join(sorted(known))}")
    track = options.get("track", "harbour_loop").strip().lower().replace("-", "_").replace(" ", "_")
    if track not in bundled_tracks():
        raise OptionError(f"unknown track {track!r}; tracks: {', '.join(bundled_tracks())}")
    default_laps = load_track(bundled_track_text(track)).laps
    laps_text = options.get("laps", str(default_laps)).strip()
    if not laps_text.isdigit() or not 1 <= int(laps_text) <= 10:
        raise OptionError(f"laps must be 1..10, not {laps_text!r}")
    lane = options.get("lane_change", "aligned").strip().lower()
    if lane not in ("aligned", "staggered"):
        raise OptionError(f"lane_change must be aligned or staggered, not {lane!r}")
    top = options.get("option_tyres_top", "no").strip().lower()
    if top not in ("yes", "no", "true", "false"):
        raise OptionError(f"option_tyres_top must be yes or no, not {top!r}")
    default = options.get("plot_default", "safe").strip().lower()
    if default not in ("safe", "mps", "gm_then_safe", "gm_then_mps"):
        raise OptionError(f"plot_default must be safe or mps, not {default!r}")
    return Options(
        track=track,
        laps=int(laps_text),
        staggered_lane_change=lane == "staggered",
        option_tyres_top_speed=top in ("yes", "true"),
        plot_default=PlotDefault.GM_THEN_MPS if default.endswith("mps") else PlotDefault.GM_THEN_SAFE,
    )


@dataclass(frozen=True)
class RaceState:
    track: Track
    options: Options
    cars: tuple[Car, ...]
    """One car per seat, in seating order."""
    phase: Phase = Phase.DESIGN
    race_turn: int = 0
    """Race turns resolved so far (0 during set-up)."""

    @property
    def laps(self) -> int:
        return self.options.laps

    def car(self, player: str) -> Car:
        for car in self.cars:
            if car.player == player:
                return car
        raise KeyError(player)

    def with_car(self, car: Car) -> RaceState:
        return replace(self, cars=tuple(car if c.player == car.player else c for c in self.cars))

    def racing(self) -> tuple[Car, ...]:
        return tuple(c for c in self.cars if c.status is Status.RACING)

    def finish_progress(self) -> int:
        """Progress at which a car has finished (P27): the line after `laps` laps.

        Cars start on lap 0 behind the line; crossing it starts lap 1.
        """
        return (self.laps + 1) * self.track.rows
