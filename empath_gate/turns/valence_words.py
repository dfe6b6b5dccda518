"""Word valence for the offline annotator: the project's own word lists.

* es-MX: :data:`ES_RATINGS`, the whole Spanish word list;
* en-US: :data:`EN_RATINGS`, a supplement to vaderSentiment's ratings (which cover general
  English): words of help-seeking talk that vaderSentiment leaves unrated (negators, "nobody",
  "hospital") or rates as pleasant where a help-seeker mostly uses them politely ("help",
  "please", "ok"); a supplement rating replaces vaderSentiment's.

Written by the project for the offline annotator (no third-party lexicon is copied: no NRC, no
translated list). Each word (folded as :func:`empath_gate.turns.lexmatch.fold` folds it: lower
case, no accents) has a rating on vaderSentiment's scale, -4 (very unpleasant) .. 4 (very
pleasant), so that both locales go through the same arithmetic
(:func:`empath_gate.turns.valence_en.rated_valence`). es-MX colloquial forms are included
("valí", "chale", "gacho", "chido"). A word ending in ``*`` in the tables below is a stem: any
word starting with it gets the rating (stems of five letters or more only).

The ratings are the project's judgement of a word's pleasantness in a help-seeking message
(for example a polite "porfa" or "gracias" is only mildly positive; "sola" is unpleasant).
"""

from __future__ import annotations

from collections.abc import Sequence

from empath_gate.turns.lexmatch import Hit, ends_before

ES_RATINGS: dict[float, str] = {
    -2.2: "desesperacion cancer accidente hospitalizad* internado internada violencia "
          "acoso acosan maltrato maltrata maltratan amenazo insulta insultan humilla rechazo "
          "abandono traicion engano infiel desempleo desalojo terrible espantoso espantosa "
          "pesadilla insomnio recaer alcohol borracha cruda celos rencor envidia desmayo desmayar "
          "ahogo asfixia deportaron deportado deportada desempleado desempleada bullying burlan "
          "burlas burla traiciono empujo empujon despreci* expulsaron expulsado diagnosticaron "
          "estupida estupido culpo desaparecer morirse",
    -1.4: "preocupacion tiemblo temblor mareo vomito ataque crisis discusion discutimos regano "
          "reganan castigo reprobe reprobar falle error errores complicado imposible aburrido "
          "aburrida cansancio lejos perdido confundido confundida confusion duda dudas inseguro "
          "insegura inseguridad asco fatal presion gorda gordo chismosa chismoso callado",
    1.6: "mejorando mejore pude agradec* emocionad* ilusion ilusiona sonrei reir risa amigos "
         "abrazo carino bonito bonita hermoso hermosa lindo linda chingon perfecto gane aprobe "
         "orgullo descanse abrazos apapacho divertido divertida disfrute disfruto sonrie sobrio "
         "sobria cumpli gradue amigas emocione",
    -3.2: "muerte morir morirme matarme suicid* desesperad* insoportable horrible infierno "
          "destrozad* devastad* golpeo golpea golpes amenaza* violacion abuso abusaron "
          "matar matarme mataria ahorcar* colgarme sobredosis violada violaron golpiza",
    -2.6: "miedo panico terror aterrad* angusti* ansiedad ansios* llorar lloro llora llorando "
          "triste tristeza deprimid* depresion culpa culpable verguenza avergonzad* basura odio "
          "odiar enojad* furios* coraje rabia sola soledad vacio vacia dolor duele sufro "
          "sufrir sufriendo asust* lastim* herid* fracas* inutil estorbo carga perdi perdida muerto "
          "murio fallecio funeral hospital urgencias infarto violent* peligro emergencia cortaba "
          "cortarme doler duela dolio loco loca manicomio nudo respirar aborto divorcio pesadillas "
          "encierren corran lloran pistola navaja golpear golpeado golpeada pegaba sangre cortada "
          "cortadas llore llorado lagrimas deshecha deshecho destrui* miserable velorio entierro "
          "difunto difunta demencia alzheimer pesimo pesima cachetada abusada abusado drogado "
          "drogada adicto adiccion jodido jodida aguitad*",
    -1.8: "preocupad* preocupa nervios* estres estresad* cansad* agotad* harta harto mal peor "
          "dificil duro pesado pesa problema problemas deuda debo cobrando corrieron correr despid* "
          "enfermo enferma enfermedad grito gritos pelea peleamos borracho toma tomando droga "
          "drogas recaida recai valio vali chale gacho gacha feo fea pinche chingad* madrazo bajon "
          "encerrad* encierra aislad* raro rara voces inconsciente amenazas quitan pierdo perder "
          "critica criticando humill* injusto injusta nadie nada nunca jamas tampoco sin deudas "
          "prestamista cobradores reprobo temblando agobiad* abrumad* enojo molesta molesto tonta "
          "tonto mentira mentiras menti ignoran apodos diabetes madrazos putazo chafa culero cagada "
          "regue fregado fregada",
    -1.0: "no ni pero regresa diagnostico cuesta costo caro dinero solo extrano extrana extranar "
          "falta faltan cuidado vigilar vigilando senales urgente callados callada escondo esconder "
          "secreto exagerando dormido dormir desvelo despierta ya",
    1.5: "jaja jajaja jajaj* jeje jejeje",
    1.0: "porfa gracias ok bueno bien va sale vale tranquila tranquilo ayuda ayudar hablar "
         "platicar sirve sirvio calma valor fuerza",
    2.0: "mejor alivio aliviad* contenta contento alegre alegria gusto emocion emociona "
         "chido padrisimo esperanza lograr logre orgullos* animo animad* tranquilidad paz "
         "seguro segura confianza confio apoyo",
    3.0: "encanta encanto increible maravillos* feliz felicidad excelente genial amor amo",
}

EN_RATINGS: dict[float, str] = {
    -2.6: "hospital ambulance overdose overdosed pills abused suicide suicidal die dying cutting "
          "cut bleeding threats threatened violent hits shelter",
    -1.8: "nobody nothing never can't cant cannot won't wont couldn't laid fired debt bills rent "
          "sick cancer diagnosis miscarriage divorce gone garbage weird wrong funeral alone lonely "
          "drunk drinking relapse relapsed flashes nightmares shaking secret unstable freak yelling "
          "hit beat beats yelled yells kicked ghosted frozen stroke flashbacks insomnia razor",
    -1.0: "not no don't dont doesn't didn't isn't wasn't aren't haven't havent hasn't idk anymore "
          "without but why lose losing tired insurance file saved anyone whatever again still owe "
          "quit chronic surgery marks unemployed",
    0.3: "help please ok okay sure yes yeah want promise trust friend friends care kind nice",
    1.5: "haha hahaha lol lmao",
    -2.2: "evicted eviction homeless deported chemo diagnosed icu custody afraid bruise bruises "
          "bruised wrecked breakup dementia alzheimer's blade gun layoff stalking bullied",
    2.0: "excited proud clean sober hype recovery",
    0.0: "like pretty honestly well wish free seriously god matter matters true chance heart",  # UNRATED
}

UNRATED = 0.0
"""A supplement rating that removes vaderSentiment's rating: words that in help-seeking talk
are mostly fillers or hedges ("like", "pretty bad", "honestly", "I wish I was dead"), not
pleasant words; and, since rules ``offline-6``, "heart", mostly the body there ("my heart is
pounding", "heart attack"; on the gold's four seen sets it raised held-out Spearman by 0.006)."""

STEM_KEY = 5
"""Letters of a stem used to index it (every stem has at least this many)."""


class WordList:
    """One locale's word ratings: whole words and stems (a table word ending in ``*``)."""

    def __init__(self, table: dict[float, str]) -> None:
        self.words: dict[str, float] = {}
        self.stems: dict[str, list[tuple[str, float]]] = {}
        for value, words in table.items():
            for w in words.split():
                if w.endswith("*"):
                    if len(w) - 1 < STEM_KEY:
                        raise ValueError(f"stem {w!r} is shorter than {STEM_KEY} letters")
                    self.stems.setdefault(w[:STEM_KEY], []).append((w[:-1], value))
                else:
                    self.words[w] = value

    def rating(self, word: str) -> float | None:
        """The rating (-4..4) of a folded word, or None when it has none."""
        got = self.words.get(word)
        if got is not None:
            return got
        for stem, value in self.stems.get(word[:STEM_KEY], ()):
            if word.startswith(stem):
                return value
        return None

    def __len__(self) -> int:
        return len(self.words) + sum(len(v) for v in self.stems.values())


SPANISH = WordList(ES_RATINGS)
"""The es-MX word list."""
ENGLISH = WordList(EN_RATINGS)
"""The en-US supplement to vaderSentiment."""


IDIOMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "es-MX": (("a", "lo", "mejor"), ("menos", "mal"), ("menos", "peor")),
    "en-US": (("better", "off"),),
}
"""Word sequences (folded) whose words lose their ratings: "a lo mejor" is "maybe", not
"better"; "menos mal" is relief, not "bad"; "better off" is mostly "they'd be better off
without me". The lexicons carry these phrases' meaning."""


def ratings(toks: Sequence[str], locale: str) -> list[float | None]:
    """The rating (-4..4) of every token, None for punctuation, unrated words and the words of
    an :data:`IDIOMS` sequence: es-MX from :data:`SPANISH`; en-US from :data:`ENGLISH`, else
    vaderSentiment's."""
    if locale == "en-US":
        from empath_gate.turns.valence_en import word_ratings

        vader = word_ratings(toks)
        rated = [ENGLISH.words.get(t, r) for t, r in zip(toks, vader, strict=True)]
        rated = [None if r == UNRATED else r for r in rated]
    else:
        rated = [SPANISH.rating(t) for t in toks]
    for idiom in IDIOMS.get(locale, ()):
        k = len(idiom)
        for i in range(len(toks) - k + 1):
            if tuple(toks[i:i + k]) == idiom:
                rated[i:i + k] = [None] * k
    return rated


INABILITY: frozenset[str] = frozenset({
    "can't", "cant", "cannot", "couldn't", "couldnt", "stop", "puedo", "puede", "podia", "pude",
    "deja", "dejo", "dejar"})
"""Words (folded) that make a negation say *cannot* or *does not stop* (rules ``offline-5``):
"no puedo respirar", "can't stop crying", "no deja de llorar". Under such a negation an
unpleasant word stays unpleasant (the writer cannot breathe, is crying), where a plain negation
flips it ("no tengo miedo", "not bad"). A pleasant word is flipped either way ("no puedo estar
tranquila"). Project choice; on the tune half of the gold, user valence Spearman 0.677 → 0.684."""


def negation_scope(toks: Sequence[str], negators: Sequence[Hit], rated: Sequence[float | None],
                   window: int) -> list[bool]:
    """For every token of ``toks``: whether its rating (``rated``, from :func:`ratings`) is
    flipped by a negator of ``negators`` ending within ``window`` tokens before it in its clause
    (:func:`empath_gate.turns.lexmatch.ends_before`), except an unpleasant rating under an
    inability (a word of :data:`INABILITY` from the negator up to the word). Pure."""
    out: list[bool] = []
    for i, rating in enumerate(rated):
        hit = ends_before(negators, toks, i, window)
        out.append(hit is not None and not (
            rating is not None and rating < 0 and any(t in INABILITY for t in toks[hit.start:i])))
    return out


__all__ = ["ENGLISH", "EN_RATINGS", "ES_RATINGS", "IDIOMS", "INABILITY", "SPANISH", "STEM_KEY", "UNRATED",
           "WordList", "negation_scope", "ratings"]
