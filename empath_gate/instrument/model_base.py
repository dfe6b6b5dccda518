"""The base of every instrument model: frozen, no unknown keys, ASCII slug ids, the locales.

Source of the conventions: EMPATH (arXiv:2606.30256) as summarised in the project's FACTS;
ids are stable ASCII slugs (``^[a-z0-9]+(?:[_-][a-z0-9]+)*$``), display labels sit beside them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

SLUG_PATTERN = r"^[a-z0-9]+(?:[_-][a-z0-9]+)*$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, min_length=1, max_length=80)]
Locale = Literal["es-MX", "en-US"]
LOCALES: tuple[Locale, ...] = ("es-MX", "en-US")


class Frozen(BaseModel):
    """Base of the instrument models: immutable, and an unknown key is an error (``min_maen``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
