"""`python -m bot.cli`: the same as the `flagman` command."""

from bot.cli import main

raise SystemExit(main())
