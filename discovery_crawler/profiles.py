"""Settings profiles (``settings_profiles/<name>.py``): one per kind of user (SPEC §1).

A profile only sets defaults. It is applied at ``spider`` priority, above the project's
settings and below ``-s NAME=value`` on the command line.
"""

from __future__ import annotations

import importlib
import pkgutil

import settings_profiles


def available_profiles() -> tuple[str, ...]:
    """Names of the profiles shipped in ``settings_profiles/``."""
    return tuple(
        sorted(m.name for m in pkgutil.iter_modules(settings_profiles.__path__) if not m.ispkg)
    )


def load_profile(name: str) -> dict[str, object]:
    """The UPPER_CASE settings of profile ``name``."""
    module = importlib.import_module(f"settings_profiles.{name}")
    return {key: getattr(module, key) for key in dir(module) if key.isupper()}
