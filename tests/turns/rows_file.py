"""Writing conversation rows as a JSONL file, for the tests of the external-conversation reader
and of ``empath-gate dynamics``."""

from __future__ import annotations

import json
from pathlib import Path


def write_rows(path: Path, rows: list[object]) -> Path:
    """Write ``rows`` to ``path`` as JSONL (UTF-8), one line per row: a string as it is (a
    broken line on purpose), anything else as JSON with non-ASCII kept; returns ``path``."""
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path
