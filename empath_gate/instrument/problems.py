"""Where an instrument entry was read, and the problem lines the loader collects.

Every problem reads ``path/to/file.yaml:LINE: /json/pointer: what is wrong — what to fix``;
paths are shown relative to the working directory when they are inside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from empath_gate.errors import SuiteError
from empath_gate.instrument.diagnostics import Diagnostic
from empath_gate.instrument.yaml_io import YamlDocument, pointer


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Origin:
    """Where an entry was read: its document and JSON pointer."""

    doc: YamlDocument
    ptr: str

    @property
    def line(self) -> int:
        """The 1-based line of ``ptr`` in the document (its closest existing parent's line)."""
        return self.doc.line_of(self.ptr)

    def where(self) -> str:
        """``file:line``, for naming the other side of a duplicate."""
        return f"{display_path(self.doc.path)}:{self.line}"

    def child(self, *parts: str | int) -> Origin:
        """The origin of a key or index below this one."""
        return Origin(self.doc, self.ptr + pointer(list(parts)))


@dataclass
class Problems:
    """Collects problem lines; :meth:`raise_if_any` raises one SuiteError with all of them.
    Each line is kept once, in the order first seen (jsonschema reports a mapping missing two
    required keys as two errors that each name both keys)."""

    lines: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set, repr=False)

    def _add(self, line: str) -> None:
        if line not in self._seen:
            self._seen.add(line)
            self.lines.append(line)

    def at(self, origin: Origin, what: str, fix: str | None = None) -> None:
        """A problem at an entry: ``file:line: /pointer: what — fix``."""
        ptr = origin.ptr or "/"
        text = f"{origin.where()}: {ptr}: {what}"
        self._add(f"{text} — {fix}" if fix else text)

    def file(self, path: Path, what: str, fix: str | None = None, line: int | None = None) -> None:
        """A problem with a whole file (or one line of it): ``file[:line]: what — fix``."""
        loc = display_path(path) + (f":{line}" if line is not None else "")
        self._add(f"{loc}: {what}" + (f" — {fix}" if fix else ""))

    def diagnostics(self, doc: YamlDocument, diags: Iterable[Diagnostic]) -> None:
        """Schema or model diagnostics of ``doc``, each at its pointer."""
        for ptr, what, fix in diags:
            self.at(Origin(doc, ptr), what, fix)

    def raise_if_any(self) -> None:
        """Raise SuiteError with every collected line, if there is any."""
        if self.lines:
            raise SuiteError(self.lines)
