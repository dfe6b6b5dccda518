"""The fake server's Files and Batch APIs, driven by the ``openai`` client (OpenAI's batch format)."""

from __future__ import annotations

import io
import json

import openai

from empath_gate.testing import FAKE_API_KEY, FakeOpenAIServer, Fault
from empath_gate.testing.fixtures import fake_openai

__all__ = ["fake_openai"]


def _line(custom_id: str, model: str, text: str) -> dict[str, object]:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": model, "messages": [{"role": "user", "content": text}]}}


def test_upload_create_poll_and_download_a_batch(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("judge-x", "first verdict", Fault.rate_limit(), "third verdict")
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=FAKE_API_KEY, max_retries=0)
    lines = [_line("t-1", "judge-x", "one"), _line("t-2", "judge-x", "two"), _line("t-3", "judge-x", "three")]
    payload = "".join(json.dumps(x) + "\n" for x in lines).encode()
    uploaded = client.files.create(file=("in.jsonl", io.BytesIO(payload)), purpose="batch")
    assert uploaded.id.startswith("file-fake-") and uploaded.bytes == len(payload)
    assert client.files.content(uploaded.id).content == payload

    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                  completion_window="24h")
    assert batch.status == "in_progress" and batch.output_file_id is None
    # the lines went through the chat route: each is a recorded request, in file order
    assert [r.body["messages"][0]["content"] for r in fake_openai.requests_for("judge-x")  # type: ignore[index]
            ] == ["one", "two", "three"]
    polled = client.batches.retrieve(batch.id)
    assert polled.status == "in_progress"  # batch_pending_polls = 1
    done = client.batches.retrieve(batch.id)
    assert done.status == "completed" and done.output_file_id is not None
    assert done.request_counts is not None
    assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (3, 2, 1)

    out = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert [o["custom_id"] for o in out] == ["t-1", "t-2", "t-3"]
    assert [o["response"]["status_code"] for o in out] == [200, 429, 200]
    first = out[0]["response"]["body"]
    assert first["choices"][0]["message"]["content"] == "first verdict"
    assert "error" in out[1]["response"]["body"] and out[2]["error"] is None


def test_unknown_ids_and_a_bad_input_file_are_errors(fake_openai: FakeOpenAIServer) -> None:
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=FAKE_API_KEY, max_retries=0)
    try:
        client.batches.retrieve("batch_nope")
        raise AssertionError("an unknown batch must be a 404")
    except openai.NotFoundError:
        pass
    bad = client.files.create(file=("in.jsonl", io.BytesIO(b"{not json\n")), purpose="batch")
    try:
        client.batches.create(input_file_id=bad.id, endpoint="/v1/chat/completions", completion_window="24h")
        raise AssertionError("a non-JSON input line must be refused")
    except openai.BadRequestError as exc:
        assert "bad input file" in str(exc)
