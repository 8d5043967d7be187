"""The systemd unit this process runs as: which instance, where its credentials are.

flagman.service, or flagman@NAME.service for one of several bots on a machine (the templated
unit sets FLAGMAN_INSTANCE). What the service, doctor and the deployment say of the unit (the
credentials folder a fix names, the unit to restart) comes from here, so they always agree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# Where the unit's LoadCredential= reads the secrets from (flagman.service, flagman.tmpfiles):
# the one path that doctor's hints and OPERATING.md name.
CREDENTIALS_DIR = "/etc/flagman/credentials"
# An instance of flagman@.service: flagman-NAME is its user name (at most 31 characters).
INSTANCE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,22}")


def instance_of(env: Mapping[str, str] | None = None) -> str | None:
    """The instance of flagman@.service this runs as: FLAGMAN_INSTANCE, which the templated unit
    sets (and flagmanctl @NAME passes on); None under flagman.service or by hand."""
    name = (os.environ if env is None else env).get("FLAGMAN_INSTANCE", "")
    return name if INSTANCE_NAME.fullmatch(name) else None


def credentials_dir(env: Mapping[str, str] | None = None) -> str:
    """Where the unit this runs as reads the credentials from: /etc/flagman/credentials, or
    /etc/flagman-NAME/credentials for flagman@NAME (the path doctor's fixes name)."""
    name = instance_of(env)
    return CREDENTIALS_DIR if name is None else f"/etc/flagman-{name}/credentials"


def unit_of(env: Mapping[str, str] | None = None) -> str:
    """The unit this runs as, for `systemctl restart ...` in doctor's fixes: flagman or flagman@NAME."""
    name = instance_of(env)
    return "flagman" if name is None else f"flagman@{name}"
