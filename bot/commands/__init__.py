"""Mail commands as objects (Mailman 3's habit): each player verb is a class with its syntax, its
one-line summary and its handler; each GM verb a `GmCommandSpec` whose handler is bound in
`bot.gm.powers.HANDLERS` (a test checks that the two name the same verbs). HELP, the CLI's
`flagman gm` subcommands and the digest's syntax list are generated from these, so they
cannot drift from what the handlers accept.

* `bot.commands.grammar`: the text of a mail -> typed commands (pure; no database);
* `bot.commands.player`: what each player command does (`PlayerCommand.run`).
"""

from bot.commands.grammar import (
    GM_COMMANDS,
    GM_VERBS,
    PLAYER_COMMANDS,
    CommandProblem,
    GmCommand,
    GmCommandSpec,
    Help,
    Join,
    MailCommands,
    PlayerCommand,
    Resign,
    ShowOrders,
    Status,
    parse_commands,
    split_gm_args,
)

__all__ = [
    "GM_COMMANDS", "GM_VERBS", "PLAYER_COMMANDS", "CommandProblem", "GmCommand", "GmCommandSpec", "Help", "Join",
    "MailCommands", "PlayerCommand", "Resign", "ShowOrders", "Status", "parse_commands", "split_gm_args",
]
