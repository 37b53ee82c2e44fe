"""The fake model server answers the real openai SDK with structured output, over loopback."""

from __future__ import annotations

import openai
import pytest
from pydantic import BaseModel

from tests.fakes.openai_server import FakeOpenAI


class _Answer(BaseModel):
    reason: str
    ok: bool


@pytest.mark.anyio
async def test_fake_openai_serves_structured_output(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, base_url = fake_openai
    fake.queue({"reason": "because", "ok": True})
    async with openai.AsyncOpenAI(api_key="test", base_url=base_url, max_retries=0) as client:
        completion = await client.chat.completions.parse(
            model="fake", messages=[{"role": "user", "content": "hello"}], response_format=_Answer
        )
    parsed = completion.choices[0].message.parsed
    assert parsed == _Answer(reason="because", ok=True)
    assert "hello" in fake.prompts()[0]
    assert fake.requests[0]["response_format"]["type"] == "json_schema"
