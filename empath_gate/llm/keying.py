"""What names a call in the reply cache: :func:`call_key_parts` gathers every part (messages,
parameters, seed and the identities below); pure but for :func:`weights_sha256`, which reads the
local model's file.

Two calls may share a cached reply only when they would reach the same model: the cache key
therefore carries

* the role's endpoint (:func:`endpoint_identity` of ``api_base``, or of an HTTP target's URL):
  scheme, host, port and path, plus the names of its query parameters with a sha256 of each
  value, never user-info or a credential-named parameter;
* the request headers (:func:`header_identity`): the lower-cased names of non-secret headers,
  each with the sha256 of its value; credential headers are left out entirely;
* for the embedded local model, the sha256 of its weights file (:func:`weights_sha256`), so a
  new model shipped under the same name is a new model.

Secrets never enter a key: the key is a digest, but its parts are checked for credential-named
fields (:func:`empath_gate.llm.cache.cache_key`) and these functions only ever emit digests of
values that are not credentials.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from empath_gate.settings import RoleSettings, is_secret_name

_SECRET_HEADER = re.compile(r"cookie|session|signature|subscription|(^|-)(key|auth|sig)$", re.I)
"""Header and query-parameter names treated as credentials besides :func:`is_secret_name`'s
(``Authorization``, ``X-Api-Key``, ``*-Token``…): cookies and session ids, request signatures
(``X-Amz-Signature``, ``sig``), Azure API Management's ``Ocp-Apim-Subscription-Key``, and any
name ending in ``-key`` or ``-auth``."""


def is_secret_header(name: str) -> bool:
    """True when the header (or query parameter) ``name`` may carry a credential."""
    return is_secret_name(name) or bool(_SECRET_HEADER.search(name))


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=64)  # pure; a run's roles have a handful of endpoints, named every call
def endpoint_identity(url: str | None) -> str | None:
    """``url`` as it names an endpoint in a cache key, or None when unset.

    ``https://user:pw@Bot.example:8443/v1/?deployment=a&api-key=x`` becomes
    ``https://bot.example:8443/v1?deployment=sha256:<hex of "a">``: user-info and
    credential-named parameters dropped, other parameters sorted with their values hashed, a
    trailing ``/`` removed. A string that is not an absolute URL is returned stripped of a
    trailing ``/`` (litellm also accepts bare hosts)."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return _digest(url)  # unparsable: still distinct per value, never shown
    if not parts.scheme or not parts.netloc:
        return url.strip().rstrip("/")
    host = (parts.hostname or "").lower()
    if parts.port:
        host = f"{host}:{parts.port}"
    query = sorted(
        (name, f"sha256:{_digest(value)}")
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not is_secret_header(name)
    )
    text = "&".join(f"{n}={v}" for n, v in query)
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), text, ""))


def header_identity(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``{lower-cased name: sha256 hex of the value}`` of the non-secret ``headers`` (see
    :func:`is_secret_header`); credential headers are left out, names and values alike."""
    return {
        name.lower(): _digest(value)
        for name, value in sorted((headers or {}).items())
        if not is_secret_header(name)
    }


_weights_lock = threading.Lock()
_weights: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 hex digest of the file at ``path``, read in 1 MiB blocks and remembered per
    (path, size, modification time) for the life of the process. Raises OSError."""
    stat = path.stat()
    memo = (str(path), stat.st_size, stat.st_mtime_ns)
    with _weights_lock:
        known = _weights.get(memo)
    if known is not None:
        return known
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _weights_lock:
        _weights[memo] = digest
    return digest


def weights_sha256(model: str) -> str:
    """sha256 of the weights file of the embedded local model ``model`` (``local/smollm2`` or
    ``smollm2``). Raises ConfigError when the model is not installed (with how to install it)."""
    from empath_gate.llm import local

    name = model.split("/", 1)[1] if "/" in model else model
    return file_sha256(local.gguf_path(name))


RESERVED_KEY_PARTS = frozenset(
    {"role", "model", "params", "seed", "messages", "endpoint", "request_headers", "weights_sha256"}
)
"""The key parts :func:`call_key_parts` sets itself: a caller's ``cache_extra`` may not use them."""


def call_key_parts(
    role: str,
    settings: RoleSettings,
    sent: list[dict[str, Any]],
    *,
    seed: int | None,
    response_format: dict[str, Any] | None,
    headers: Mapping[str, str] | None,
    cache_extra: Mapping[str, object],
    embedded_local: bool,
) -> dict[str, object]:
    """Every input that can change the reply of one model call (see :mod:`empath_gate.llm.cache`):
    role, model, endpoint, parameters, seed, the messages as sent, the request headers'
    identity and ``cache_extra``; for a ``local/`` model served by the embedded runtime
    (``embedded_local``: no other ``local`` provider registered), its weights' sha256."""
    model = settings.model or ""
    parts: dict[str, object] = {
        "role": role,
        "model": model,
        "endpoint": endpoint_identity(settings.api_base),
        "params": {
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "extra": settings.extra,
            "response_format": response_format,
            "send_seed": settings.send_seed,
        },
        "seed": seed,
        "messages": sent,
        "request_headers": header_identity(headers),
        **cache_extra,
    }
    if embedded_local and model.split("/", 1)[0] == "local":
        parts["weights_sha256"] = weights_sha256(model)
    return parts
