"""Operating the service: backups, doctor, the single-instance lock, systemd notify."""
