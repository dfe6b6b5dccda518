"""Append-only segment files: where the reply cache (:mod:`empath_gate.llm.cache`) keeps its entries.

A segment is a file ``<folder>/<created ns, 20 digits>-<pid>-<8 hex>.seg`` that one process
creates exclusively (mode 0600) and only appends to. Each entry is one line: the 64-hex key, a
TAB, the entry's JSON text (which never holds a raw newline or TAB: JSON escapes them), LF.

Why not a file per entry: creating a file costs an inode allocation. On ext4 without a journal
the allocator skips every inode freed in the last minute (the kernel's ``recently_deleted``),
reading the inode table for each, and a cache written next to a test suite's or a bench's
freshly deleted temporary files paid 0.5–0.7 ms of kernel CPU per entry (``bench/bench_engine.py``,
README Performance); an append costs a few microseconds on any filesystem.

Writers never share a file, so lines of different processes never interleave; within a process
one lock orders the threads' appends. A write that fails part-way leaves a line without its LF:
the store drops that segment and starts a new one, and readers skip any line that is not a key,
a TAB and a body ending in LF (a crashed or still-running writer's last line included).

Readers index every segment in name order (creation time first, so a later write of a key wins)
on first use, then keep their own appends indexed as they write them. On a lookup that misses,
the folder's modification time is checked (one ``stat``) and, when a segment was added since,
every segment's new tail is indexed: entries of a run in another process become visible as soon
as it opens its segment. Lines appended to a segment that was already indexed, while no segment
was added, are seen by the next process (a ``generate`` or ``rejudge`` run starts one).

One :class:`SegmentStore` per folder and process (:func:`store_for`): every
:class:`~empath_gate.llm.cache.Cache` of a root in a process shares its index and its segment.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

SUFFIX = ".seg"
_KEY_LEN = 64
_LINE_KEY = re.compile(rb"[0-9a-f]{64}\t")
_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_READ_CHUNK = 1 << 20
"""Bytes read from a segment at once while indexing (1 MiB): memory stays flat on large segments."""

_SETTLED_NS = 100_000_000
"""A folder time older than this (0.1 s, many clock ticks) is trusted to move on the next change."""

_stores: dict[tuple[str, int], SegmentStore] = {}
_stores_lock = threading.Lock()


@dataclass(frozen=True)
class Location:
    """Where one entry's JSON text is: ``segment`` (path), byte ``offset`` and ``length``."""

    segment: str
    offset: int
    length: int


def store_for(folder: str) -> SegmentStore:
    """The process's one :class:`SegmentStore` of ``folder`` (made on first use; a forked child
    gets its own, never the parent's open segment)."""
    ident = (os.path.abspath(folder), os.getpid())
    with _stores_lock:
        store = _stores.get(ident)
        if store is None:
            store = _stores[ident] = SegmentStore(ident[0])
        return store


def _entries_in(data: bytes, base: int) -> Iterator[tuple[str, int, int]]:
    """``(key, offset, length)`` of each well-formed line of ``data`` (which starts at byte
    ``base`` of its segment and ends with LF or is cut before an unfinished line)."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return
        if end - start > _KEY_LEN + 1 and _LINE_KEY.match(data, start):
            body = start + _KEY_LEN + 1
            yield data[start:start + _KEY_LEN].decode("ascii"), base + body, end - body
        start = end + 1


class SegmentStore:
    """The entries of the segments in ``folder``: :meth:`lookup` reads, :meth:`append` writes.
    Thread-safe; one per folder and process (:func:`store_for`)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._index: dict[str, Location] = {}
        self._indexed: dict[str, int] = {}  # segment -> bytes indexed (up to its last full line)
        self._folder_mtime: int | None = None  # ns, when last listed; None: never listed
        self._fd: int | None = None
        self._segment = ""
        self._size = 0

    def lookup(self, key: str) -> Location | None:
        """Where the latest entry of ``key`` is, or None. Indexes the folder on first use and,
        on a miss, the segments added since (module docstring)."""
        with self._lock:
            found = self._index.get(key)
            if found is None and self._listing_changed():
                self._index_new_tails()
                found = self._index.get(key)
            return found

    def stored_keys(self) -> list[str]:
        """Every key with an entry, after indexing every segment's new tail."""
        with self._lock:
            self._listing_changed()
            self._index_new_tails()
            return list(self._index)

    def append(self, key: str, body: bytes) -> str:
        """Append the entry ``key`` → ``body`` (JSON text, UTF-8, no raw LF) to this process's
        segment, creating it (and ``folder``) on first use; returns the segment's path.
        Raises OSError when the write fails (the segment is then closed; the next append
        starts a new one)."""
        line = b"".join((key.encode("ascii"), b"\t", body, b"\n"))
        with self._lock:
            fd = self._fd if self._fd is not None else self._open()
            offset = self._size
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view):]
            except BaseException:
                self._close()
                raise
            self._size += len(line)
            self._indexed[self._segment] = self._size
            self._index[key] = Location(self._segment, offset + _KEY_LEN + 1, len(body))
            return self._segment

    def _open(self) -> int:
        """Create this process's next segment (and the folder); make it the one appended to."""
        os.makedirs(self.folder, exist_ok=True)
        while True:
            name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}"
            path = os.path.join(self.folder, name)
            try:
                fd = os.open(path, _FLAGS, 0o600)
            except FileExistsError:
                continue
            self._fd, self._segment, self._size = fd, path, 0
            self._indexed[path] = 0
            return fd

    def _close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _listing_changed(self) -> bool:
        """Whether the folder's modification time moved since it was last listed (always True
        the first time; False while the folder does not exist)."""
        try:
            mtime = os.stat(self.folder).st_mtime_ns
        except OSError:
            return False
        if mtime == self._folder_mtime:
            return False
        # A time this recent may not change for a segment made within the same clock tick:
        # list again next time (git's "racy" index entries, the same reasoning).
        self._folder_mtime = mtime if time.time_ns() - mtime > _SETTLED_NS else None
        return True

    def _index_new_tails(self) -> None:
        """Index the unread full lines of every segment, in name order (the caller holds the lock)."""
        try:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(SUFFIX))
        except OSError:
            return
        for name in names:
            path = os.path.join(self.folder, name)
            if path == self._segment and self._fd is not None:
                continue  # ours: indexed as written
            done = self._indexed.get(path, 0)
            try:
                if os.stat(path).st_size <= done:
                    continue
                with open(path, "rb") as f:
                    f.seek(done)
                    carry = b""
                    while chunk := f.read(_READ_CHUNK):
                        data = carry + chunk
                        cut = data.rfind(b"\n") + 1
                        for key, offset, length in _entries_in(data[:cut], done):
                            self._index[key] = Location(path, offset, length)
                        done += cut
                        carry = data[cut:]
            except OSError:
                continue
            self._indexed[path] = done


def read_entry(location: Location, max_bytes: int) -> bytes | None:
    """The JSON text at ``location``; None when it is longer than ``max_bytes`` or unreadable."""
    if location.length > max_bytes:
        return None
    try:
        with open(location.segment, "rb") as f:
            f.seek(location.offset)
            data = f.read(location.length)
    except OSError:
        return None
    return data if len(data) == location.length else None
