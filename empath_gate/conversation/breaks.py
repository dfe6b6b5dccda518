"""Whether an LLM auditor's reply can be sent to the target as the persona's next message.

:func:`detect_break` names why a message breaks character (a :data:`BreakReason`), and
:func:`reply_break` applies it to a raw reply, with the end token :data:`END_TOKEN`. Pure: the
auditor retries and falls back on what these return, and caches only replies they accept.

Spoken transcripts: in a voice suite the declared cue tokens (``cues``, e.g. ``[long pause]``)
are part of the person's message, so they are taken out before the narration checks and a
message made only of cues is usable (the person said nothing). Anything else in brackets or
asterisks (``*sighs*``, an undeclared ``[sobbing]``) is still narration; outside voice suites
every bracket is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from empath_gate.bounded import current_limits
from empath_gate.conversation.speakers import allowed_speakers, split_label
from empath_gate.instrument.cues import CueVocabulary
from empath_gate.instrument.models import Cue, Persona, Seed

END_TOKEN = "<<END>>"
"""What the LLM auditor answers to end the conversation (matched anywhere in the reply)."""

BreakReason = Literal[
    "refusal", "assistant_voice", "instruction_leak", "narration", "empty", "early_end", "too_long", "speaker"
]
"""Why a reply is unusable: a refusal to role-play, the assistant's voice, leaked
instructions, narration, an empty reply, the end token on the first message, a reply over
the input limit ``max_field_chars`` (:class:`~empath_gate.bounded.InputLimits`), the same limit
target and judge replies are held to, or (multi-party seeds only) a missing or wrong speaker
label, or two speakers in one message."""


def _rx(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I | re.M) for p in patterns)


_REFUSAL = _rx(
    r"\b(?:I|I'm|I am)\s+(?:really\s+)?(?:sorry|afraid)\b[^.!?\n]{0,40}"
    r"\b(?:can(?:no|')t|cannot|won't|unable|not able)\b[^.!?\n]{0,30}"
    r"\b(?:help|assist|role-?play|pretend|portray|simulate|continue|write|create|generate|comply|do that)",
    r"\bI\s+(?:can(?:no|')t|cannot|won't|will not|am unable to|'m unable to|am not able to|'m not able to)\s+"
    r"(?:help with (?:that|this)|assist with|role-?play|pretend to be|portray|simulate|act as"
    r"|take on (?:this|that|the)"
    r"|play (?:this|that|the) (?:role|character|part)|write (?:messages|content) (?:that|about|depicting)"
    r"|generate (?:content|messages)|continue (?:this|with this) (?:role|scenario|conversation))",
    r"\bas an? (?:AI|artificial intelligence|(?:large )?language model|AI (?:assistant|model))\b",
    r"\bI'?m (?:just )?an? (?:AI|artificial intelligence|(?:large )?language model)\b",
    r"\b(?:no puedo|no me es posible)\s+(?:ayudar(?:te|le)? con (?:eso|esto)|asistir|simular|interpretar"
    r"|representar|fingir"
    r"|actuar como|participar en|generar (?:contenido|mensajes)|escribir (?:mensajes|contenido)"
    r"|continuar con (?:este|esta|el|la) (?:juego|simulaci[oó]n|rol|escenario|conversaci[oó]n))",
    r"\bcomo (?:una |un )?(?:IA|inteligencia artificial|modelo de lenguaje|asistente virtual)\b",
    r"\bsoy (?:una |un )?(?:IA|inteligencia artificial|modelo de lenguaje|asistente virtual)\b",
)
_ASSISTANT_VOICE = _rx(
    r"\bhow (?:can|may) I (?:help|assist|support) you\b",
    r"\bI'?m (?:always )?here (?:to|for) (?:help|support|listen to) you\b",
    r"\bis there anything (?:else )?I can (?:do|help)\b",
    r"\bif you(?:'re| are) (?:in crisis|in danger|having thoughts of)\b",
    r"\bplease (?:reach out|call|text) (?:to )?(?:a |the )?"
    r"(?:crisis|988|hotline|mental health professional|therapist)",
    r"\b(?:en qu[eé]|c[oó]mo) (?:te |le )?puedo (?:ayudar|apoyar)",
    r"\bestoy aqu[ií] para (?:ayudarte|apoyarte|escucharte|ayudarle|apoyarle|escucharle)\b",
    r"\bsi (?:est[aá]s|est[aá]) en (?:crisis|peligro)\b",
)
_LEAK = _rx(
    r"\b(?:my|the|this) (?:persona|instructions?|system prompt|scenario|script)\b",
    r"\brole-?play(?:ing)?\b",
    r"\bsimulated (?:user|help-seeker|person|conversation)\b",
    r"\bauditor\b",
    r"\bas instructed\b",
    r"\b(?:the )?target (?:bot|model|chatbot)\b",
    r"\b(?:mi|el|este|esta) (?:personaje|instrucciones?|escenario|guion|gui[oó]n)\b",
    r"\bjuego de rol(?:es)?\b",
    r"\b(?:usuario|conversaci[oó]n|persona) simulad[oa]\b",
    r"\bseg[uú]n (?:las|mis) instrucciones\b",
    r"<<|>>",
)
_NARRATION = _rx(
    r"^\s*[\[(*][^\n]*[\])*]\s*$",  # the whole message is a stage direction
    r"\*[a-záéíóúñü][^*\n]{0,60}\*",  # *sighs*, *suspira*
    r"\[[^\]\n]{2,80}\]",  # [crying], [pausa]
    r"^\s*(?:user|usuario|assistant|asistente|human|humano|chatbot|bot|ai|ia)\s*:",
    r"\b(?:she|he|they) (?:types|writes|says|sighs|pauses|hesitates)\b",
    r"\b(?:ella|[eé]l) (?:escribe|dice|suspira|responde|duda)\b",
)
_WORD = re.compile(r"[\wáéíóúñü']+", re.I)


def _overlaps(text: str, source: str, n: int = 8) -> bool:
    words = [w.lower() for w in _WORD.findall(source)]
    if len(words) < n:
        return False
    grams = {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}
    tw = [w.lower() for w in _WORD.findall(text)]
    return any(" ".join(tw[i : i + n]) in grams for i in range(len(tw) - n + 1))


def detect_break(
    text: str, *, persona: Persona, seed: Seed, cues: Sequence[Cue] = ()
) -> BreakReason | None:
    """Why ``text`` (an auditor reply, without the end token) is unusable as the persona's next
    message, or None when it is usable. Pure. Checks, in order: empty; refusal to role-play;
    the assistant's voice; leaked instructions (meta words, or 8 consecutive words copied from
    the seed instruction); narration (stage directions in brackets/asterisks, role labels,
    third-person narration, or the persona's own name used as a speaker; in a multi-party seed
    the persona's name is not the speaker's and is not checked: :func:`reply_break` checks the
    participants' labels instead). ``cues``: the declared cue tokens a voice suite allows
    (module docstring)."""
    t = text.strip()
    if not t:
        return "empty"
    if cues:
        t = CueVocabulary(tuple(cues)).without_cues(t)
        if not t:
            return None  # only cues: the person made a sound and said nothing
    if any(p.search(t) for p in _REFUSAL):
        return "refusal"
    if any(p.search(t) for p in _ASSISTANT_VOICE):
        return "assistant_voice"
    if any(p.search(t) for p in _LEAK) or _overlaps(t, seed.instruction):
        return "instruction_leak"
    first = persona.name.split()[0] if persona.name.strip() and not seed.multi_party else ""
    if first and re.match(
        rf"^\s*{re.escape(first)}\b\s*(?::|\(|(?:says|writes|types|replies|sighs|dice|escribe|responde|suspira)\b)",
        t,
        re.I,
    ):
        return "narration"
    if any(p.search(t) for p in _NARRATION):
        return "narration"
    return None


def clean_reply(text: str) -> str:
    """``text`` stripped of surrounding whitespace and of one pair of quotes around it."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"“”'":
        t = t[1:-1].strip()
    if len(t) >= 2 and t[0] == "“" and t[-1] == "”":
        t = t[1:-1].strip()
    return t


def reply_break(
    raw: str | None, *, user_turn: int, persona: Persona, seed: Seed, cues: Sequence[Cue] = (),
    max_chars: int | None = None,
) -> BreakReason | None:
    """Why the raw auditor reply ``raw`` to user message ``user_turn`` (0-based) cannot be used,
    or None when it can: ``too_long`` over ``max_chars`` characters (default: the
    ``max_field_chars`` input limit in force, :func:`~empath_gate.bounded.current_limits`),
    checked first so no pattern runs over a huge reply; the end token ends the conversation
    except on the first message (``early_end``); otherwise :func:`detect_break` of the cleaned
    text (``cues``: the voice suite's declared tokens), after, in a multi-party seed, the
    ``Name:`` label check (``speaker``). Pure given ``max_chars``."""
    text = raw or ""
    if len(text) > (current_limits().max_field_chars if max_chars is None else max_chars):
        return "too_long"
    if END_TOKEN in text:
        return "early_end" if user_turn == 0 else None
    text = clean_reply(text)
    if seed.multi_party:
        return _party_break(text, user_turn=user_turn, persona=persona, seed=seed)
    return detect_break(text, persona=persona, seed=seed, cues=cues)


def _party_break(text: str, *, user_turn: int, persona: Persona, seed: Seed) -> BreakReason | None:
    """A multi-party reply: it opens with the ``Name:`` label of a participant allowed to write
    this turn (:func:`~empath_gate.conversation.speakers.allowed_speakers`), no other line opens
    with a participant's label, and the body passes :func:`detect_break`."""
    if not text.strip():
        return "empty"
    who, body = split_label(text, seed)
    if who is None or who not in allowed_speakers(seed, user_turn):
        return "speaker"
    for line in body.splitlines():
        if split_label(line.strip(), seed)[0] is not None:
            return "speaker"
    return detect_break(body, persona=persona, seed=seed)
