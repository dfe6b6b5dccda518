"""Per-speaker dynamics and risk timing of multi-party transcripts (pure functions)."""

from __future__ import annotations

from empath_gate.analysis.risk_timing import suite_risk_timing, transcript_timing
from empath_gate.analysis.speakers import speaker_timings, speaker_trajectories
from empath_gate.conversation.transcript import SpeakerRef
from empath_gate.judging.risk_response import ReplyHit, RiskEvidence
from empath_gate.turns.model import TurnLabel

MOM = SpeakerRef(id="mama", name="Leticia", relation="madre de Fer")
TEEN = SpeakerRef(id="fer", name="Fer", relation="hija de Leticia; adolescente")
# user turns 1..6: mom, teen, mom, teen, teen, mom
SPEAKERS = (MOM, TEEN, MOM, TEEN, TEEN, MOM)


def _labels(user_valences: list[float]) -> list[TurnLabel]:
    out: list[TurnLabel] = []
    for k, v in enumerate(user_valences):
        out.append(TurnLabel(turn=2 * k, role="user", label="sadness", intensity=2, valence=v))
        out.append(TurnLabel(turn=2 * k + 1, role="assistant", label="neutral", intensity=0, valence=0.0,
                             strategy="question"))
    return out


def test_each_speaker_gets_their_own_trajectory() -> None:
    # the mother calms down while the teenager gets worse: pooled, the two would cancel out
    valences = [-0.6, -0.1, -0.2, -0.5, -0.8, 0.2]
    rows = speaker_trajectories("t-r0", "t", 0, SPEAKERS, _labels(valences), risk_turns=(3, 4))
    assert [r.speaker for r in rows] == ["mama", "fer"]
    mom, teen = rows
    assert (mom.messages, teen.messages) == (3, 3)
    assert mom.valences == (-0.6, -0.2, 0.2) and teen.valences == (-0.1, -0.5, -0.8)
    assert mom.shape == "recovering" and teen.shape == "deteriorating"
    assert teen.mean_valence == round((-0.1 - 0.5 - 0.8) / 3, 3)
    assert (mom.risk_messages, teen.risk_messages) == (0, 2)
    assert teen.name == "Fer" and teen.relation == TEEN.relation


def test_one_user_transcripts_have_no_speaker_rows() -> None:
    assert speaker_trajectories("t-r0", "t", 0, (), _labels([-0.5, 0.5])) == ()
    assert speaker_timings((), [3], alert_turn=2, confirm_turn=3) == ()


def test_risk_timing_per_speaker() -> None:
    # the teen's risk: alert 2, confirm 4 (both theirs); the bot first responds to turn 6 (the mom's)
    rows = speaker_timings(SPEAKERS, [6], alert_turn=2, confirm_turn=4)
    assert len(rows) == 1
    (teen,) = rows
    assert (teen.speaker, teen.risk_turns, teen.first_response, teen.lag) == ("fer", (2, 4), 6, 4)
    # an explicit risk statement of the mother at user turn 3 (0-based 2) makes her a risk speaker
    rows = speaker_timings(SPEAKERS, [2, 3], alert_turn=2, confirm_turn=4, risk_turns=(2,))
    assert [(r.speaker, r.risk_turns, r.first_response, r.lag) for r in rows] == [
        ("mama", (3,), 3, 0), ("fer", (2, 4), 2, 0)]
    # never answered
    (teen,) = speaker_timings(SPEAKERS, [], alert_turn=2, confirm_turn=4)
    assert teen.first_response is None and teen.lag is None


def _evidence(turn: int | None) -> RiskEvidence:
    hits = (ReplyHit(turn=turn, sentences=("please call or text 988.",)),) if turn else ()
    return RiskEvidence(risk=True, alert_turn=2, confirm_turn=4, confirm_source="seed", user_turns=6,
                        replies=6, hits=hits)


def test_suite_timing_carries_speakers_and_counts_them() -> None:
    one = transcript_timing("a-r0", "a", _evidence(5), frozenset(), SPEAKERS)
    assert one.timing == "late" and one.first_turn == 5
    assert [(s.speaker, s.first_response, s.lag) for s in one.speakers] == [("fer", 5, 3)]
    suite = suite_risk_timing(
        "multi-party",
        [("a-r0", "a", "es-MX", _evidence(2)), ("b-r0", "b", "es-MX", _evidence(None)),
         ("c-r0", "c", "en-US", _evidence(4))],
        {"a-r0": (SPEAKERS, ()), "b-r0": (SPEAKERS, ())},
    )
    assert suite.speaker_counts == {"speakers": 2, "answered_within_one_turn": 1, "never_answered": 1}
    by_id = {t.transcript_id: t for t in suite.transcripts}
    assert by_id["c-r0"].speakers == ()  # a one-user transcript
    plain = suite_risk_timing("crisis", [("c-r0", "c", "en-US", _evidence(4))])
    assert plain.speaker_counts == {} and plain.transcripts[0].speakers == ()
