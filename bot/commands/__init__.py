"""Mail commands as objects (Mailman 3's habit): every verb, a player's or the GM's, is a class
with its syntax, its one-line summary and its example, whose instance is the command as read;
`bot.commands.registry` binds each class to its handler, in one table (a test checks that
every class has one). HELP, the CLI's `flagman gm` subcommands and the digest's syntax list
are generated from the classes, so they cannot drift from what the handlers accept.

* `bot.commands.grammar`: the text of a mail -> typed commands (pure; no database);
* `bot.commands.registry`: the table, and the runners (`run` for a player's command,
  `execute` for a GM's, by mail or CLI: audited, in a savepoint);
* `bot.commands.handlers`: what a player command's handler gets and gives;
* `bot.commands.player` (HELP, STATUS, ORDERS, CLEAR, WAIT, NOWAIT, HISTORY, RESEND, JOIN, RESIGN), `bot.commands.anyone` (LIST,
  RULES, OBSERVE, UNOBSERVE, CONFIRM, STOP: for anyone, strangers too), `bot.commands.press`
  (PRESS), `bot.commands.account` (TIMEZONE, ADDRESS, VACATION), `bot.commands.streams` (PING,
  CALENDAR, REMINDERS, UNSUBSCRIBE): the player commands' handlers;
* `bot.commands.gm`: the GM commands' handlers (the GM's powers);
* `bot.commands.suggest`: did you mean ...?

A refusal is `bot.fate.Refused`, raised by the handler, for player and GM commands alike.
"""

from bot.commands.grammar import (
    FOR_ANYONE,
    GM_COMMANDS,
    GM_VERBS,
    MAX_COMMANDS,
    MAX_PROBLEMS,
    PLAYER_COMMANDS,
    Address,
    Calendar,
    Clear,
    CommandProblem,
    Confirm,
    GmCommand,
    Help,
    History,
    Join,
    ListGames,
    MailCommands,
    NoWait,
    Observe,
    Ping,
    PlayerCommand,
    Practice,
    Press,
    Rating,
    Reminders,
    Resend,
    Resign,
    ShowOrders,
    ShowRules,
    Status,
    Stop,
    Timezone,
    Unobserve,
    Unsubscribe,
    Vacation,
    Wait,
    parse_commands,
    split_gm_args,
)

__all__ = [
    "FOR_ANYONE",
    "GM_COMMANDS",
    "MAX_COMMANDS",
    "MAX_PROBLEMS",
    "GM_VERBS",
    "PLAYER_COMMANDS",
    "Address",
    "Calendar",
    "Clear",
    "CommandProblem",
    "Confirm",
    "GmCommand",
    "Help",
    "History",
    "Join",
    "ListGames",
    "MailCommands",
    "NoWait",
    "Observe",
    "Ping",
    "PlayerCommand",
    "Practice",
    "Press",
    "Rating",
    "Reminders",
    "Resend",
    "Resign",
    "ShowOrders",
    "ShowRules",
    "Status",
    "Stop",
    "Timezone",
    "Unobserve",
    "Unsubscribe",
    "Vacation",
    "Wait",
    "parse_commands",
    "split_gm_args",
]
