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


class TyreRule(enum.Enum):
    """P4: what happens to a finisher that never ran both compounds."""

    CLASSIFY_LAST = "last"
    DISQUALIFY = "disqualify"


class OffTrackRemoval(enum.Enum):
    """P23: "If the driver can not pay either penalty the car is removed"."""

    EITHER_MISSING = "either"
    """Removed when it cannot pay one of the two (out of wear or out of skill): the default."""
    BOTH_MISSING = "neither"
    """Removed only when it can pay neither."""


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
    optional_slip: bool = False
    """P17: seed 003's optional slipstream rules (slip from a corner's last numbered space;
    a slip alone may carry a car into a corner)."""
    failed_pass_decel: bool = False
    """P20: a failed forced pass is charged on the deceleration chart (default: no charge)."""
    offtrack_removal: OffTrackRemoval = OffTrackRemoval.EITHER_MISSING
    tyre_rule: TyreRule = TyreRule.CLASSIFY_LAST
    teams: tuple[tuple[str, ...], ...] = ()
    """Teams of players (pit stacking, seed 003); empty: every car races alone."""

    def team_of(self, player: str) -> tuple[str, ...]:
        for team in self.teams:
            if player in team:
                return team
        return (player,)


OPTION_HELP = """\
track=NAME            the track: {tracks} (default harbour_loop)
laps=N                race length 1..10 laps (default: the track's own, 3); wear and skill scale with it
lane_change=aligned|staggered   diagonal moves need aligned rows (default) or may cross staggered rows
option_tyres_top=no|yes         option tyres may also replace the top speed test (default no)
plot_default=safe|mps           NMR without a GM plot: the bot's safe plot (default) or maintain speed
optional_slip=no|yes            seed 003's optional slipstream rules: slip from a corner's last space, slip into a corner
failed_pass=free|decel          a failed forced pass costs nothing more (default) or the deceleration chart
offtrack_removal=either|neither off track and unable to pay the wear or (either) the skill chip: removed (default); or only if neither
tyre_rule=last|disqualify       a finisher that did not run both compounds is classified after the others (default) or disqualified
teams=ann+bob,cat+dan           teams of players (pit stacking); default none"""


def parse_options(options: Mapping[str, str]) -> Options:
    known = {
        "track",
        "laps",
        "lane_change",
        "option_tyres_top",
        "plot_default",
        "optional_slip",
        "failed_pass",
        "offtrack_removal",
        "tyre_rule",
        "teams",
    }
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
    slip = options.get("optional_slip", "no").strip().lower()
    if slip not in ("yes", "no", "true", "false"):
        raise OptionError(f"optional_slip must be yes or no, not {slip!r}")
    failed = options.get("failed_pass", "free").strip().lower()
    if failed not in ("free", "decel"):
        raise OptionError(f"failed_pass must be free or decel, not {failed!r}")
    removal = options.get("offtrack_removal", "either").strip().lower()
    if removal not in ("either", "neither"):
        raise OptionError(f"offtrack_removal must be either or neither, not {removal!r}")
    tyre_rule = options.get("tyre_rule", "last").strip().lower()
    if tyre_rule not in ("last", "disqualify"):
        raise OptionError(f"tyre_rule must be last or disqualify, not {tyre_rule!r}")
    teams: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for group in options.get("teams", "").replace(";", ",").split(","):
        names = tuple(n for n in group.replace("/", "+").split("+") if n.strip())
        names = tuple(n.strip() for n in names)
        if not names:
            continue
        if len(names) < 2 or seen & set(names) or len(set(names)) != len(names):
            raise OptionError(
                f"teams: {group.strip()!r} is not a team of two or more different players, each in one team"
            )
        seen.update(names)
        teams.append(names)
    return Options(
        track=track,
        laps=int(laps_text),
        staggered_lane_change=lane == "staggered",
        option_tyres_top_speed=top in ("yes", "true"),
        plot_default=PlotDefault.GM_THEN_MPS if default.endswith("mps") else PlotDefault.GM_THEN_SAFE,
        optional_slip=slip in ("yes", "true"),
        failed_pass_decel=failed == "decel",
        offtrack_removal=OffTrackRemoval(removal),
        tyre_rule=TyreRule.DISQUALIFY if tyre_rule == "disqualify" else TyreRule.CLASSIFY_LAST,
        teams=tuple(teams),
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
    pole: str | None = None
    """Who won the pole: first on the grid the qualifying bid drew (None before it)."""

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
