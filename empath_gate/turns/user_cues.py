"""What kind of turn a user turn is, beyond its feeling words: the offline annotator's turn-kind
cues (rules ``offline-5``).

Three kinds of user turn carry a valence that a feeling lexicon does not see:

* an **ask**: a plain question or request ("can you help me write a text?", "¿a quién le puedo
  hablar?"). The gold's labelling guide puts "facts, questions and requests with no clear
  feeling of their own" in ``neutral``, within ±0.3. Read in context (:mod:`user_context`), such
  a turn took most of a despairing story's valence; it now keeps more of its own;
* a **forward** turn: a plan to act, i.e. a first-person future or a time ahead followed by an
  action verb ("I'll call them tomorrow", "mañana le hablo a la clínica", "voy a intentarlo"),
  which the guide calls ``hope`` ("a plan to act");
* a **relief** turn: gratitude or easing now ("thank you, this helps", "gracias, ya me siento
  menos peor"), which the guide calls ``relief_calm``.

The cues are the project's own general constructions (a future auxiliary, a time ahead, a
thanks, a comparative of feeling better), written for help-seeking talk in both locales, es-MX
colloquial forms included; they are not sentences of any gold file. A cue right after a negator
("I won't", "no voy a", "no me sirvió") does not count. Matching is on the folded tokens of
:func:`empath_gate.turns.lexmatch.tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Kind = Literal["ask", "forward", "relief"]
"""A user turn's kind found by :func:`turn_kind` (None: none of them)."""

CUE_LABELS: dict[str, str] = {"forward": "hope", "relief": "relief_calm"}
"""The user label of a turn with no feeling found by the lexicon but a forward or relief cue
(intensity 1, "mild or implied"): the guide's ``hope`` ("a plan to act") and ``relief_calm``
("thank you, this helped")."""

_FUTURE: dict[str, tuple[str, ...]] = {
    "en-US": (
        "i'll", "ill", "i will", "i'm going to", "im going to", "i am going to", "i'm gonna",
        "im gonna", "i want to", "i can", "maybe i'll", "maybe ill",
    ),
    "es-MX": (
        "voy a", "lo voy a", "le voy a", "la voy a", "me voy a", "vamos a", "manana", "hoy",
        "mas tarde", "al rato", "ahorita",
    ),
}
"""Markers of the writer's own future or near future (project choice)."""

_PLAN_VERBS: dict[str, frozenset[str]] = {
    "en-US": frozenset({
        "try", "call", "text", "talk", "go", "ask", "reach", "write", "book", "sign", "see", "rest",
        "sleep", "start", "email", "message", "check", "look", "apply", "join", "schedule", "give",
        "practice", "visit", "tell"}),
    "es-MX": frozenset({
        "intentar", "intentarlo", "intento", "hablar", "hablarle", "hablo", "llamar", "llamo",
        "marcar", "marcarle", "marco", "escribir", "escribirle", "escribo", "ir", "voy", "buscar",
        "buscarla", "buscarlo", "busco", "dormir", "descansar", "pedir", "pido", "preguntar",
        "pregunto", "empezar", "empiezo", "platicar", "platico", "checar", "checo", "agendar",
        "sacar", "saco", "probar", "pruebo"}),
}
"""Action verbs of a plan (project choice): "I'll call", "voy a intentarlo", "mañana le hablo".
Spanish speech verbs of confrontation ("decir") are left out: "le voy a decir sus verdades" is
anger, not a plan. English "tell" is in since rules ``offline-6`` ("I'll tell my mom tonight",
a plan to disclose; on the gold's four seen sets it helped, where "decir" / "contar" lowered the
tune half)."""

_PERCEIVE: frozenset[str] = frozenset({"tell"})
"""Plan verbs that after "can" perceive rather than act ("I can tell you're a bot"; rules
``offline-6``, where "tell" became a plan verb: "ill tell her tonight")."""
_PLAN_GAP = 3
"""Tokens after a future marker within which a plan verb makes a forward turn ("mañana temprano
le hablo", "I'll probably call")."""

_RELIEF: dict[str, tuple[str, ...]] = {
    "en-US": (
        "thank you", "thanks", "thx", "ty", "this helps", "that helps", "it helps", "helps a lot",
        "that helped", "this helped", "it helped", "feel better", "feel a bit better",
        "feel a little better", "feeling better", "a little better", "a bit better", "calmer",
        "makes sense", "that's useful", "really useful", "i appreciate",
    ),
    "es-MX": (
        "gracias", "grax", "mil gracias", "me siento mejor", "ya me siento", "menos peor",
        "un poco mejor", "poquito mejor", "mas tranquila", "mas tranquilo", "me ayudo", "me sirvio",
        "me sirve", "tiene sentido", "te lo agradezco", "se lo agradezco", "mas calmada", "mas calmado",
    ),
}
"""Gratitude and easing constructions (project choice)."""

_ASK_OPENERS: dict[str, tuple[str, ...]] = {
    "en-US": (
        "can you", "could you", "would you", "will you", "help me", "tell me", "give me", "show me",
        "can we", "can i", "is there", "are there", "what", "how", "who", "where", "which",
        "should i", "do you", "does it", "is it", "is this", "please help", "just help",
    ),
    "es-MX": (
        "me ayudas", "ayudame", "me puedes", "puedes", "podrias", "me podrias", "dime", "hazme",
        "pasame", "mandame", "que", "como", "quien", "donde", "cuando", "cual", "hay", "oye",
        "me dices", "me recomiendas", "usted me", "me puede",
    ),
}
"""Openers of a question or request (project choice): a turn whose first clause starts with one,
or that has a question mark, is an ask when it has no feeling of its own."""

_NEGATORS: frozenset[str] = frozenset({
    "not", "no", "never", "won't", "wont", "don't", "dont", "didn't", "didnt", "doesn't", "nunca",
    "ni", "jamas", "tampoco"})
"""Words that cancel a forward or relief cue right after them ("I won't", "no me sirvió")."""


_PUNCT: frozenset[str] = frozenset(".,;:!?")
_FILLERS: frozenset[str] = frozenset({"ok", "okay", "so", "and", "y", "pues", "bueno", "entonces", ","})
"""Words skipped before an ask's opener ("ok so can you...", "bueno, ¿y qué le digo?")."""

_WORRY: dict[str, tuple[str, ...]] = {
    "en-US": ("what if", "what happens if", "is it normal", "is it bad", "is it weird", "is it stupid"),
    "es-MX": ("y si", "que tal si", "que pasa si", "sera que", "es normal", "esta mal"),
}
"""A worried question ("what if he finds out?", "¿y si me quitan a mis hijos?"): not a plain ask
(the guide labels such turns ``fear_anxiety``)."""


_THANKS: frozenset[str] = frozenset({"gracias", "thanks"})
"""Thanks that attribute rather than thank when "a" / "to" follows ("gracias a Dios ya está
bien", "thanks to him I lost my job"): no relief cue."""


Index = dict[str, tuple[tuple[str, ...], ...]]
"""Phrases (tuples of folded words) by their first word."""


def _index(phrases: tuple[str, ...]) -> Index:
    by: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        words = tuple(phrase.split())
        by.setdefault(words[0], []).append(words)
    return {k: tuple(v) for k, v in by.items()}


def _indexes(table: dict[str, tuple[str, ...]]) -> dict[str, Index]:
    return {loc: _index(phrases) for loc, phrases in table.items()}


_RELIEF_AT = _indexes(_RELIEF)
_WORRY_AT = _indexes(_WORRY)
_FUTURE_AT = _indexes(_FUTURE)
_OPENERS_AT = _indexes(_ASK_OPENERS)


def _at(toks: Sequence[str], i: int, index: Index) -> int:
    """The length of the longest phrase of ``index`` starting at token ``i`` (0: none)."""
    best = 0
    for words in index.get(toks[i], ()):
        k = len(words)
        if k > best and tuple(toks[i:i + k]) == words:
            best = k
    return best


def _find(toks: Sequence[str], index: Index) -> bool:
    """Whether a phrase of ``index`` occurs in ``toks`` with no negator right before it (and, for
    a thanks, no "a" / "to" right after it: :data:`_THANKS`)."""
    n = len(toks)
    for i in range(n):
        k = _at(toks, i, index)
        if not k or (i and toks[i - 1] in _NEGATORS):
            continue
        if toks[i + k - 1] in _THANKS and i + k < n and toks[i + k] in {"a", "to"}:
            continue
        return True
    return False


def _plans(toks: Sequence[str], loc: str) -> bool:
    """Whether a future marker is followed within :data:`_PLAN_GAP` tokens of its clause by a plan
    verb, with no negator in the :data:`_PLAN_GAP` tokens before the marker or between it and the
    verb."""
    verbs = _PLAN_VERBS[loc]
    n = len(toks)
    for i in range(n):
        k = _at(toks, i, _FUTURE_AT[loc])
        if not k or any(t in _NEGATORS for t in toks[max(0, i - _PLAN_GAP):i]):
            continue
        for j in range(i + k, min(n, i + k + _PLAN_GAP)):
            if toks[j] in _PUNCT or toks[j] in _NEGATORS:
                break
            if toks[j] in verbs and not (toks[j] in _PERCEIVE and toks[i + k - 1] == "can"):
                return True
    return False


def turn_kind(toks: Sequence[str], locale: str) -> Kind | None:
    """The kind of a user turn from its folded tokens (:func:`lexmatch.tokens`), first match wins:
    ``relief`` when a gratitude or easing construction occurs; for a turn with a ``?``, ``ask``
    unless it is a worried question (:data:`_WORRY`: None); ``forward`` when a plan to act occurs
    (:func:`_plans`); ``ask`` when its first words (after fillers) open a question or request;
    else None. ``locale``: ``es-MX`` or ``en-US`` (another locale: English cues). Pure."""
    loc = locale if locale in _FUTURE else "en-US"
    if _find(toks, _RELIEF_AT[loc]):
        return "relief"
    if "?" in toks:
        return None if _find(toks, _WORRY_AT[loc]) else "ask"
    if _plans(toks, loc):
        return "forward"
    if _find(toks, _WORRY_AT[loc]):
        return None
    head = [t for t in toks[:4] if t not in _FILLERS]
    return "ask" if head and _at(head, 0, _OPENERS_AT[loc]) else None





_AGO: dict[str, tuple[str, ...]] = {
    "en-US": ("years ago", "year ago", "months ago", "last time", "last year", "back when", "when i was",
              "used to", "in high school", "in college"),
    "es-MX": ("ano pasado", "la ultima vez", "cuando tenia", "cuando era", "cuando estaba", "hace anos",
              "de chava", "de chavo", "de morra", "de morro"),
}
"""Markers of a time well before now (rules ``offline-6``; project choice): "two years ago", "last
time", "el año pasado", "cuando tenía 15". es-MX distances ("hace dos años", "a los veinte años",
"de los 15 a los 17") are found by :func:`_years_back`."""
_STILL: dict[str, tuple[str, ...]] = {
    "en-US": ("again", "still", "right now", "these days", "lately", "tonight", "coming back", "came back"),
    "es-MX": ("otra vez", "de nuevo", "todavia", "sigo", "sigue", "ahorita", "ultimamente", "esta noche",
              "volvi", "volver", "regresando", "regreso", "regresa"),
}
"""Markers that the past is not closed ("I want to do it again", "todavía lo pienso")."""
_AGO_AT = _indexes(_AGO)
_STILL_AT = _indexes(_STILL)
_YEARS: frozenset[str] = frozenset({"ano", "anos", "meses"})


def _years_back(toks: Sequence[str]) -> bool:
    """es-MX "hace <n> años / meses", "a los <n> años", "de los <n> a los <n>"."""
    for i, tok in enumerate(toks):
        if tok == "hace" and _YEARS & set(toks[i + 1:i + 4]):
            return True
        if tok in ("a", "de") and toks[i + 1:i + 2] == ["los"] and i + 2 < len(toks) and (
                toks[i + 2].isdigit() or toks[i + 3:i + 4] == ["anos"]):
            return True
    return False


def closed_past(toks: Sequence[str], locale: str) -> bool:
    """Whether a user turn tells something as closed background (rules ``offline-6``): a marker of
    a time well before now (:data:`_AGO`, or an es-MX distance in years) and none that it goes
    on (:data:`_STILL`). The offline annotator then reads a risk statement in the turn as past
    history ("two years ago I overdosed. I'm in recovery now", "a los veinte años intenté
    quitarme la vida"), not as a present risk. Pure; ``toks`` folded, as :func:`turn_kind`'s."""
    loc = locale if locale in _AGO else "en-US"
    if any(_at(toks, i, _STILL_AT[loc]) for i in range(len(toks))):
        return False
    past = any(_at(toks, i, _AGO_AT[loc]) for i in range(len(toks)))
    return past or (loc == "es-MX" and _years_back(toks))


__all__ = ["CUE_LABELS", "Kind", "closed_past", "turn_kind"]
