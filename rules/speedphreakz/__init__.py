"""SpeedPhreakz: the push-your-luck grid race (design: shared/design/speedphreakz.md).

`GAME` implements `rules.api.Game`. The chart, the terrain key and the maps are data in
`rules/speedphreakz/data/` (see its README.md).
"""

from __future__ import annotations

from rules.speedphreakz.game import SpeedPhreakz

GAME = SpeedPhreakz()

__all__ = ["GAME", "SpeedPhreakz"]
