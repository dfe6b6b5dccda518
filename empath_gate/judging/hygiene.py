"""Judge hygiene: the judge should be of another model family than the auditor (EMPATH's
rule) and than the target (self-preference bias), and run at temperature 0.

:func:`model_family` names the family of a litellm model string; :func:`check_judge_hygiene`
lists what is wrong with a configuration, as messages (or raises when ``strict_families``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError

if TYPE_CHECKING:
    from empath_gate.settings import Settings


class JudgeHygieneWarning(UserWarning):
    """The judge shares a model family with the auditor or the target (see
    :func:`check_judge_hygiene`), or runs at a non-zero temperature."""


_FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("anthropic", r"claude|anthropic"),
    ("google", r"gemini|gemma|palm|bison|vertex"),
    ("meta", r"llama|meta"),
    ("mistral", r"mistral|mixtral|codestral|ministral|pixtral|magistral|devstral"),
    ("qwen", r"qwen|qwq"),
    ("deepseek", r"deepseek"),
    ("microsoft", r"(^|[^a-z])phi-?\d"),
    ("cohere", r"command-r|cohere"),
    ("xai", r"grok|xai"),
    ("huggingface", r"smollm"),
    ("openai", r"gpt|chatgpt|davinci|openai|(^|[^a-z0-9])o[1-9](?![0-9])"),
)
"""Model-name fragments of each family, matched on the model segment (the part after the last
``/``) first, then on the provider prefixes. Source: the providers' public model names."""

_PROVIDER_FAMILY: dict[str, str] = {
    "azure": "openai", "azure_ai": "openai", "vertex_ai": "google", "gemini": "google",
    "anthropic": "anthropic", "mistral": "mistral", "deepseek": "deepseek", "xai": "xai",
    "cohere": "cohere", "cohere_chat": "cohere", "openai": "openai",
}
"""Provider prefixes that imply a family when the model segment names none."""


def model_family(model: str) -> str:
    """The family of a litellm model string, for judge hygiene.

    ``openai/gpt-4o``, ``azure/gpt-4o``, ``o3-mini`` -> ``openai``; ``anthropic/claude-…``,
    ``bedrock/anthropic.claude-…``, ``vertex_ai/claude-…`` -> ``anthropic``; ``gemini/…``,
    ``vertex_ai/gemini-…``, ``gemma`` -> ``google``; ``ollama/llama3``, ``groq/llama-3…`` ->
    ``meta``; likewise ``mistral``, ``qwen``, ``deepseek``, ``microsoft`` (phi), ``cohere``,
    ``xai``, ``huggingface`` (smollm). The model name decides before the hosting provider
    (Claude on Vertex is ``anthropic``). Otherwise ``local`` / ``fake`` for those prefixes, and
    ``unknown`` for anything else (never the same family as another unknown model).
    """
    lowered = model.strip().lower()
    segments = [s for s in re.split(r"[/:]", lowered) if s]
    for segment in reversed(segments):
        for family, pattern in _FAMILY_PATTERNS:
            if re.search(pattern, segment):
                return family
    for segment in segments[:-1]:
        if segment in _PROVIDER_FAMILY:
            return _PROVIDER_FAMILY[segment]
    if segments and segments[0] in ("local", "fake"):
        return segments[0]
    return "unknown"


def check_judge_hygiene(settings: Settings) -> tuple[str, ...]:
    """Judge hygiene problems of ``settings``, as messages (empty when clean).

    * the judge and the auditor are of one model family (EMPATH requires different families):
      a :class:`ConfigError` when ``settings.strict_families``, else a message;
    * the judge shares the target's family (self-preference bias): a message;
    * the judge's temperature is set and not 0: a message.

    Families come from :func:`model_family`; ``unknown`` never matches. A scripted auditor and
    callable/HTTP targets have no family. Raises ConfigError as above.
    """
    judge = settings.judge.model
    if not judge:
        return ()
    problems: list[str] = []
    family = model_family(judge)
    auditor = settings.auditor.model
    if auditor and family != "unknown" and model_family(auditor) == family:
        message = (
            f"the judge ({judge}) and the auditor ({auditor}) are both of the {family} family; "
            "EMPATH requires judge and auditor from different families: set judge_model or auditor_model "
            "to another family"
        )
        if settings.strict_families:
            raise ConfigError(message + " (strict_families = true makes this an error)")
        problems.append(message)
    target = settings.target if settings.target_kind == "model" else None
    if target and family != "unknown" and model_family(target) == family:
        problems.append(
            f"the judge ({judge}) shares the {family} family with the target ({target}): "
            "judges tend to prefer their own family's replies; prefer a judge of another family"
        )
    if settings.judge.temperature not in (None, 0, 0.0):
        problems.append(f"judge temperature is {settings.judge.temperature}; set judge_temperature = 0")
    return tuple(problems)
