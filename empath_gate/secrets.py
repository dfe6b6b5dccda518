"""Secrets: the one place that knows which text is a credential and takes it out of output.

Everything the tool writes (results, transcripts, the reply cache, the HTML and markdown
reports, the terminal and the CI log) passes through :func:`redact` or :func:`scrub` at its
write edge, so a provider error that echoes a header, a bot that repeats its own token or a
judge reply that quotes a key never reaches a file or a log in clear.

What counts as a secret:

* **registered values** (:func:`register_environment`, called once at start by
  :func:`~empath_gate.settings.load_settings`, and lazily from ``os.environ`` on first use):
  every value of at least :data:`MIN_SECRET_CHARS` characters of a header from
  ``EMPATH_TARGET_HEADERS`` (a JSON object) and ``EMPATH_TARGET_HEADER_<NAME>``, the
  credential after a ``Bearer``/``Basic``/``Token`` scheme in such a value, and every value of
  a credential-looking environment variable (:func:`is_credential_variable`: names holding
  ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``CREDENTIAL``, ``AUTH`` as a word,
  ``COOKIE``, ``SIGNATURE``), plus role API keys passed in code. Values are only ever added
  during a process, never removed;
* **shapes**, whatever their source: the credential after ``Bearer``, ``Basic`` or ``Token``;
  ``sk-…`` (OpenAI/Anthropic style) and ``AIza…`` (Google) keys; the value of a
  ``api_key``/``password``/``client_secret``/``access_token`` field written as ``name: value`` or
  ``name=value``; URL user-info (``scheme://user:password@``); and the values of
  credential-looking query parameters (``api_key``, ``key``, ``token``, ``sig`` and the
  like, :data:`CREDENTIAL_QUERY_PARAMS`).

Each is replaced by :data:`PLACEHOLDER`. The minimum length of 8 characters (the issue's
rule) keeps short values such as ``1`` or ``true`` from blanking ordinary words.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from pydantic import BaseModel

PLACEHOLDER = "<redacted>"
"""What replaces a secret in text (plain text, JSON and the data behind the reports)."""

HTML_PLACEHOLDER = "&lt;redacted&gt;"
"""The placeholder inside already-rendered HTML or markdown (reads as ``<redacted>``)."""

MIN_SECRET_CHARS = 8
"""Shortest registered value treated as a secret (issue rule: "at least 8 characters")."""

CREDENTIAL_QUERY_PARAMS = (
    "api_key", "api-key", "apikey", "key", "token", "access_token", "auth_token", "id_token",
    "sig", "signature", "x-amz-signature", "secret", "client_secret", "password", "auth",
)
"""Query parameters whose values are credentials (``api_key``, ``key``, ``token``, ``sig`` are
the issue's; the others are the same idea under other common names)."""

_CREDENTIAL_VARIABLE = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|COOKIE|SIGNATURE|(?:^|_)AUTH(?:_|$)|AUTHORIZATION",
    re.IGNORECASE,
)
_NOT_CREDENTIAL_VARIABLE = frozenset({"SSH_AUTH_SOCK", "XAUTHORITY", "PYTHONHASHSEED"})
_HEADER_PREFIX = "EMPATH_TARGET_HEADER_"
_HEADERS_JSON = "EMPATH_TARGET_HEADERS"
_SCHEME = re.compile(r"^\s*(?:bearer|basic|token)\s+(\S+)\s*$", re.IGNORECASE)

_QUERY_NAMES = "|".join(re.escape(p) for p in CREDENTIAL_QUERY_PARAMS)
_FIELD_NAMES = (
    "api_key", "api-key", "apikey", "access_token", "access-token", "auth_token", "auth-token",
    "client_secret", "client-secret", "password", "passwd",
)
_CAMEL = ("apiKey", "accessToken", "authToken", "clientSecret")


def _variants(*words: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for w in words for v in (w, w.upper(), w.capitalize())))


_WORD_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (_variants("bearer"), re.compile(r"(?i:bearer)\s+[A-Za-z0-9._\-~+/=*]{6,}")),
    (_variants("basic", "token"), re.compile(
        r"(?i:basic|token)\s+(?![A-Za-z][a-z]*\b)[A-Za-z0-9._\-~+/*]{8,}=*"
    )),
    (_variants(*_FIELD_NAMES) + _CAMEL, re.compile(
        r"(?P<k>(?i:" + "|".join(re.escape(f) for f in _FIELD_NAMES) + "|" + "|".join(_CAMEL)
        + r")[\"']?\s*[:=]\s*[\"']?)[^\s\"',}&<>]{4,}"
    )),
)
"""Credential shapes that start with a word (module docstring): the spellings searched for
(fast substring search, then the expression is tried where one starts a word) and the
expression. Group ``k`` is a prefix kept in the output (the field name)."""

_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_\-*]{6,}"),
    re.compile(r"AIza(?<![A-Za-z0-9]AIza)[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?P<k>://)[^/\s:@<>\"']+(?::[^/\s@<>\"']*)?(?P<t>@)"),
    re.compile(r"(?P<k>[?&;](?i:" + _QUERY_NAMES + r")=)[^&\s#\"'<>]+"),
)
"""Credential shapes that start with a literal (``sk-``, ``AIza``, ``://``, a query separator),
which the regular-expression engine finds fast. Groups ``k``/``t``: kept prefix/suffix."""


def _word_sub(text: str, spellings: tuple[str, ...], pattern: re.Pattern[str], repl: Any) -> str:
    starts: set[int] = set()
    for word in spellings:
        i = text.find(word)
        while i >= 0:
            starts.add(i)
            i = text.find(word, i + 1)
    if not starts:
        return text
    out: list[str] = []
    last = 0
    for i in sorted(starts):
        if i < last or (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            continue
        m = pattern.match(text, i)
        if m:
            out += [text[last:i], repl(m)]
            last = m.end()
    return "".join(out) + text[last:] if out else text


class SecretRegistry:
    """The secret values known to this process, longest first (``values``).

    Thread-safe; :meth:`add` only grows the set."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values: tuple[str, ...] = ()

    def add(self, values: Iterable[str]) -> None:
        """Register ``values`` (those of at least :data:`MIN_SECRET_CHARS` characters)."""
        new = {v for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_CHARS}
        with self._lock:
            if new <= set(self.values):
                return
            self.values = tuple(sorted(new | set(self.values), key=lambda v: (-len(v), v)))


_registry: SecretRegistry | None = None
_registry_lock = threading.Lock()


def registry() -> SecretRegistry:
    """The process's registry, built from ``os.environ`` on first use."""
    global _registry
    if _registry is None:
        with _registry_lock:
            if _registry is None:
                reg = SecretRegistry()
                reg.add(environment_secrets(os.environ))
                _registry = reg
    return _registry


def is_credential_variable(name: str) -> bool:
    """True for environment variable names that hold credentials (module docstring), e.g.
    ``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``EMPATH_TARGET_HEADER_X_AUTH``;
    False for ``SSH_AUTH_SOCK`` and ``XAUTHORITY`` (socket and file paths)."""
    if name.upper() in _NOT_CREDENTIAL_VARIABLE:
        return False
    return name.upper().startswith(_HEADER_PREFIX) or bool(_CREDENTIAL_VARIABLE.search(name))


def header_secrets(value: str) -> list[str]:
    """The secrets in one header value: the value itself and, after a ``Bearer``/``Basic``/
    ``Token`` scheme, the credential alone (each kept only when at least 8 characters)."""
    out = [value.strip()]
    m = _SCHEME.match(value)
    if m:
        out.append(m.group(1))
    return [v for v in out if len(v) >= MIN_SECRET_CHARS]


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """Every secret value of ``env`` (module docstring): target header values (from
    ``EMPATH_TARGET_HEADERS`` when it is a JSON object, and ``EMPATH_TARGET_HEADER_<NAME>``)
    and values of credential-looking variables; at least 8 characters each. A malformed
    ``EMPATH_TARGET_HEADERS`` adds its whole raw value (the target adapter reports it)."""
    out: list[str] = []
    raw = env.get(_HEADERS_JSON)
    if raw:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            for v in parsed.values():
                if isinstance(v, str):
                    out.extend(header_secrets(v))
        else:
            out.append(raw)
    for name, value in env.items():
        if name == _HEADERS_JSON or not isinstance(value, str):
            continue
        if is_credential_variable(name):
            out.extend(header_secrets(value))
    return out


def register(values: Iterable[str]) -> None:
    """Add ``values`` (e.g. an API key passed in code) to the process's secrets."""
    registry().add(values)


def register_environment(env: Mapping[str, str]) -> None:
    """Add the secrets of ``env`` (:func:`environment_secrets`) to the process's secrets;
    called at start by :func:`~empath_gate.settings.load_settings`."""
    registry().add(environment_secrets(env))


def redact(text: str, extra: Iterable[str] = (), *, placeholder: str = PLACEHOLDER) -> str:
    """``text`` with every secret (module docstring) replaced by ``placeholder``.

    ``extra``: further values to take out of this text only (8 characters or more). Pure
    apart from reading the process's registry; linear in the length of ``text`` (substring
    searches for the registered values and the shapes' first words, then one expression per
    literal-led shape)."""
    if not text:
        return text
    values = sorted((v for v in extra if v and len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)
    for v in (*values, *registry().values):
        if v in text:
            text = text.replace(v, placeholder)

    def keep(m: re.Match[str]) -> str:
        g = m.groupdict()
        return (g.get("k") or "") + placeholder + (g.get("t") or "")

    for spellings, word_pattern in _WORD_SHAPES:
        text = _word_sub(text, spellings, word_pattern, keep)
    for pattern in _SHAPES:
        text = pattern.sub(keep, text)
    return text


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return bool(text) and redact(text) != text


def scrub(value: Any) -> Any:
    """A JSON-able ``value`` (dicts, lists, strings, numbers) with :func:`redact` applied to
    every string, keys included; the same object back when nothing holds a secret."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


M = TypeVar("M", bound="BaseModel")


def scrub_model(model: M) -> M:
    """``model`` (a pydantic model that round-trips through JSON, e.g. Results or Transcript)
    with :func:`scrub` applied to its JSON form; the same object when it holds no secret."""
    data = model.model_dump(mode="json")
    if not contains_secret(json.dumps(data, ensure_ascii=False)):
        return model
    return type(model).model_validate(scrub(data))


def redact_url(url: str) -> str:
    """``url`` as shown anywhere: without user-info, query and fragment (where credentials
    hide); ``<unparsable url>`` when it cannot be parsed; a string that is not an absolute
    URL comes back unchanged."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<unparsable url>"
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def url_userinfo(url: str) -> bool:
    """True when ``url`` carries user-info (``scheme://user[:password]@host``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return bool(parts.netloc) and "@" in parts.netloc
