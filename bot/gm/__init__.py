"""The GM's side: the override commands (by mail and CLI) and the daily digest."""
