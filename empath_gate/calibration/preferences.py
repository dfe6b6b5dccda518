"""Reading raters' preferences (which of two systems each rater preferred) from CSV files.

A directory of CSV files with one row per rated sub-item; a rater column ``clinician`` or
``rater`` (or, for a file with ``judge_preferred_system``, the rater ``judge``), ``entry_id``,
and the preferred system in ``preferred_system`` / ``judge_preferred_system``. One preference
per rater and entry: rows of one entry must agree. Every error is a
:class:`~empath_gate.errors.ConfigError` naming the file (and row) and what to fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from empath_gate.analysis.base import AnalysisModel
from empath_gate.bounded import csv_header, iter_csv
from empath_gate.calibration.readers import read_text
from empath_gate.errors import ConfigError

NO_PREFERENCE = frozenset({"", "none", "tie", "no preference", "n/a", "na"})
"""Preference values that state no A/B preference (compared case-insensitively)."""


class Preferences(AnalysisModel):
    """Preferred system per rater and entry; ``None`` = no A/B preference (or a tie).
    ``raters`` in the order they were found (files sorted by name, rows in file order)."""

    raters: tuple[str, ...]
    ratings: dict[str, dict[str, str | None]]
    categories: tuple[str, ...]


def _preference_rows(path: Path) -> Iterator[tuple[str, str, str, str]]:
    """``(location, rater, entry_id, preference)`` of one preferences CSV."""
    text = read_text(path)
    fields = set(csv_header(text))
    if "judge_preferred_system" in fields:
        pref_col, rater_col = "judge_preferred_system", None
    elif "preferred_system" in fields:
        pref_col = "preferred_system"
        rater_col = "clinician" if "clinician" in fields else "rater" if "rater" in fields else None
        if rater_col is None:
            raise ConfigError(f"{path}: a preferred_system column needs a 'clinician' or 'rater' column")
    else:
        return
    if "entry_id" not in fields:
        raise ConfigError(f"{path}: missing the 'entry_id' column")
    for i, row in iter_csv(text, str(path)):
        rater = "judge" if rater_col is None else (row.get(rater_col) or "").strip()
        if not rater:
            raise ConfigError(f"{path}:{i}: empty rater")
        yield f"{path}:{i}", rater, (row.get("entry_id") or "").strip(), (row.get(pref_col) or "").strip()


def read_preferences(directory: str | Path, *, categories: Sequence[str] | None = None) -> Preferences:
    """One preference per rater and entry from the CSV files of ``directory`` (module
    docstring). Values in :data:`NO_PREFERENCE` become ``None``. ``categories``: the allowed
    preferences; by default the distinct other values found, which must be exactly two.
    Raises ConfigError for conflicting rows of one entry, a value outside ``categories``, or
    a directory with no preference file."""
    d = Path(directory)
    if not d.is_dir():
        raise ConfigError(f"{d}: not a directory of preference CSV files")
    raters: list[str] = []
    ratings: dict[str, dict[str, str | None]] = {}
    found: list[str] = []
    for path in sorted(d.glob("*.csv")):
        for where, rater, entry, pref in _preference_rows(path):
            value = None if pref.lower() in NO_PREFERENCE else pref
            if rater not in ratings:
                raters.append(rater)
                ratings[rater] = {}
            if entry in ratings[rater] and ratings[rater][entry] != value:
                raise ConfigError(
                    f"{where}: {rater} prefers {value!r} for {entry} here but "
                    f"{ratings[rater][entry]!r} in an earlier row; one preference per entry"
                )
            ratings[rater][entry] = value
            if value is not None and value not in found:
                found.append(value)
    if not ratings:
        raise ConfigError(f"{d}: no CSV file with a preferred_system or judge_preferred_system column")
    cats = tuple(categories) if categories is not None else tuple(sorted(found))
    if len(cats) != 2 and categories is None:
        raise ConfigError(
            f"{d}: expected two preference categories (e.g. System_A, System_B), found {list(cats)}"
        )
    for rater, entries in ratings.items():
        for entry, value in entries.items():
            if value is not None and value not in cats:
                raise ConfigError(f"{d}: {rater} prefers {value!r} for {entry}, not one of {list(cats)}")
    return Preferences(raters=tuple(raters), ratings=ratings, categories=cats)
