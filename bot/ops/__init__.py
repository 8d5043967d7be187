"""Operating the service: deploy, migrate (upgrades), backups, doctor (and its plus-address probe),
the single-instance lock, systemd notify."""
