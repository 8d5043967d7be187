"""The service as it runs (`flagman run`): APScheduler 3 runs the jobs; IMAP IDLE wakes the poll
at once; systemd is told how it goes.

- run: the life cycle under systemd, from the start to a clean stop (the main loop, the
  instance lock, the watchdog);
- startup: the database checked, and waited for while waiting mends it;
- jobs: the Runner: poll, tick, send, digest and prune scheduled, guarded, woken, watched;
- backoff: a failure that persists, waited out, and the STATUS= line;
- idle: the IMAP IDLE thread;
- metrics: the [metrics] file as the service writes it;
- signals: SIGTERM, SIGINT and SIGHUP noted for the main loop;
- reload: what SIGHUP takes from the configuration, and what needs a restart.
"""
