"""Settings: the option table, the settings model, and loading them from the layers.

``from empath_gate.settings import Settings, RoleSettings, load_settings`` covers most uses;
:mod:`~empath_gate.settings.options` holds the one option table every front-end is built from,
:mod:`~empath_gate.settings.profile` the offline profile.
"""

from empath_gate.settings.load import KNOWN_KEYS, convert, load_settings
from empath_gate.settings.model import ROLES, CacheMode, RoleSettings, Settings, is_secret_name, redact_url

__all__ = [
    "KNOWN_KEYS",
    "ROLES",
    "CacheMode",
    "RoleSettings",
    "Settings",
    "convert",
    "is_secret_name",
    "load_settings",
    "redact_url",
]
