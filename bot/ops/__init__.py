"""Operating the service: deploy, migrate (upgrades), backups, doctor (and its plus-address probe),
retention, metrics, systemd notify. Above the composition root: a tool opens what it needs
through bot.app."""
