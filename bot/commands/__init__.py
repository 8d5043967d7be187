"""Mail commands as objects (Mailman 3's habit): each player verb is a class with its syntax, its
one-line summary and its handler; each GM verb a `GmCommandSpec` whose handler is bound in
`bot.gm.powers.HANDLERS` (a test checks that the two name the same verbs). HELP, the CLI's
`flagman gm` subcommands and the digest's syntax list are generated from these, so they
cannot drift from what the handlers accept.

* `bot.commands.grammar`: the text of a mail -> typed commands (pure; no database);
* `bot.commands.player`: what each player command does (`player.run`), with the handlers of
  `bot.commands.anyone` (LIST, RULES, OBSERVE, UNOBSERVE, CONFIRM: for anyone, strangers
  too), `bot.commands.press` (PRESS) and `bot.commands.account` (TIMEZONE, ADDRESS, VACATION);
* `bot.commands.streams`: PING, CALENDAR, REMINDERS and UNSUBSCRIBE (what comes by mail, and
  how a mail was received: issue 19);
* `bot.commands.suggest`: did you mean ...?
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
    CommandProblem,
    Confirm,
    GmCommand,
    GmCommandSpec,
    Help,
    Join,
    ListGames,
    MailCommands,
    Observe,
    Ping,
    PlayerCommand,
    Press,
    Reminders,
    Resign,
    ShowOrders,
    ShowRules,
    Status,
    Stop,
    Timezone,
    Unobserve,
    Unsubscribe,
    Vacation,
    parse_commands,
    split_gm_args,
)

__all__ = [
    "FOR_ANYONE", "GM_COMMANDS", "MAX_COMMANDS", "MAX_PROBLEMS", "GM_VERBS", "PLAYER_COMMANDS", "Address", "Calendar", "CommandProblem", "Confirm",
    "GmCommand", "GmCommandSpec", "Help", "Join", "ListGames", "MailCommands", "Observe", "Ping", "PlayerCommand",
    "Press", "Reminders", "Resign", "ShowOrders", "ShowRules", "Status", "Stop", "Timezone", "Unobserve", "Unsubscribe",
    "Vacation", "parse_commands", "split_gm_args",
]
