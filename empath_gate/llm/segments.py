"""Append-only segment files: where the reply cache (:mod:`empath_gate.llm.cache`) keeps its entries.

A segment is a file ``<folder>/<created ns, 20 digits>-<pid>-<8 hex>.seg`` that one process
creates exclusively (mode 0600) and only that process appends to. Each entry is one line: the
64-hex key, a TAB, the entry's JSON text (which never holds a raw newline: JSON escapes it), LF.

Why not a file per entry: creating a file costs an inode allocation. On ext4 without a journal
the allocator skips every inode freed in the last minute (the kernel's ``recently_deleted``),
reading the inode table for each, and a cache written next to a test suite's or a bench's
freshly deleted temporary files paid 0.5–0.7 ms of kernel CPU per entry (README, Performance);
an append costs a few microseconds on any filesystem.

Writers never share a file, so lines of different processes never interleave; within a process
one lock orders the threads' appends. Each append opens the segment, writes the whole line and
closes it, so no descriptor outlives the call (a process may write to any number of roots, and
a forked child never writes through its parent's descriptor). A write that fails part-way leaves
a line without its LF: the store starts a new segment for the next append, and readers skip any
line that is not a key, a TAB and a body ending in LF (a crashed or still-running writer's last
line included). When the segment or its folder was removed, the next append makes new ones.

Readers index every segment in name order on first use, then their own appends as they write
them; in one process a later write of a key wins. Across processes the entry of the segment
created later wins (same inputs, so either is a valid reply for the key): a line read from an
older segment never replaces an entry indexed from a newer one or written by this process. On a lookup that
misses, the store checks (one ``stat`` each) the folder, for segments added since it was listed
(its modification time), and every other process's segment that was written to within the last
:data:`LIVE_S`, for lines appended since: entries that a concurrent run stores become visible at
its next miss. Segments older than that are complete: a finished run's files are not read again.

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
from typing import BinaryIO

SUFFIX = ".seg"
_KEY_LEN = 64
_LINE_KEY = re.compile(rb"[0-9a-f]{64}\t")
_CREATE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
           | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_APPEND = (os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
           | getattr(os, "O_BINARY", 0))
_READ_CHUNK = 1 << 20
"""Bytes read from a segment at once while indexing (1 MiB): memory stays flat on large segments."""

SETTLED_S = 2.0
"""A folder modification time older than this many seconds is trusted to move on the next
change; a younger one is listed again at the next miss (a segment made within the same
timestamp tick would not move it: git's "racy" index entries, the same reasoning; 2 s covers
filesystems with a coarse clock)."""

LIVE_S = 600.0
"""A segment written to within this many seconds (10 minutes) may still grow: a miss checks its
size. Project choice: far longer than any pause between two calls of a running process."""

_stores: dict[tuple[str, int], SegmentStore] = {}
_stores_lock = threading.Lock()


def _forget_stores_in_child() -> None:
    """After a fork, the child starts with no store and a fresh lock (the parent's may have been
    held by another thread at the fork)."""
    global _stores_lock
    _stores.clear()
    _stores_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_stores_in_child)


@dataclass(frozen=True)
class Location:
    """Where one entry's JSON text is: ``segment`` (path), byte ``offset`` and ``length``."""

    segment: str
    offset: int
    length: int


def store_for(folder: str) -> SegmentStore:
    """The calling process's one :class:`SegmentStore` of ``folder`` (an absolute path with no
    symbolic link: :func:`os.path.realpath`), made on first use and kept for the process's life
    (its index included); a forked child gets its own (its parent's is never written to from
    the child)."""
    ident = (folder, os.getpid())
    with _stores_lock:
        store = _stores.get(ident)
        if store is None:
            store = _stores[ident] = SegmentStore(folder)
        return store


def scan_lines(f: BinaryIO, start: int) -> Iterator[tuple[str, int, int] | int]:
    """Read ``f`` from byte ``start`` to its end, once, 1 MiB at a time: yields ``(key, offset,
    length)`` for each well-formed line (a 64-hex key, TAB, a body, LF) and, last, the byte
    offset where the first unfinished line starts (the end when every line is finished).
    Memory stays flat whatever a line's length."""
    pos = line_start = start
    head = b""  # the current line's first 65 bytes (its key and TAB when well formed)
    while chunk := f.read(_READ_CHUNK):
        i = 0
        while True:
            j = chunk.find(b"\n", i)
            stop = len(chunk) if j < 0 else j
            if len(head) <= _KEY_LEN:
                head += chunk[i:min(stop, i + _KEY_LEN + 1 - len(head))]
            if j < 0:
                break
            end = pos + j
            if end - line_start > _KEY_LEN + 1 and _LINE_KEY.fullmatch(head):
                body = line_start + _KEY_LEN + 1
                yield head[:_KEY_LEN].decode("ascii"), body, end - body
            line_start, head, i = end + 1, b"", j + 1
        pos += len(chunk)
    yield line_start


class SegmentStore:
    """The entries of the segments in ``folder``: :meth:`lookup` reads, :meth:`append` writes.
    Thread-safe; one per folder and process (:func:`store_for`)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._index: dict[str, Location] = {}
        self._indexed: dict[str, int] = {}  # segment -> bytes indexed (up to its first unfinished line)
        self._live: dict[str, int] = {}  # other processes' segments that may grow -> mtime (ns)
        self._folder_mtime: int | None = None  # ns, when last listed; None: list at the next miss
        self._segment: str | None = None  # this process's segment; None: make one at the next append
        self._size = 0

    def lookup(self, key: str) -> Location | None:
        """Where the latest entry of ``key`` is, or None. Indexes the folder on first use and,
        on a miss, what other processes added since (module docstring)."""
        with self._lock:
            found = self._index.get(key)
            if found is None:
                self._catch_up()
                found = self._index.get(key)
            return found

    def stored_keys(self) -> list[str]:
        """Every key with an entry, after indexing every segment's new tail."""
        with self._lock:
            self._listing_changed()
            self._index_tails(self._segments())
            return list(self._index)

    def append(self, key: str, body: bytes) -> str:
        """Append the entry ``key`` → ``body`` (JSON text, UTF-8, no raw LF) to this process's
        segment, making it (and ``folder``) when there is none or it was removed; returns the
        segment's path. Raises OSError when the write fails (the next append then starts a new
        segment)."""
        line = b"".join((key.encode("ascii"), b"\t", body, b"\n"))
        with self._lock:
            fd = self._open()
            offset = self._size
            try:
                try:
                    view = memoryview(line)
                    while view:
                        view = view[os.write(fd, view):]
                finally:
                    os.close(fd)
            except BaseException:
                self._segment = None  # the line may be torn or its end unknown: a new segment
                raise
            self._size += len(line)
            segment = self._segment
            assert segment is not None
            self._indexed[segment] = self._size
            self._index[key] = Location(segment, offset + _KEY_LEN + 1, len(body))
            return segment

    def _open(self) -> int:
        """A descriptor appending to this process's segment: the current one, or a new one
        (and the folder) when there is none or it is gone (the caller holds the lock)."""
        if self._segment is not None:
            try:
                return os.open(self._segment, _APPEND)
            except FileNotFoundError:
                self._segment = None
        os.makedirs(self.folder, exist_ok=True)
        while True:
            name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}"
            path = os.path.join(self.folder, name)
            try:
                fd = os.open(path, _CREATE, 0o600)
            except FileExistsError:
                continue
            self._segment, self._size = path, 0
            self._indexed[path] = 0
            return fd

    def _catch_up(self) -> None:
        """Index what other processes wrote since the last look: every segment when the folder
        changed, else the tails of the live ones (the caller holds the lock)."""
        if self._listing_changed():
            self._index_tails(self._segments())
        elif self._live:
            self._index_tails(list(self._live))

    def _segments(self) -> list[str]:
        """Every segment's path, in name order (creation time first)."""
        try:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(SUFFIX))
        except OSError:
            return []
        return [os.path.join(self.folder, n) for n in names]

    def _listing_changed(self) -> bool:
        """Whether the folder's modification time moved since it was last listed (always True
        the first time; False while the folder does not exist)."""
        try:
            mtime = os.stat(self.folder).st_mtime_ns
        except OSError:
            return False
        if mtime == self._folder_mtime:
            return False
        settled = time.time_ns() - mtime > SETTLED_S * 1e9
        self._folder_mtime = mtime if settled else None
        return True

    def _index_tails(self, paths: list[str]) -> None:
        """Index the unread full lines of ``paths`` (other processes' segments), in order, and
        keep the ones written to within :data:`LIVE_S` as live (the caller holds the lock)."""
        now = time.time_ns()
        for path in paths:
            if path == self._segment:
                continue  # ours: indexed as written
            try:
                st = os.stat(path)
            except OSError:
                self._live.pop(path, None)
                continue
            if now - st.st_mtime_ns < LIVE_S * 1e9:
                self._live[path] = st.st_mtime_ns
            else:
                self._live.pop(path, None)
            done = self._indexed.get(path, 0)
            if st.st_size <= done:
                continue
            try:
                with open(path, "rb") as f:
                    f.seek(done)
                    for found in scan_lines(f, done):
                        if isinstance(found, int):
                            done = found
                            continue
                        held = self._index.get(found[0])
                        if held is None or held.segment <= path:  # an older segment never wins
                            self._index[found[0]] = Location(path, found[1], found[2])
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
