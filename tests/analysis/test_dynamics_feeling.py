"""The seeker's own feeling as a trajectory, its shape and its agreement with the valence."""

from __future__ import annotations

from empath_gate.analysis.dynamics.feeling import (
    feeling_agreement,
    feeling_trajectory,
    feeling_valence,
    paired_feelings,
)
from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.runner import feelings_of


def test_feeling_trajectory_skips_missing_feelings_and_uses_the_shape_rules() -> None:
    assert feeling_trajectory(()) is None and feeling_trajectory((None, None)) is None
    t = feeling_trajectory((80, None, 60, 20))
    assert t is not None and t.messages == 3 and t.shape == "deteriorating"
    assert t.points[0] == 80.0 and t.points[-1] == 20.0 and len(t.points) == 10
    flat = feeling_trajectory((50, 50))
    assert flat is not None and flat.shape == "too_short"
    assert (feeling_valence(0), feeling_valence(50), feeling_valence(100)) == (-1.0, 0.0, 1.0)


def test_feeling_agreement_is_a_rank_correlation_or_none() -> None:
    assert feeling_agreement([(10.0, -0.5), (50.0, 0.0)]) is None, "too few pairs"
    assert feeling_agreement([(10.0, -0.5), (20.0, -0.5), (30.0, -0.5)]) is None, "a constant side"
    assert feeling_agreement([(10.0, -0.9), (40.0, -0.1), (90.0, 0.6)]) == 1.0
    assert feeling_agreement([(10.0, 0.9), (40.0, -0.1), (90.0, -0.6)]) == -1.0
    assert paired_feelings((10, None, 30), (-0.5, 0.0, 0.2)) == [(10.0, -0.5), (30.0, 0.2)]


def test_records_keep_the_auditors_feeling_per_user_message() -> None:
    def transcript(feelings: tuple[int | None, ...]) -> Transcript:
        turns = []
        for k, f in enumerate(feelings):
            turns.append(Turn(index=2 * k, role="user", content="u", source="auditor", feeling_0_100=f))
            turns.append(Turn(index=2 * k + 1, role="assistant", content="b", source="target"))
        return Transcript(suite="s", seed_id="a", persona_id="p", locale="en-US", run=0,
                          conversation_id="a-p", transcript_id="a-p-r0", target="t", auditor="openai/x",
                          max_turns=3, turns=tuple(turns))

    assert feelings_of(transcript((40, None, 70))) == (40, None, 70)
    assert feelings_of(transcript((None, None))) == ()
