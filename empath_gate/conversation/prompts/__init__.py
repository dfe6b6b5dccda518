"""Versioned prompt templates of the conversation engine (package resources).

``auditor_v2.md`` is the LLM auditor's system prompt. Its version string, which enters every
auditor cache key, is the file name stem plus the first 12 hex digits of the sha256 of its
text, so an edited template can never reuse replies cached for the old one.
"""

from __future__ import annotations

import hashlib
from importlib import resources


def load_template(name: str) -> tuple[str, str]:
    """The text of the prompt template ``name`` (a file of this package) and its version,
    ``<stem>:<sha256(text)[:12]>``. Raises FileNotFoundError for an unknown name."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return text, f"{name.removesuffix('.md')}:{digest}"
