"""A content-addressed on-disk cache of model replies (default ``.empath-cache/``).

The key is the sha256 of the canonical JSON (sorted keys, no whitespace, UTF-8) of every
input that can change a reply: role, model, every sampling parameter, the seed, the
system-prompt hash, the full message list, the prompt-template version, the run index, and for
the judge its re-judge index. Callers pass these as a ``key_parts`` mapping; the client builds
the common part and each caller adds its own (``cache_extra``). Leaving the run index out
would make the N runs of a conversation one sample repeated N times.

Layout: ``<root>/v1/<key[:2]>/<key>.json``, each file one JSON object (the stored reply).
Writes go to a temporary file in the same directory and are renamed over the target with
``os.replace`` (atomic on POSIX and Windows), so concurrent writers (asyncio tasks, xdist
workers, several processes) never leave a torn file; two writers of the same key write the
same content, and the last rename wins. A file that does not parse is treated as a miss.

Modes: ``use`` reads and writes; ``refresh`` never reads, always writes (overwrites);
``off`` neither reads nor writes.

Credentials are never stored: a key part or a value holding a credential-named field
(``api_key``, ``authorization``, ``headers``…) raises ``ValueError`` instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from empath_gate.settings import is_secret_name

CacheMode = Literal["use", "off", "refresh"]
CACHE_FORMAT = "v1"
"""Layout/format version; part of every key and of the directory name."""


def canonical_json(value: object) -> str:
    """Canonical JSON of ``value``: sorted keys, compact separators, UTF-8 (not ASCII-escaped).
    Tuples serialise as lists. Raises TypeError for non-JSON values (never ``str()`` them, so
    two different objects can never share a key by accident)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _check_no_secrets(value: object, where: str) -> None:
    """Raise ValueError when any mapping key (at any depth) is credential-named."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str) and is_secret_name(k):
                raise ValueError(f"{where}: field {k!r} looks like a credential and is never cached")
            if isinstance(v, (Mapping, list, tuple)):
                _check_no_secrets(v, where)
    elif isinstance(value, (list, tuple)):
        for v in value:
            if isinstance(v, (Mapping, list, tuple)):
                _check_no_secrets(v, where)


def cache_key(key_parts: Mapping[str, object]) -> str:
    """sha256 hex digest of the canonical JSON of ``key_parts`` plus the cache format version.
    Raises ValueError when a part is credential-named, TypeError when not JSON-serialisable."""
    _check_no_secrets(key_parts, "cache key")
    payload = canonical_json({"format": CACHE_FORMAT, "parts": dict(key_parts)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Cache:
    """The reply cache under ``root`` in ``mode`` (``use`` | ``off`` | ``refresh``).

    ``hits``, ``misses`` and ``writes`` count this object's operations (this process only).
    Thread- and process-safe: reads never see partial files, writes are atomic renames.
    """

    def __init__(self, root: Path | str = Path(".empath-cache"), *, mode: CacheMode = "use") -> None:
        if mode not in ("use", "off", "refresh"):
            raise ValueError(f"cache mode must be use, off or refresh, not {mode!r}")
        self.root = Path(root)
        self.mode: CacheMode = mode
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._lock = threading.Lock()
        self._made_dirs: set[Path] = set()

    @staticmethod
    def key(key_parts: Mapping[str, object]) -> str:
        """See :func:`cache_key`."""
        return cache_key(key_parts)

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` (a sha256 hex digest) lives."""
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / CACHE_FORMAT / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value of ``key``, or None (mode ``off``/``refresh``, absent, unreadable)."""
        if self.mode != "use":
            return None
        try:
            with self.path(key).open("r", encoding="utf-8") as fh:
                value = json.load(fh)
        except (OSError, ValueError):
            value = None
        with self._lock:
            if isinstance(value, dict):
                self.hits += 1
                return value
            self.misses += 1
        return None

    def put(self, key: str, value: Mapping[str, Any]) -> Path | None:
        """Store ``value`` (a JSON object) under ``key`` atomically; no-op in mode ``off``.
        Returns the file written (None when off). Raises ValueError for credential-named
        fields, TypeError for non-JSON values."""
        if self.mode == "off":
            return None
        _check_no_secrets(value, "cache value")
        data = canonical_json(dict(value)).encode("utf-8")
        target = self.path(key)
        if target.parent not in self._made_dirs:  # one mkdir per shard directory, not per write
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made_dirs.add(target.parent)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=target.parent)
        except FileNotFoundError:  # the directory was removed behind our back: make it again
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with self._lock:
            self.writes += 1
        return target
