"""Escaping of untrusted text for GitHub-flavoured markdown, HTML and the terminal or CI log
(pure functions).

Everything a chatbot, an auditor model or a judge wrote is untrusted: a reply can carry
markdown (headings, emphasis, tables, links, images), raw HTML (``<img onerror=...>``,
``<details>``), autolinks (``https://...``, ``www.``), @-mentions that would notify people,
issue references (``#12``, ``owner/repo#12``) and bidirectional-override characters that make
text read differently from how it is stored. None of it may take effect in a pull-request
comment, a job summary or the HTML report.

:func:`md_text` turns any string into markdown *text*: inline, one line, safe inside a table
cell. :func:`md_code` wraps a trusted identifier (a slug, a hash, a path we wrote) in a code
span. :func:`html_text` escapes for HTML element content and attribute values.

Method (GitHub's renderer, cmark-gfm plus GitHub's post-filters):

* the ASCII punctuation that has an inline markdown meaning (`` \\ ` * _ [ ] | ~ $ # ``) is
  backslash-escaped (CommonMark 0.30, section 2.4: any ASCII punctuation may be); a leading
  ``-``, ``+``, ``=``, ``:`` or ``1.``/``1)`` (block syntax at the start of a line) is escaped
  too. Parentheses and ``!`` need no escape once ``[`` and ``]`` are escaped (no link or
  image can open);
* ``<``, ``>`` and ``&`` become character references, so no tag or entity reaches the output
  (GitHub's sanitizer would drop many tags, but not all, e.g. ``<details>``, ``<sub>``);
* ``@`` followed by a word character, ``#`` followed by a digit, ``://`` and ``www.`` get a
  zero-width space (``&#8203;``) after the first character: GitHub's mention, issue-reference
  and autolink filters match on text nodes, so a zero-width space breaks them while the text
  reads the same (the trick Dependabot uses for @-mentions);
* newlines and tabs become spaces (a table row is one line); other C0/C1 control characters
  and the bidirectional overrides U+202A-U+202E, U+2066-U+2069 (CVE-2021-42574, "Trojan
  Source") are removed.

:func:`log_text` makes text inert in a terminal and in a GitHub Actions log: the runner reads
a line as a workflow command (``::error::``, ``::add-mask::``, ``::stop-commands::``…) when it
starts with ``::`` after leading whitespace, and the legacy ``##[command]`` form anywhere on a
line (actions/runner, ``ActionCommand.TryParseV2`` and ``TryParse``); a terminal obeys escape
sequences (CSI ``ESC [``, OSC ``ESC ]`` hyperlinks and titles) and carriage returns that
overwrite a line. So every line start of ``::`` gets a backslash before it (``\\::error``),
``##[`` becomes ``#\\#[``, CR and the Unicode line separators become newlines, and the other C0/C1
control characters (ESC among them) and bidirectional overrides are removed; tabs and newlines
stay. :func:`log_block` adds, under GitHub Actions, the ``::stop-commands::<token>`` /
``::<token>::`` pair around a block of model or target text (GitHub docs, "Workflow commands:
Stopping and starting workflow commands"), with a fresh random token each time.
"""

from __future__ import annotations

import html
import os
import re
import secrets as _random
from collections.abc import Mapping

ZWSP = "&#8203;"
"""Zero-width space as a character reference: breaks mention/reference/autolink matching."""

_MD_PUNCT = frozenset("\\`*_[]|~$")
_LINE_START = re.compile(r"^(\d{1,9})([.)])")
_BIDI_AND_CONTROL = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_WHITESPACE_RUN = re.compile(r"[ \t\r\n\u2028\u2029\u0085]+")


def strip_controls(text: str) -> str:
    """Remove C0/C1 control characters (except tab/newline/CR) and bidirectional
    overrides/isolates and marks (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)."""
    return _BIDI_AND_CONTROL.sub("", text)


def one_line(text: str) -> str:
    """Collapse every run of whitespace (including newlines) into one space and strip."""
    return _WHITESPACE_RUN.sub(" ", text).strip()


def truncate(text: str, max_chars: int, ellipsis: str = "…") -> str:
    """``text`` cut to at most ``max_chars`` characters (the ellipsis included) on a
    character boundary. Raises ValueError when ``max_chars`` < 1."""
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - len(ellipsis))] + ellipsis


def md_text(text: str, *, max_chars: int | None = None) -> str:
    """Untrusted ``text`` as inert, single-line GitHub markdown (see the module docstring).

    ``max_chars`` truncates the *source* text before escaping (the escaped output is longer:
    up to ~9 characters per input character for ``@``/``#``). The result contains no newline,
    no ``<``/``>``, no unescaped markdown punctuation, and no working mention, issue reference
    or autolink.
    """
    s = one_line(strip_controls(text))
    if max_chars is not None:
        s = truncate(s, max_chars)
    out: list[str] = []
    n = len(s)
    for i, ch in enumerate(s):
        nxt = s[i + 1] if i + 1 < n else ""
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "@":
            out.append("@" + ZWSP if nxt and (nxt.isalnum() or nxt in "_-") else "@")
        elif ch == "#":
            out.append("\\#" + ZWSP if nxt.isdigit() else "\\#")
        elif ch == ":" and s.startswith("//", i + 1):
            out.append("\\:" + ZWSP)
        elif ch in "wW" and s[i : i + 4].lower() == "www." and (i == 0 or not s[i - 1].isalnum()):
            out.append(ch + ZWSP)
        elif ch in _MD_PUNCT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    res = "".join(out)
    if res[:1] in ("-", "+", "=", ":"):
        res = "\\" + res
    return _LINE_START.sub(r"\1\\\2", res)


def md_code(text: str) -> str:
    """A code span holding ``text`` (meant for identifiers, hashes and paths the tool wrote).

    Uses a backtick fence longer than any backtick run inside, pads with spaces when the text
    starts or ends with a backtick, strips control characters and newlines, and escapes ``|``
    (GitHub splits table cells on ``|`` even inside code spans). Empty text gives ``""``.
    """
    s = one_line(strip_controls(text))
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s.replace('|', chr(92) + '|')}{pad}{fence}"


def md_link(label: str, url: str) -> str:
    """A markdown link with an escaped label, or just the escaped label when ``url`` is not an
    ``http(s)://`` URL. Parentheses, spaces, ``<``, ``>`` and quotes in the URL are
    percent-encoded so the link cannot break out."""
    if not re.match(r"^https?://[^\s]+$", url):
        return md_text(label)
    safe = (
        url.replace("(", "%28")
        .replace(")", "%29")
        .replace("<", "%3C")
        .replace(">", "%3E")
        .replace('"', "%22")
        .replace("'", "%27")
        .replace("|", "%7C")
    )
    return f"[{md_text(label)}]({safe})"


def html_text(text: str) -> str:
    """``text`` escaped for HTML element content or a quoted attribute value (``&``, ``<``,
    ``>``, ``"`` and ``'``), with control and bidirectional-override characters removed."""
    return html.escape(strip_controls(text), quote=True)


def html_comment_safe(text: str) -> str:
    """``text`` made safe inside an HTML comment: no ``--`` (which could close it early) and
    no ``>``; used for the hidden marker. Slugs pass through unchanged."""
    return strip_controls(text).replace("--", "-").replace(">", "").replace("<", "")


_LOG_BREAKS = re.compile("\r\n?|[\u2028\u2029]")
_LOG_COMMAND_START = re.compile(r"^([^\S\n]*)::", re.MULTILINE)


def log_text(text: str) -> str:
    """Untrusted ``text`` made inert for a terminal or a CI log (module docstring): no line
    starts with ``::`` (after whitespace), no ``##[``, no control, escape or bidirectional
    character; newlines and tabs are kept, CR and U+2028/U+2029 become newlines."""
    s = strip_controls(_LOG_BREAKS.sub("\n", text))
    s = _LOG_COMMAND_START.sub(lambda m: m.group(1) + "\\::", s)
    return s.replace("##[", "#\\#[")


def github_actions(env: Mapping[str, str] | None = None) -> bool:
    """True under GitHub Actions (``GITHUB_ACTIONS=true``, set by the runner)."""
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def log_block(text: str, *, env: Mapping[str, str] | None = None, token: str | None = None) -> str:
    """``text`` made inert (:func:`log_text`) and, under GitHub Actions, wrapped in
    ``::stop-commands::<token>`` and ``::<token>::`` lines so the runner ignores any workflow
    command inside. ``token``: default a fresh random 32-hex-digit token (it must not be
    guessable from the text, or the text could resume commands itself). The result ends with
    a newline when ``text`` did or when it is wrapped."""
    safe = log_text(text)
    if not github_actions(env) or not safe.strip():
        return safe
    tok = token or _random.token_hex(16)
    body = safe if safe.endswith("\n") else safe + "\n"
    return f"::stop-commands::{tok}\n{body}::{tok}::\n"
