"""The one place that finds what ships with empath-gate: the instrument's ``suites/``, the
shipped ``thresholds.yaml`` and the embedded example bot.

In an installed wheel they live in ``empath_gate/_data/`` (``force-include`` in
``pyproject.toml``); in a source checkout at the repository's top level (``suites/``,
``thresholds.yaml``, ``examples/support-bot/``). The wheel's copy wins when both exist.
"""

from __future__ import annotations

from pathlib import Path

from empath_gate.errors import ConfigError

_PACKAGE = Path(__file__).resolve().parent


def _find(wheel: str, checkout: str, what: str, probe: str | None = None) -> Path:
    candidates = (_PACKAGE / "_data" / wheel, _PACKAGE.parent / checkout)
    for cand in candidates:
        if (cand / probe).is_file() if probe else cand.exists():
            return cand
    raise ConfigError(
        f"{what} was not found (looked for {candidates[0]} and {candidates[1]}); reinstall empath-gate"
    )


def shipped_suites_dir() -> Path:
    """Folder of the shipped instrument (``suites/``). Raises ConfigError on a broken install."""
    return _find("suites", "suites", "the shipped instrument", "instrument.yaml")


def shipped_thresholds() -> Path:
    """The shipped ``thresholds.yaml``. Raises ConfigError on a broken install."""
    return _find("thresholds.yaml", "thresholds.yaml", "the shipped thresholds.yaml")


def embedded_bot_dir() -> Path:
    """Folder of the embedded example bot (``system-prompt.md`` and its notes). Raises
    ConfigError when it is missing (then a target must be set)."""
    try:
        return _find("support-bot", "examples/support-bot", "the embedded support bot", "system-prompt.md")
    except ConfigError as exc:
        raise ConfigError(f"{exc}; or set a target") from None
