"""What the analysis modules share: the frozen base model, a fast trusted constructor, and a
garbage-collector pause for building very many small objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict
from typing_extensions import Self

_set = object.__setattr__


class AnalysisModel(BaseModel):
    """Base of the analysis and gate models: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def trusted(cls, **values: Any) -> Self:
        """Build an instance without validation from values this package computed itself, with
        **every** field given. It sets the same four slots ``model_construct`` sets, minus its
        per-field default lookup, which dominated the cost of the gate on large plans (see
        ``bench/bench_gate.py``); the tests check that such instances equal validated ones."""
        obj = cls.__new__(cls)
        _set(obj, "__dict__", values)
        _set(obj, "__pydantic_fields_set__", set(values))
        _set(obj, "__pydantic_extra__", None)
        _set(obj, "__pydantic_private__", None)
        return obj


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects (cell statistics
    and decisions hold no reference cycles, so there is nothing for it to find; every
    generation-0 overflow would otherwise walk the whole heap of verdicts). Restores the
    previous state on exit."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
