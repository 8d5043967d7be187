"""A game's life: creating, starting and resolving turns, sign-ups, reminders and the NMR
limit, deadlines, and the public archive."""
