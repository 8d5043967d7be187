"""Alembic environment: the URL comes from Flagman (or `-x url=...` when run by hand)."""

from __future__ import annotations

from alembic import context

from bot.db import make_engine
from bot.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("flagman_url") or context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("no database URL: pass -x url=... or run `flagman migrate`")
    return str(url)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url())
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
