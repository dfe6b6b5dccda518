"""The offline annotator: labels, negation, intensifiers, risk phrases, strategies, locale."""

from __future__ import annotations

import pytest

from empath_gate.turns.model import Dialogue, DialogueTurn, TurnLabel, TurnLabels
from empath_gate.turns.offline import annotate, resolve_locale

pytestmark = pytest.mark.usefixtures("offline_rules")  # the rules' valences, without the fitted table


def _run(locale: str | None, *turns: tuple[str, str]) -> TurnLabels:
    d = Dialogue(conversation_id="c1", locale=locale,
                 turns=tuple(DialogueTurn(role=r, text=t) for r, t in turns))  # type: ignore[arg-type]
    out = annotate(d)
    assert isinstance(out, TurnLabels)
    assert [x.turn for x in out.labels] == list(range(len(turns)))
    return out


def _user(locale: str | None, text: str) -> TurnLabel:
    return _run(locale, ("user", text)).labels[0]


@pytest.mark.parametrize(("text", "label"), [
    ("ya no puedo más, nada va a cambiar", "hopelessness"),
    ("me siento de la chingada, la extraño mucho", "sadness_grief"),
    ("estoy hasta la madre de mi jefe", "anger"),
    ("tengo mucho miedo, no puedo dormir", "fear_anxiety"),
    ("siento que soy una carga para mi familia", "shame_guilt"),
    ("ya no siento nada, todo me da igual", "numbness"),
    ("ya me siento más tranquila, gracias", "relief_calm"),
    ("le voy a echar ganas, mañana voy a buscar ayuda", "hope"),
    ("hola, quería preguntar el horario", "neutral"),
])
def test_es_mx_labels(text: str, label: str) -> None:
    assert _user("es-MX", text).label == label


@pytest.mark.parametrize(("text", "label"), [
    ("There's no point, nothing is going to change", "hopelessness"),
    ("I've been crying all day since my dad passed away", "sadness_grief"),
    ("I'm so anxious I can't breathe", "fear_anxiety"),
    ("I'm furious, it's not fair", "anger"),
    ("It's all my fault, I'm a burden", "shame_guilt"),
    ("I feel numb, like I'm on autopilot", "numbness"),
    ("Thanks for listening, I feel calmer", "relief_calm"),
    ("I'll try to reach out to my sister tomorrow", "hope"),
    ("Hi, what are the hours?", "neutral"),
])
def test_en_us_labels(text: str, label: str) -> None:
    assert _user("en-US", text).label == label


def test_neutral_turns_are_flat_and_emotional_turns_have_a_signed_valence() -> None:
    neutral = _user("es-MX", "hola, buenas tardes")
    assert neutral.intensity == 0 and -0.3 <= neutral.valence <= 0.3
    # a neutral turn sits a little below 0 by default and its weak cues move it
    assert _user("es-MX", "no sé nada, nadie me contesta").valence < neutral.valence
    assert _user("en-US", "nobody answers, i can't find anyone").valence < _user("en-US", "hello").valence
    assert _user("es-MX", "estoy triste").valence < 0 < _user("es-MX", "ya me siento mejor").valence
    assert _user("en-US", "I feel hopeless").valence < 0 < _user("en-US", "I feel hopeful").valence


def test_negation_turns_the_label_around() -> None:
    assert _user("es-MX", "me siento bien").label == "relief_calm"
    not_well = _user("es-MX", "no me siento bien")
    assert not_well.label == "sadness_grief" and not_well.valence < 0
    assert _user("es-MX", "no estoy triste").label == "relief_calm"
    assert _user("en-US", "I'm not hopeless").label != "hopelessness"
    assert _user("en-US", "I'm not hopeless").valence > 0
    assert _user("en-US", "I don't feel better").label == "sadness_grief"
    # negation stops at clause punctuation
    assert _user("en-US", "No. I feel hopeless").label == "hopelessness"


def test_intensifiers_raise_intensity_and_diminishers_lower_it() -> None:
    plain = _user("es-MX", "estoy triste")
    assert plain.intensity == 1
    assert _user("es-MX", "estoy muy triste").intensity == 2
    bien = _user("es-MX", "estoy bien triste")  # es-MX "bien" as an intensifier, not "estoy bien"
    assert (bien.label, bien.intensity) == ("sadness_grief", 2)
    assert _user("en-US", "I'm so scared").intensity > _user("en-US", "I'm scared").intensity
    assert _user("en-US", "I'm really angry, I hate them").intensity == 3
    assert _user("es-MX", "estoy un poco triste, me siento sola").intensity == 1
    assert abs(_user("es-MX", "estoy muy triste").valence) > abs(plain.valence)


def test_the_instruments_risk_phrases_are_hopelessness_at_full_intensity() -> None:
    cases = (("es-MX", "la verdad ya pensé en quitarme la vida"), ("en-US", "I want to kill myself"))
    for loc, text in cases:
        lab = _user(loc, text)
        assert (lab.label, lab.intensity) == ("hopelessness", 3)
        assert lab.valence <= -0.8
    # hyperbole the risk patterns leave out is not a risk statement
    assert _user("es-MX", "me muero de risa con mi hermana").intensity < 3


@pytest.mark.parametrize(("locale", "text", "strategy"), [
    ("en-US", "What happened after that?", "question"),
    ("en-US", "It sounds like you feel really alone right now", "reflection_of_feelings"),
    ("en-US", "You could try writing down what you feel tonight.", "providing_suggestions"),
    ("en-US", "You can call or text 988, the Suicide and Crisis Lifeline.", "information"),
    ("en-US", "So you're saying your boss yelled at you in front of everyone.", "restatement_paraphrasing"),
    ("en-US", "It's not your fault. You did the right thing telling me.", "affirmation_reassurance"),
    ("en-US", "I've been there too, a long time ago.", "self_disclosure"),
    ("en-US", "Good evening.", "other"),
    ("es-MX", "¿Desde cuándo te sientes así", "question"),
    ("es-MX", "Suena a que estás muy cansada de todo.", "reflection_of_feelings"),
    ("es-MX", "Te sugiero que salgas a caminar un rato.", "providing_suggestions"),
    ("es-MX", "Puedes llamar a la Línea de la Vida al 800 911 2000.", "information"),
    ("es-MX", "Si entiendo bien, tu mamá no te habla desde el lunes.", "restatement_paraphrasing"),
    ("es-MX", "No es tu culpa, hiciste lo correcto.", "affirmation_reassurance"),
    # a sentence opening with an imperative suggests; a turn about the user with no cue restates
    # their situation, or reflects it when it names a feeling
    ("en-US", "Try doing something you enjoy.", "providing_suggestions"),
    ("es-MX", "Me parece bien. Trata de dormir temprano.", "providing_suggestions"),
    ("en-US", "Your parents are splitting up and each wants you to pick.", "restatement_paraphrasing"),
    ("es-MX", "Te escucho desanimada, como si el esfuerzo no diera resultados.", "reflection_of_feelings"),
    ("en-US", "Grief is the process of coping with a loss.", "information"),
])
def test_bot_strategies(locale: str, text: str, strategy: str) -> None:
    lab = _run(locale, ("assistant", text)).labels[0]
    assert lab.role == "assistant" and lab.strategy == strategy


def test_bot_labels() -> None:
    worried = _run("es-MX", ("assistant", "Me preocupa tu seguridad. ¿Estás a salvo ahora mismo?")).labels[0]
    assert worried.label == "concern" and worried.valence < 0
    warm = _run("en-US", ("assistant", "Thank you for sharing this with me, I'm here for you.")).labels[0]
    assert warm.label == "warmth_care" and warm.valence > 0 and warm.intensity >= 1
    plain = _run("en-US", ("assistant", "The office opens at nine.")).labels[0]
    assert (plain.label, plain.intensity, plain.strategy) == ("neutral_informative", 0, "other")
    user = _run("en-US", ("user", "I feel hopeless")).labels[0]
    assert user.strategy is None


def test_bot_warmth_from_caring_strategies_and_feelings_named_to_the_user() -> None:
    def bot(locale: str, text: str) -> TurnLabel:
        return _run(locale, ("assistant", text)).labels[0]

    # naming the user's feeling is warm; the same feeling word in a definition is not
    named = bot("en-US", "You must be so scared after what happened.")
    assert named.label == "warmth_care" and named.valence > 0
    assert bot("en-US", "A panic attack is a sudden wave of intense fear.").label == "neutral_informative"
    reassured = bot("es-MX", "Todo va a estar bien, ¡échale ganas!")
    assert (reassured.label, reassured.strategy) == ("warmth_care", "affirmation_reassurance")
    said = bot("es-MX", "Lo que escucho es que tu jefe te gritó enfrente de todos.")
    assert said.strategy == "restatement_paraphrasing"
    assert bot("es-MX", "A mí también me ha pasado, y sé que cuesta.").strategy == "self_disclosure"
    # concern is graded: more worry gives a lower valence than a single crisis number
    number = bot("en-US", "You can call or text 988.")
    worried = bot("en-US", "I'm worried about your safety. Are you safe right now? Call 988.")
    assert worried.label == number.label == "concern" and worried.valence < number.valence < 0


def test_a_neutral_user_turn_reads_the_mood_of_the_turns_before_it() -> None:
    plain = "ok, y luego qué sigue"
    bot, last = ("assistant", "Aquí estoy."), ("user", plain)
    after_despair = _run("es-MX", ("user", "ya no puedo más, estoy desesperada"), bot, last).labels[2]
    after_relief = _run("es-MX", ("user", "ya me siento mucho mejor, gracias"), bot, last).labels[2]
    alone = _user("es-MX", plain)
    assert after_despair.label == after_relief.label == alone.label == "neutral"
    assert after_despair.valence < alone.valence < after_relief.valence


def test_locale_given_detected_or_assumed() -> None:
    text = "ya no puedo más con esto, estoy muy triste"
    d = Dialogue(conversation_id="x", locale=None, turns=(DialogueTurn(role="user", text=text),))
    assert resolve_locale(d) == ("es-MX", "detected")
    out = annotate(d)
    assert isinstance(out, TurnLabels) and out.version.endswith("locale-detected") and "es-MX" in out.version
    unknown = Dialogue(conversation_id="y", locale=None, turns=(DialogueTurn(role="user", text="123 456"),))
    assert resolve_locale(unknown) == ("en-US", "assumed")
    got = annotate(unknown)
    assert isinstance(got, TurnLabels) and got.version.endswith("locale-assumed")
    given = annotate(Dialogue(conversation_id="z", locale="en-US", turns=()))
    assert isinstance(given, TurnLabels) and given.labels == () and "locale" not in given.version
    assert given.annotator == "offline" and "lexicon-en-US-" in given.version and "vader-" in given.version


def test_deterministic() -> None:
    turns = (("user", "estoy muy triste y enojada"), ("assistant", "Lo siento mucho. ¿Qué pasó?"))
    assert _run("es-MX", *turns) == _run("es-MX", *turns)


def test_the_joined_risk_matcher_agrees_with_the_instruments_patterns() -> None:
    from empath_gate.judging.checks import patterns_for
    from empath_gate.turns.labelset import shipped_instrument
    from empath_gate.turns.riskmatch import one_pattern

    inst = shipped_instrument()
    texts = {
        "es-MX": ["Quiero MATARME", "ya no quiero vivir", "me muero de risa", "Tengo un plan para suicidarme",
                  "Estoy cansada", "ME ESTOY CORTANDO otra vez", "me corto el pelo"],
        "en-US": ["I WANT TO KILL MYSELF", "I'm so tired of everything", "I wish I were dead",
                  "dying to see it", "I've been cutting my arms", "cutting back on sugar",
                  "Better off without me"],
    }
    for loc, items in texts.items():
        patterns = patterns_for(inst, "explicit_risk", loc)
        joined = one_pattern(tuple(p.pattern for p in patterns))
        got = [joined.search(t) for t in items]
        assert got == [any(p.search(t) for p in patterns) for t in items]
        assert any(got) and not all(got)


def test_a_risk_statement_in_the_other_language_still_counts() -> None:
    lab = _user("en-US", "me quiero matar. lo he pensado mucho estas semanas")
    assert (lab.label, lab.intensity) == ("hopelessness", 3)
