"""What a player chooses to get by mail, set by their commands (CALENDAR,
REMINDERS, RATING, a List-Unsubscribe mail) or by anyone driving the bot from Python; each in the
caller's transaction, returning whether anything changed.

* `set_calendar`: whether the player's turn sheets carry the deadline as a calendar event
  (bot.mail_out.calendar), for all their games;
* `set_rating`: whether the player's rating is shown to them (bot.games.ratings), for every
  kind of game; off until they ask;
* `set_reminders`: whether the holder of a seat gets its reminders (bot.games.reminders),
  for that seat of that game alone: stopping them names the holder, so a new holder of the
  seat gets them again.
"""

from __future__ import annotations

from bot.models import Player, Seat


def set_calendar(player: Player, on: bool) -> bool:
    """Calendar events on (`on`) or off for `player`; False if they were so already."""
    if bool(player.calendar) == on:
        return False
    player.calendar = on
    return True


def set_rating(player: Player, on: bool) -> bool:
    """The player's rating shown (`on`) or not; False if it was so already."""
    if bool(player.rating) == on:
        return False
    player.rating = on
    return True


def reminders_wanted(seat: Seat) -> bool:
    return seat.reminders_off_for is None or seat.reminders_off_for != seat.player_id


def set_reminders(seat: Seat, on: bool) -> bool:
    """The seat's reminders on (`on`) or off for its holder now; False if they were so already."""
    if reminders_wanted(seat) == on:
        return False
    seat.reminders_off_for = None if on else seat.player_id
    return True


__all__ = ["reminders_wanted", "set_calendar", "set_rating", "set_reminders"]
