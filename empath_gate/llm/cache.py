"""A content-addressed on-disk cache of model replies (default ``.empath-cache/``).

The key is the sha256 of the canonical JSON (sorted keys, no whitespace, UTF-8) of every
input that can change a reply: role, model, the role's endpoint, every sampling parameter,
the seed, the full message list, the non-secret request headers (names and value digests),
for the embedded local model the sha256 of its weights, and what each caller adds
(``cache_extra``): the target's system-prompt hash, the prompt-template version, the run index,
for the judge its re-judge index. The client builds the common part
(:mod:`empath_gate.llm.keying` names the endpoint, headers and weights). Leaving the run index
out would make the N runs of a conversation one sample repeated N times.

Only usable replies are stored: the client asks the caller whether a reply is usable before
writing it (a judge reply that parses, an auditor message in character; a target reply that a
content filter blocked is evidence and is stored), so a failure is asked again on the next run
instead of being replayed.

Layout: ``<root>/v2/segments/*.seg``, append-only files of one line per entry (key, TAB, the
stored JSON object), one file per writing process (:mod:`empath_gate.llm.segments`: why not a
file per entry, how concurrent writers and readers meet). Writers never share a file, so
concurrent writers (asyncio tasks, xdist workers, several processes) never tear an entry; a line
that is not complete or does not parse is a miss, and in a process a later write of a key wins
(across processes, the entry of the segment created later). Entries that earlier releases
wrote one file each (``<root>/v2/<key[:2]>/<key>.json``, same keys) are still read. Entries
of an older key format (``<root>/v1/``…) are never read; the first :class:`Cache` opened on a
root in a process reports how many there are, in one line.

Modes: ``use`` reads and writes; ``refresh`` never reads, always writes (overwrites);
``off`` neither reads nor writes.

Credentials are never stored: a key part or a value holding a credential-named field
(``api_key``, ``authorization``, ``headers``…) raises ``ValueError`` instead, and every string
of a stored value has its secrets taken out (:func:`empath_gate.secrets.scrub`: a judge reply
that quotes a provider key is stored with ``<redacted>`` in its place).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from empath_gate.bounded import InputLimitError, current_limits, loads_json, read_json, well_formed
from empath_gate.llm.segments import read_entry, store_for
from empath_gate.secrets import contains_secret, scrub
from empath_gate.settings import is_secret_name

CacheMode = Literal["use", "off", "refresh"]
CACHE_FORMAT = "v2"
"""Layout/format version; part of every key and of the directory name. ``v1`` keys left out
the endpoint, the request headers and the local weights, and stored failed replies."""

_OLD_FORMAT = re.compile(r"v[0-9]+")
_KEY = re.compile(r"[0-9a-f]{64}")
_SHARD = re.compile(r"[0-9a-f]{2}")
_reported_roots: set[Path] = set()
_reported_lock = threading.Lock()
SEGMENTS = "segments"
"""The folder under ``<root>/<CACHE_FORMAT>/`` that holds the segment files."""


def canonical_json(value: object) -> str:
    """Canonical JSON of ``value``: sorted keys, compact separators, UTF-8 (not ASCII-escaped).
    Tuples serialise as lists. Raises TypeError for non-JSON values (never ``str()`` them, so
    two different objects can never share a key by accident)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _check_no_secrets(value: object, where: str) -> None:
    """Raise ValueError when any mapping key (at any depth) is credential-named."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str):
                secret = _SECRET_NAMES.get(k) if type(k) is str else None
                if secret is None:
                    secret = _secret_name(k)
                if secret:
                    raise ValueError(f"{where}: field {k!r} looks like a credential and is never cached")
            if _container(v):
                _check_no_secrets(v, where)
    elif isinstance(value, (list, tuple)):
        for v in value:
            if _container(v):
                _check_no_secrets(v, where)


_LEAVES = frozenset({str, int, float, bool, type(None)})
_SECRET_NAMES: dict[str, bool] = {}
"""Field name (plain ``str`` only) -> credential-named, for the names seen so far (about
:data:`_NAMES_KEPT` at most: threads may add a few past it)."""
_NAMES_KEPT = 1024


def _container(value: object) -> bool:
    """Whether ``value`` is a mapping, list or tuple (exact leaf types answered without the
    abstract-class check, which costs more than the rest of the walk)."""
    kind = type(value)
    if kind in _LEAVES:
        return False
    return kind is dict or kind is list or kind is tuple or isinstance(value, (Mapping, list, tuple))


def _secret_name(name: str) -> bool:
    """:func:`~empath_gate.settings.is_secret_name`, remembered for the first
    :data:`_NAMES_KEPT` plain-``str`` names: the same few field names (``role``, ``content``…)
    come back in every key and value."""
    secret = is_secret_name(name)
    if type(name) is str and len(_SECRET_NAMES) < _NAMES_KEPT:
        _SECRET_NAMES[name] = secret
    return secret


def cache_key(key_parts: Mapping[str, object]) -> str:
    """sha256 hex digest of the canonical JSON of ``key_parts`` plus the cache format version.
    Raises ValueError when a part is credential-named, TypeError when not JSON-serialisable."""
    _check_no_secrets(key_parts, "cache key")
    payload = canonical_json({"format": CACHE_FORMAT, "parts": dict(key_parts)})
    return hashlib.sha256(well_formed(payload).encode("utf-8")).hexdigest()


def _stored_json(value: Mapping[str, Any]) -> str:
    """The canonical JSON of ``value`` with :func:`~empath_gate.secrets.scrub` applied to every
    string. Fast path: the JSON text of ``value`` itself when it has no escaped character (then
    every string, keys included, appears in it verbatim, between quotes that end every
    credential shape) and no secret: a secret in any one string would be a secret in the text.
    Otherwise (or for a value ``json`` cannot encode as it is) each string is scrubbed."""
    try:
        text = canonical_json(value)
    except TypeError:
        text = None
    if text is not None and "\\" not in text and not contains_secret(text):
        return text
    return canonical_json(scrub(dict(value)))


def old_format_entries(root: Path) -> int:
    """How many entry files ``root`` holds in key formats other than :data:`CACHE_FORMAT`
    (folders ``v1``, ``v3``… directly under ``root``); 0 when there are none or ``root`` is
    missing."""
    count = 0
    try:
        folders = [d for d in root.iterdir() if d.is_dir() and _OLD_FORMAT.fullmatch(d.name)]
    except OSError:
        return 0
    for folder in folders:
        if folder.name != CACHE_FORMAT:
            count += sum(1 for _ in folder.glob("*/*.json"))
    return count


def old_format_line(root: Path, count: int) -> str:
    """The one line that reports ``count`` ignored old-format entries under ``root``."""
    return (
        f"empath-gate: cache: ignoring {count} entries in an old key format under {root} "
        f"(this version reads only {root / CACHE_FORMAT}; delete the other folders to free the space)"
    )


def _print_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Cache:
    """The reply cache under ``root`` in ``mode`` (``use`` | ``off`` | ``refresh``).

    ``hits``, ``misses`` and ``writes`` count this object's operations (this process only).
    Thread- and process-safe: every Cache of a root in a process shares one segment store
    (:func:`empath_gate.llm.segments.store_for`), whose appends never interleave with another
    process's. The first Cache of a root in a process (mode ``use`` or ``refresh``) counts the
    entries in an older key format under ``root`` (never read) into ``old_entries`` and reports a
    non-zero count once, in one line through ``notice`` (default: stderr); later ones leave it 0.
    """

    def __init__(
        self,
        root: Path | str = Path(".empath-cache"),
        *,
        mode: CacheMode = "use",
        notice: Callable[[str], None] | None = None,
    ) -> None:
        if mode not in ("use", "off", "refresh"):
            raise ValueError(f"cache mode must be use, off or refresh, not {mode!r}")
        self.root = Path(root)
        self.mode: CacheMode = mode
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._lock = threading.Lock()
        self._base = os.path.join(self.root, CACHE_FORMAT)
        self._segments = os.path.realpath(os.path.join(self._base, SEGMENTS))
        self._has_one_file_entries: bool | None = None  # known at the first miss
        self.old_entries = 0
        if mode != "off":
            self._report_old_entries(notice or _print_line)

    def _report_old_entries(self, notice: Callable[[str], None]) -> None:
        resolved = self.root.resolve()
        with _reported_lock:
            if resolved in _reported_roots:
                return
            _reported_roots.add(resolved)
        self.old_entries = old_format_entries(self.root)
        if self.old_entries:
            notice(old_format_line(self.root, self.old_entries))

    @staticmethod
    def key(key_parts: Mapping[str, object]) -> str:
        """See :func:`cache_key`."""
        return cache_key(key_parts)

    def path(self, key: str) -> Path:
        """Where an entry of ``key`` (a sha256 hex digest) written by an earlier release, one
        file per entry, lives (still read; never written). Raises ValueError for a non-key."""
        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """:meth:`path` as a string (one string join, no path objects: once per call)."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return os.path.join(self._base, key[:2], f"{key}.json")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value of ``key``, or None (mode ``off``/``refresh``, absent, unreadable,
        over the input limits of :mod:`empath_gate.bounded`)."""
        if self.mode != "use":
            return None
        value = self._read(key)
        with self._lock:
            if value is not None:
                self.hits += 1
                return value
            self.misses += 1
        return None

    def _read(self, key: str) -> dict[str, Any] | None:
        """The entry of ``key`` in the segments, else in its one-file form; None when neither
        holds a JSON object within the input limits."""
        try:
            legacy = self._file(key)  # validates the key first
            found = store_for(self._segments).lookup(key)
            if found is not None:
                data = read_entry(found, current_limits().max_json_bytes)
                text = data.decode("utf-8") if data is not None else None
                value = loads_json(text, found.segment) if text is not None else None
            elif self._one_file_entries():
                value = read_json(Path(legacy))
            else:
                value = None
        except (OSError, ValueError, InputLimitError):
            value = None
        return value if isinstance(value, dict) else None

    def _one_file_entries(self) -> bool:
        """Whether ``<root>/v2/`` holds a shard folder of one-file entries (listed once per
        Cache: a cache that has none is not probed for each key it misses)."""
        if self._has_one_file_entries is None:
            try:
                names = os.listdir(self._base)
            except OSError:
                names = []
            self._has_one_file_entries = any(_SHARD.fullmatch(n) for n in names)
        return self._has_one_file_entries

    def reject(self, key: str) -> None:
        """Count the entry of ``key`` just read by :meth:`get` as a miss: its caller could not
        use it (a reply an older version stored); the next usable reply overwrites it."""
        with self._lock:
            self.hits -= 1
            self.misses += 1

    def put(self, key: str, value: Mapping[str, Any]) -> Path | None:
        """Store ``value`` (a JSON object) under ``key``: one line appended to this process's
        segment; no-op in mode ``off``. Returns the segment file written (None when off).
        Raises ValueError for a non-key and for credential-named fields, TypeError for
        non-JSON values, OSError when the disk refuses the write. Secrets in the strings of
        ``value`` are stored redacted (module docstring)."""
        if self.mode == "off":
            return None
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        _check_no_secrets(value, "cache value")
        segment = store_for(self._segments).append(key, well_formed(_stored_json(value)).encode("utf-8"))
        with self._lock:
            self.writes += 1
        return Path(segment)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every readable entry, ``{key: value}``: the segments' (the latest per key) and the
        one-file entries of earlier releases that no segment overrides; ``{}`` in mode ``off``."""
        found: dict[str, dict[str, Any]] = {}
        if self.mode == "off":
            return found
        for legacy in sorted(Path(self._base).glob("*/*.json")):
            if _KEY.fullmatch(legacy.stem) and (value := self._read(legacy.stem)) is not None:
                found[legacy.stem] = value
        for key in store_for(self._segments).stored_keys():
            if (value := self._read(key)) is not None:
                found[key] = value
        return found
