"""The engine under a provider's rate limit: ``adaptive_concurrency`` on and off."""

from __future__ import annotations

from pathlib import Path

from conv_support import TARGET, model_settings, specs

from empath_gate.conversation.engine import generate_sync
from empath_gate.testing import FakeOpenAIServer


def _throttled(tmp_path: Path, *, adaptive: bool) -> int:
    """429s the limited server answered for one plan (12 transcripts x 3 turns, 12 at once,
    6 target calls in flight allowed, the server takes 3)."""
    tmp_path.mkdir()
    with FakeOpenAIServer(latency_s=0.05) as server:
        server.on(TARGET, "I hear you.")
        server.limit(TARGET, rps=1000, concurrent=3)
        settings = model_settings(
            server, tmp_path, max_retries=20, concurrency=12, cache_mode="off",
            adaptive_concurrency=adaptive,
        )
        settings = settings.model_copy(
            update={"target_role": settings.target_role.model_copy(update={"concurrency": 6})}
        )
        transcripts = generate_sync(specs(12, 1, max_turns=3), settings=settings)
        assert [t.status for t in transcripts] == ["complete"] * 12
        assert all(len(t.turns) == 6 for t in transcripts)
        return server.throttled


def test_adaptive_concurrency_completes_the_run_with_fewer_429s_than_a_fixed_limit(tmp_path: Path) -> None:
    fixed = _throttled(tmp_path / "fixed", adaptive=False)
    adaptive = _throttled(tmp_path / "aimd", adaptive=True)
    assert fixed > 0
    assert adaptive < fixed
