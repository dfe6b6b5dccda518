"""Bounded reading of every input: YAML, JSON, JSONL and CSV files, and response bodies.

Every parser of the tool reads through this module, which enforces four limits before (or
while) building any value, so a hostile or broken file ends with one clear error instead of
exhausting memory or time:

* **file size** (``max_yaml_bytes`` for YAML, ``max_json_bytes`` for JSON, JSONL and CSV),
  checked on the file's size before it is read;
* **field length** (``max_field_chars``): every string value and key, every CSV cell, every
  response body of a target or provider;
* **nesting depth** (``max_input_depth``): lists and mappings inside each other;
* **rows** (``max_input_rows``): the entries of any one list or mapping, the lines of a JSONL
  file, the rows of a CSV file.

YAML anchors (``&name``) and aliases (``*name``) are refused while the file is parsed, before
any node is composed: the instrument never needs them, and a few nested aliases ("billion
laughs") expand a 600-byte file into billions of values.

Each refusal is an :class:`InputLimitError` (a :class:`~empath_gate.errors.ConfigError`: CLI
exit 2, pytest exit 4) naming the file, the line when known, the limit, its value and the
setting that raises it. The limits are settings of the option table (``[tool.empath-gate]``
keys and ``EMPATH_<KEY>`` variables, see README); :func:`current_limits` gives the ones in force.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from empath_gate.errors import ConfigError

MIB = 1024 * 1024


class InputLimits(BaseModel):
    """The limits every input is read under (module docstring). Defaults and why:

    * ``max_yaml_bytes`` 8 MiB: the shipped instrument is under 1 MiB and a layer of about
      1,400 realistic seeds about 3 MB; parsing YAML costs about 100x its size in memory.
    * ``max_json_bytes`` 64 MiB: a results file of 1,000 conversations x 5 runs x 19 metrics
      is about 20 MB; JSON costs about 10x its size in memory.
    * ``max_field_chars`` 200,000: about 50,000 tokens, above any chat reply's output limit and
      hundreds of times the longest instruction or turn of the shipped seeds.
    * ``max_input_depth`` 64: the deepest shipped shape (a results file) nests under 10 levels.
    * ``max_input_rows`` 200,000: five times the 40,000 minimal seeds a layer may hold, twice the
      verdicts of the results file above.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_yaml_bytes: int = Field(8 * MIB, ge=1)
    max_json_bytes: int = Field(64 * MIB, ge=1)
    max_field_chars: int = Field(200_000, ge=1)
    max_input_depth: int = Field(64, ge=1)
    max_input_rows: int = Field(200_000, ge=1)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> InputLimits:
        """The defaults with each ``EMPATH_<FIELD>`` variable of ``env`` (default
        ``os.environ``) applied; ConfigError naming the variable when it is not a positive integer."""
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for name, variable in zip(cls.model_fields, _LIMIT_VARIABLES, strict=True):
            raw = env.get(variable)
            if raw is None or not raw.strip():
                continue
            try:
                values[name] = int(raw)
            except ValueError:
                raise ConfigError(f"environment variable {variable}: {raw!r} is not an integer; "
                                  "set a positive whole number") from None
            if values[name] < 1:
                raise ConfigError(f"environment variable {variable}: must be at least 1")
        return cls(**values)


_configured: InputLimits | None = None


def configure_limits(limits: InputLimits | None) -> None:
    """Make ``limits`` the ones :func:`current_limits` returns (None: back to the environment).
    Settings loading calls it, so ``[tool.empath-gate]`` keys apply to every reader."""
    global _configured
    _configured = limits


_LIMIT_VARIABLES = tuple(f"EMPATH_{name.upper()}" for name in InputLimits.model_fields)
"""The environment variable of each field of :class:`InputLimits`, in field order."""
_from_environment: tuple[tuple[str | None, ...], InputLimits] | None = None
"""The last limits read from the environment and the raw ``EMPATH_*`` values they came from."""


def current_limits() -> InputLimits:
    """The limits set by :func:`configure_limits`, else the defaults with ``EMPATH_*`` applied
    (read on every call; the limits are built again only when a variable changed)."""
    global _from_environment
    if _configured is not None:
        return _configured
    raw = tuple(os.environ.get(n) for n in _LIMIT_VARIABLES)
    last = _from_environment
    if last is not None and last[0] == raw:
        return last[1]
    limits = InputLimits.from_env({n: v for n, v in zip(_LIMIT_VARIABLES, raw, strict=True) if v is not None})
    _from_environment = (raw, limits)
    return limits


class InputLimitError(ConfigError):
    """An input broke a limit (or is a YAML file with an anchor or alias).

    ``source`` names the file (or the body's origin), ``line`` the 1-based line when known,
    ``what`` what is wrong, ``fix`` what to do; ``str()`` is ``source[:line]: what — fix``.
    """

    def __init__(self, source: str, what: str, fix: str, line: int | None = None) -> None:
        self.source, self.what, self.fix, self.line = source, what, fix, line
        loc = source + (f":{line}" if line is not None else "")
        super().__init__(f"{loc}: {what} — {fix}")


def _over(source: str, what: str, limit: str, value: int, line: int | None = None) -> InputLimitError:
    return InputLimitError(
        source, f"{what} is over the limit {limit} = {value:,}",
        f"shorten the input, or raise {limit} ([tool.empath-gate] key or EMPATH_{limit.upper()})", line)


# ----------------------------------------------------------------------------- files


def read_bytes(path: Path, max_bytes: int, limit: str = "max_json_bytes") -> bytes:
    """The bytes of ``path``, refusing a file over ``max_bytes`` before reading it (and one that
    grows while read). Raises InputLimitError, or OSError when the file cannot be read."""
    with Path(path).open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise _over(str(path), f"the file is {size:,} bytes, which", limit, max_bytes)
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _over(str(path), "the file", limit, max_bytes)
    return data


def read_text(path: Path, limits: InputLimits | None = None, *, yaml_file: bool = False) -> str:
    """The UTF-8 text of ``path`` (a byte-order mark dropped) within the size limit
    (``max_yaml_bytes`` when ``yaml_file``, else ``max_json_bytes``). Raises InputLimitError,
    OSError (missing, unreadable) or UnicodeDecodeError (not UTF-8)."""
    lim = limits or current_limits()
    if yaml_file:
        return read_bytes(path, lim.max_yaml_bytes, "max_yaml_bytes").decode("utf-8-sig")
    return read_bytes(path, lim.max_json_bytes).decode("utf-8-sig")


def check_tree(data: Any, source: str, limits: InputLimits | None = None) -> Any:
    """Check parsed JSON-like ``data`` (dicts, lists, scalars) against the depth, row and field
    limits without recursion; returns ``data``. Raises InputLimitError naming the JSON pointer."""
    lim = limits or current_limits()
    stack: list[tuple[Any, int, str]] = [(data, 0, "")]
    while stack:
        value, depth, ptr = stack.pop()
        if isinstance(value, str):
            if len(value) > lim.max_field_chars:
                raise _over(source, f"the text at {ptr or '/'} ({len(value):,} characters)",
                            "max_field_chars", lim.max_field_chars)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth >= lim.max_input_depth:
            raise _over(source, f"the nesting at {ptr or '/'}", "max_input_depth", lim.max_input_depth)
        if len(value) > lim.max_input_rows:
            raise _over(source, f"the {len(value):,} entries at {ptr or '/'}", "max_input_rows",
                        lim.max_input_rows)
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and len(k) > lim.max_field_chars:
                    raise _over(source, f"a key at {ptr or '/'}", "max_field_chars", lim.max_field_chars)
                stack.append((v, depth + 1, f"{ptr}/{k}"))
        else:
            stack.extend((v, depth + 1, f"{ptr}/{i}") for i, v in enumerate(value))
    return data


def loads_json(text: str, source: str, limits: InputLimits | None = None, *, keep_surrogates: bool = False,
               **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)`` checked by :func:`check_tree`, every string of it
    :func:`well_formed` (a lone ``\\ud83d`` escape becomes U+FFFD). With ``keep_surrogates`` the
    strings come back as decoded, surrogates left in: for pieces that are joined first and then
    made :func:`well_formed` (and :func:`well_formed_tree` for the rest), so a pair split
    between two documents, e.g. two streamed events, is one character. Raises
    InputLimitError, or ``json.JSONDecodeError`` (a ValueError) for text that is not JSON."""
    lim = limits or current_limits()
    if len(text) > lim.max_json_bytes:
        raise _over(source, "the text", "max_json_bytes", lim.max_json_bytes)
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise _over(source, "the nesting", "max_input_depth", lim.max_input_depth) from None
    data = check_tree(data, source, lim)
    return well_formed_tree(data) if not keep_surrogates and _may_hold_surrogate(text) else data


def read_json(path: Path, limits: InputLimits | None = None, **kwargs: Any) -> Any:
    """The JSON document of ``path`` within every limit (:func:`read_text`, :func:`loads_json`)."""
    lim = limits or current_limits()
    return loads_json(read_text(path, lim), str(path), lim, **kwargs)


class JsonLineError(ValueError):
    """A JSONL line that is not JSON: ``line`` is 1-based, ``msg`` the decoder's message."""

    def __init__(self, source: str, line: int, msg: str) -> None:
        super().__init__(f"{source}:{line}: not valid JSON ({msg})")
        self.line, self.msg = line, msg


def iter_jsonl(text: str, source: str, limits: InputLimits | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of JSONL ``text``, each checked by
    :func:`loads_json`; InputLimitError past ``max_input_rows`` lines, JsonLineError for a line
    that is not JSON."""
    lim = limits or current_limits()
    rows = 0
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        rows += 1
        if rows > lim.max_input_rows:
            raise _over(source, "the number of lines", "max_input_rows", lim.max_input_rows, n)
        try:
            yield n, loads_json(line, f"{source}:{n}", lim)
        except json.JSONDecodeError as exc:
            raise JsonLineError(source, n, exc.msg) from None


def read_jsonl(path: Path, limits: InputLimits | None = None) -> Iterator[tuple[int, Any]]:
    """:func:`iter_jsonl` over the text of ``path`` (size-checked by :func:`read_text`)."""
    lim = limits or current_limits()
    return iter_jsonl(read_text(path, lim), str(path), lim)


def iter_csv(text: str, source: str, limits: InputLimits | None = None
             ) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, row)`` of CSV ``text`` with a header row (numbers count the header as
    row 1), every cell within ``max_field_chars`` and at most ``max_input_rows`` rows.
    Raises InputLimitError, or ConfigError naming the row for malformed CSV."""
    lim = limits or current_limits()
    reader = csv.DictReader(io.StringIO(text, newline=""))
    n = 1
    try:
        for n, row in enumerate(reader, start=2):
            if n - 1 > lim.max_input_rows:
                raise _over(source, "the number of rows", "max_input_rows", lim.max_input_rows, n)
            for cell in row.values():
                cells = cell if isinstance(cell, list) else [cell]
                if any(isinstance(c, str) and len(c) > lim.max_field_chars for c in cells):
                    raise _over(source, "a cell", "max_field_chars", lim.max_field_chars, n)
            yield n, row
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise _over(source, "a cell", "max_field_chars", lim.max_field_chars, n + 1) from None
        raise ConfigError(f"{source}:{n + 1}: not valid CSV ({exc})") from None


def csv_header(text: str) -> list[str]:
    """The column names of CSV ``text`` (its first row; ``[]`` for empty text)."""
    return next(csv.reader(io.StringIO(text, newline="")), [])


def read_csv(path: Path, limits: InputLimits | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_csv` over the text of ``path`` (size-checked by :func:`read_text`)."""
    lim = limits or current_limits()
    return iter_csv(read_text(path, lim), str(path), lim)


def well_formed(text: str) -> str:
    """``text`` as it can be written in UTF-8: two surrogate code points that form a valid
    UTF-16 pair (high U+D800-U+DBFF, then low U+DC00-U+DFFF) joined into the one character
    they encode, and every other surrogate replaced by U+FFFD, the replacement character (The
    Unicode Standard, ch. 3.9); ``text`` itself when it has none. A lone surrogate comes from
    a JSON ``\\ud83d`` escape, e.g. a bot that cut its text inside an emoji by UTF-16 units.
    UTF-8 cannot hold a surrogate, so without this such a reply could not be cached, sent on
    in the next request or written. A pair split over two JSON documents (two streamed
    events) is joined when they are decoded with ``keep_surrogates`` (:func:`loads_json`) and
    their texts joined before this runs."""
    if text.isascii():  # no surrogate; no copy made (most texts, every cache key)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


_SURROGATE_ESCAPE = re.compile("\\\\u[dD][89a-fA-F]")
"""A ``\\u`` escape of a surrogate in JSON text (``json.loads`` decodes it to one)."""


def _may_hold_surrogate(text: str) -> bool:
    """Whether JSON ``text`` can decode to a string holding a surrogate: it has one raw, or a
    ``\\u`` escape of one (an escaped backslash before ``u`` also matches; the walk then finds
    nothing). ASCII text without ``\\u`` is answered without a scan."""
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def well_formed_tree(value: Any) -> Any:
    """``value`` (parsed JSON: dicts, lists, tuples, scalars) with :func:`well_formed` applied
    to every string, keys included (a dict comes back a plain dict, a list a list, a tuple a
    tuple); other values (numbers, objects) as they are."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):  # a plain str value is cleaned here, without a call of its own
        return {(well_formed(k) if isinstance(k, str) else k):
                (well_formed(v) if type(v) is str else well_formed_tree(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [well_formed_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(well_formed_tree(v) for v in value)
    return value


def check_body(text: str, source: str, limits: InputLimits | None = None) -> str:
    """``text`` (a response body of a target or provider, or a reply text taken from one) when
    within ``max_field_chars``, made :func:`well_formed`; InputLimitError naming ``source``
    otherwise. Escapes inside a JSON body are cleaned when it is decoded (:func:`loads_json`)."""
    lim = limits or current_limits()
    if len(text) > lim.max_field_chars:
        raise _over(source, f"the response body ({len(text):,} characters)", "max_field_chars",
                    lim.max_field_chars)
    return well_formed(text)


# ----------------------------------------------------------------------------- YAML

_Parser: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def checked_events(loader: Any, source: str, limits: InputLimits) -> Iterator[Any]:
    """The parse events of ``loader`` (a PyYAML loader or parser over one text), each checked
    before it is yielded: an anchor or an alias, a scalar over ``max_field_chars``, nesting
    over ``max_input_depth`` or a list or mapping over ``max_input_rows`` entries raises
    InputLimitError with the 1-based line. ``yaml.YAMLError`` (a syntax error) propagates.
    The one check of :func:`scan_yaml` and of the instrument's event reader
    (:mod:`empath_gate.instrument.yaml_events`)."""
    max_chars, max_depth, max_rows = limits.max_field_chars, limits.max_input_depth, limits.max_input_rows
    outer: list[tuple[int, int]] = []  # (count, cap) of the enclosing open collections
    count, cap = 0, -1  # node events inside the innermost open collection and the most it may
    # hold (a mapping entry is two events); cap -1: none is open
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    starts = {yaml.SequenceStartEvent: 1, yaml.MappingStartEvent: 2}
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for event in iter(loader.get_event, None):
        kind = type(event)
        if kind is scalar or kind in starts or kind is alias:
            if event.anchor is not None:
                line = _line(event)
                if kind is alias:
                    raise InputLimitError(source, f"YAML alias *{event.anchor} is not allowed",
                                          "write the value out in full (anchors and aliases are refused)",
                                          line)
                raise InputLimitError(source, f"YAML anchor &{event.anchor} is not allowed",
                                      "write the value out in full (anchors and aliases are refused)", line)
            if cap >= 0:
                count += 1
                if count > cap:
                    raise _over(source, "a list or mapping", "max_input_rows", max_rows, _line(event))
            if kind is scalar:
                if len(event.value) > max_chars:
                    raise _over(source, f"a value of {len(event.value):,} characters", "max_field_chars",
                                max_chars, _line(event))
            else:
                outer.append((count, cap))
                count, cap = 0, max_rows * starts[kind]
                if len(outer) > max_depth:
                    raise _over(source, "the nesting", "max_input_depth", max_depth, _line(event))
        elif kind in ends and outer:
            count, cap = outer.pop()
        yield event


def _line(event: Any) -> int | None:
    return event.start_mark.line + 1 if event.start_mark is not None else None


def scan_yaml(text: str, source: str, limits: InputLimits | None = None, *, fast: bool = True) -> None:
    """Walk the parse events of YAML ``text`` (no node is composed) and refuse an anchor or an
    alias, a scalar over ``max_field_chars``, nesting over ``max_input_depth`` and a list or
    mapping over ``max_input_rows`` entries (:func:`checked_events`); InputLimitError with the
    1-based line. Syntax errors are left to the parser that follows (``yaml.YAMLError`` ends
    the scan quietly)."""
    lim = limits or current_limits()
    loader = (_Parser if fast else yaml.SafeLoader)(text)
    try:
        for _ in checked_events(loader, source, lim):
            pass
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()


def read_yaml(path: Path, limits: InputLimits | None = None) -> Any:
    """The data of the YAML file ``path`` (SafeLoader types) after :func:`scan_yaml`; for YAML
    inputs outside the instrument (whose strict reader is :mod:`empath_gate.instrument.yaml_io`).
    Raises InputLimitError, ``yaml.YAMLError``, OSError or UnicodeDecodeError."""
    lim = limits or current_limits()
    text = read_text(path, lim, yaml_file=True)
    scan_yaml(text, str(path), lim)
    return yaml.load(text, Loader=_Parser)  # a SafeLoader (C or Python)


__all__ = [
    "InputLimitError",
    "InputLimits",
    "JsonLineError",
    "check_body",
    "check_tree",
    "checked_events",
    "configure_limits",
    "csv_header",
    "current_limits",
    "iter_csv",
    "iter_jsonl",
    "loads_json",
    "read_bytes",
    "read_csv",
    "read_json",
    "read_jsonl",
    "read_text",
    "read_yaml",
    "scan_yaml",
    "well_formed",
    "well_formed_tree",
]
