"""The cache's segment files: torn lines, other processes' entries, one-file entries of earlier
releases, a failed write (``empath_gate.llm.segments``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from empath_gate.llm import segments
from empath_gate.llm.cache import CACHE_FORMAT, SEGMENTS, Cache, cache_key

REPO = Path(__file__).resolve().parents[2]


def _key(i: int) -> str:
    return cache_key({"i": i})


def test_a_torn_or_foreign_line_is_a_miss_and_the_lines_after_it_still_read(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FORMAT / SEGMENTS
    folder.mkdir(parents=True)
    good = json.dumps({"content": "kept"})
    (folder / "00000000000000000001-1-aaaaaaaa.seg").write_text(
        f"{_key(1)}\t{{\"content\": \"to\n"  # cut mid-value: a line of its own, not JSON
        f"not a key\t{good}\n"
        f"{_key(2)}\t{good}\n"
        f"{_key(3)}\t{good}",  # no LF: a writer still at it, or one that crashed
        encoding="utf-8",
    )
    cache = Cache(tmp_path)
    assert cache.get(_key(1)) is None and cache.get(_key(3)) is None
    assert cache.get(_key(2)) == {"content": "kept"}
    assert set(cache.entries()) == {_key(2)}
    assert (cache.hits, cache.misses) == (1, 2)


def test_a_later_write_of_a_key_wins_in_and_across_processes(tmp_path: Path) -> None:
    first, again = Cache(tmp_path), Cache(tmp_path)
    first.put(_key(1), {"content": "old"})
    again.put(_key(1), {"content": "new"})  # the same process's store: one segment, indexed as written
    assert first.get(_key(1)) == {"content": "new"}
    assert len(list(tmp_path.rglob("*.seg"))) == 1
    code = (
        "import sys; from empath_gate.llm.cache import Cache, cache_key; "
        "c = Cache(sys.argv[1]); print(c.get(cache_key({'i': 1}))['content']); "
        "c.put(cache_key({'i': 1}), {'content': 'newest'}); c.put(cache_key({'i': 2}), {'content': 'two'})"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         cwd=REPO, check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.strip() == "new"  # the other process read this one's entry
    # its segment is newer: seen on this process's next miss, and its write of key 1 wins
    assert first.get(_key(2)) == {"content": "two"}
    assert first.get(_key(1)) == {"content": "newest"}
    assert Cache(tmp_path).entries() == {_key(1): {"content": "newest"}, _key(2): {"content": "two"}}


def test_one_file_entries_of_earlier_releases_are_still_read(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    legacy = cache.path(_key(1))
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"content": "from before"}), encoding="utf-8")
    assert cache.get(_key(1)) == {"content": "from before"}
    cache.put(_key(1), {"content": "rewritten"})
    assert cache.get(_key(1)) == {"content": "rewritten"}
    assert legacy.is_file()  # never written or removed
    assert Cache(tmp_path).entries() == {_key(1): {"content": "rewritten"}}


def test_an_entry_over_the_json_size_limit_is_a_miss(tmp_path: Path) -> None:
    from empath_gate.bounded import InputLimits, configure_limits, current_limits

    cache = Cache(tmp_path)
    cache.put(_key(1), {"content": "x" * 5000})
    before = current_limits()
    configure_limits(InputLimits(max_json_bytes=1000))
    try:
        assert cache.get(_key(1)) is None
    finally:
        configure_limits(before)
    assert cache.get(_key(1)) == {"content": "x" * 5000}


def test_a_failed_write_closes_the_segment_and_the_next_starts_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path)
    cache.put(_key(1), {"content": "one"})
    real_write = os.write

    def half(fd: int, data: memoryview | bytes) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half)  # segments call os.write
    with pytest.raises(OSError, match="No space"):
        cache.put(_key(2), {"content": "two"})
    monkeypatch.setattr(os, "write", real_write)
    cache.put(_key(3), {"content": "three"})
    assert len(list(tmp_path.rglob("*.seg"))) == 2
    fresh = segments.SegmentStore(str(tmp_path / CACHE_FORMAT / SEGMENTS))  # as a new process sees it
    assert sorted(fresh.stored_keys()) == sorted([_key(1), _key(3)])
    assert cache.get(_key(2)) is None and cache.get(_key(3)) == {"content": "three"}


@pytest.mark.parametrize("inherited", [False, True])
def test_a_forked_child_writes_a_segment_of_its_own(tmp_path: Path, inherited: bool) -> None:
    """Also through the Cache object it inherited: the parent's entries stay the parent's."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    cache = Cache(tmp_path)
    cache.put(_key(1), {"content": "parent"})
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's exit code is the assertion
        (cache if inherited else Cache(tmp_path)).put(_key(2), {"content": "child reply, longer"})
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(list(tmp_path.rglob("*.seg"))) == 2
    cache.put(_key(3), {"content": "parent again"})
    assert cache.get(_key(1)) == {"content": "parent"}
    assert cache.get(_key(3)) == {"content": "parent again"}
    assert cache.get(_key(2)) == {"content": "child reply, longer"}


def test_lines_another_process_appends_to_a_segment_already_indexed_are_seen(tmp_path: Path) -> None:
    folder = tmp_path / CACHE_FORMAT / SEGMENTS
    folder.mkdir(parents=True)
    foreign = folder / "00000000000000000001-99999-aaaaaaaa.seg"  # a live writer's segment
    foreign.write_text(f"{_key(1)}\t{{\"content\": \"one\"}}\n", encoding="utf-8")
    cache = Cache(tmp_path)
    assert cache.get(_key(1)) == {"content": "one"}
    assert cache.get(_key(2)) is None
    with foreign.open("a", encoding="utf-8") as f:  # the folder's time does not move
        f.write(f"{_key(2)}\t{{\"content\": \"two\"}}\n")
    assert cache.get(_key(2)) == {"content": "two"}


def test_a_removed_root_is_made_again_by_the_next_write(tmp_path: Path) -> None:
    import shutil

    cache = Cache(tmp_path / "c")
    cache.put(_key(1), {"content": "one"})
    shutil.rmtree(tmp_path / "c")
    Cache(tmp_path / "c").put(_key(2), {"content": "two"})
    assert cache.get(_key(2)) == {"content": "two"} and cache.get(_key(1)) is None
    assert len(list((tmp_path / "c").rglob("*.seg"))) == 1


def test_no_descriptor_stays_open_per_root(tmp_path: Path) -> None:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("no /proc/self/fd here")
    before = len(list(fds.iterdir()))
    for i in range(40):
        cache = Cache(tmp_path / str(i))
        cache.put(_key(i), {"content": str(i)})
        assert cache.get(_key(i)) == {"content": str(i)}
    assert len(list(fds.iterdir())) <= before


def test_an_invalid_key_is_a_miss_to_get_and_an_error_to_put(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    assert cache.get("0F" * 32) is None and cache.misses == 1
    with pytest.raises(ValueError, match="not a cache key"):
        cache.put("0F" * 32, {"content": "x"})


@pytest.mark.parametrize("chunk", [1, 7, 65, 66, 1 << 20])
def test_scanning_finds_the_same_lines_whatever_the_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Lines longer than a chunk, lines cut at the key, junk, an unfinished last line."""
    import io

    big = json.dumps({"content": "y" * 3000})
    lines = [f"{_key(1)}\t{big}\n", "junk\n", f"{_key(2)}\t{{}}\n", "\n", f"{_key(3)}\t\n",
             f"{_key(4)}x{{}}\n", f"{_key(5)}\t{{\"a\": 1}}\n", f"{_key(6)}\t{{\"cut"]
    data = "".join(lines).encode("utf-8")
    monkeypatch.setattr(segments, "_READ_CHUNK", chunk)
    out = list(segments.scan_lines(io.BytesIO(data), 0))
    found = {k: data[o:o + n] for k, o, n in out[:-1]}  # type: ignore[misc]
    assert found == {_key(1): big.encode(), _key(2): b"{}", _key(5): b'{"a": 1}'}
    assert out[-1] == data.index(_key(6).encode())
    tail = data.index(_key(2).encode())
    again = list(segments.scan_lines(io.BytesIO(data[tail:]), tail))
    assert [x[0] for x in again[:-1]] == [_key(2), _key(5)] and again[-1] == out[-1]  # type: ignore[index]


def test_a_cache_without_one_file_entries_is_not_probed_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from empath_gate.llm import cache as cache_mod

    opened: list[Path] = []
    monkeypatch.setattr(cache_mod, "read_json", lambda path: opened.append(path))
    fresh = Cache(tmp_path / "fresh")
    fresh.put(_key(1), {"content": "one"})
    assert fresh.get(_key(2)) is None and fresh.get(_key(3)) is None and opened == []
    old = Cache(tmp_path / "old")
    old.path(_key(9)).parent.mkdir(parents=True)  # a shard folder of an earlier release
    assert old.get(_key(2)) is None and opened == [old.path(_key(2))]


def test_an_older_runs_entry_never_replaces_this_process_write(tmp_path: Path) -> None:
    """A refresh run writes before it ever reads: the older segment, indexed later, loses."""
    folder = tmp_path / CACHE_FORMAT / SEGMENTS
    folder.mkdir(parents=True)
    (folder / "00000000000000000001-99999-aaaaaaaa.seg").write_text(
        f"{_key(1)}\t{{\"content\": \"old run\"}}\n", encoding="utf-8")
    Cache(tmp_path, mode="refresh").put(_key(1), {"content": "this run"})
    cache = Cache(tmp_path)
    assert cache.get(_key(2)) is None  # a miss indexes the folder
    assert cache.get(_key(1)) == {"content": "this run"}
    assert cache.entries()[_key(1)] == {"content": "this run"}


def test_a_root_reached_through_a_symlink_shares_one_store(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    a, b = Cache(tmp_path / "real"), Cache(tmp_path / "alias")
    a.put(_key(1), {"content": "first"})
    b.put(_key(1), {"content": "second"})
    assert a.get(_key(1)) == b.get(_key(1)) == {"content": "second"}


def test_a_failed_close_starts_a_new_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache(tmp_path)
    cache.put(_key(1), {"content": "one"})
    real_close = os.close

    def failing(fd: int) -> None:
        real_close(fd)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "close", failing)
    with pytest.raises(OSError, match="Input/output"):
        cache.put(_key(2), {"content": "two"})
    monkeypatch.setattr(os, "close", real_close)
    cache.put(_key(3), {"content": "three, after the failure"})
    assert cache.get(_key(3)) == {"content": "three, after the failure"}
    assert len(list(tmp_path.rglob("*.seg"))) == 2


def test_mode_off_reads_nothing_not_even_entries(tmp_path: Path) -> None:
    Cache(tmp_path).put(_key(1), {"content": "one"})
    assert Cache(tmp_path, mode="off").entries() == {}
    assert Cache(tmp_path).entries() == {_key(1): {"content": "one"}}
