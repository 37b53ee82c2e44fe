"""A fake OpenAI-compatible chat server for tests: queued, schema-valid answers; recorded prompts.

Tests queue what the "model" answers (a dict becomes the JSON content of a structured output, a
string is plain content — malformed for a structured call —, an int is an HTTP error status) and read
back every request the server received, so they can assert the prompt actually sent. The real
``openai`` SDK talks to it over 127.0.0.1, exercising its own HTTP stack. When the queue is empty the
server answers 500, so a test that makes more calls than it planned fails loudly rather than silently.

Three behaviours of real servers on demand: **slow** (``delay_seconds`` for every answer, or
``delays`` queued per request), **echoing** (``responder``: the answer computed from the request, for
suites whose calls are not known in advance) and **malformed** (queue a string where JSON is
expected). ``usage`` sets the token numbers each answer reports (cached prompt tokens included).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

__all__ = ["FakeOpenAI"]


class FakeOpenAI:
    """State and ASGI app of one fake model server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []
        self.delay_seconds = 0.0
        self.delays: deque[float] = deque()
        """Per-request delays, taken in order before ``delay_seconds`` applies."""
        self.responder: Callable[[dict[str, Any]], Any] | None = None
        """When set and the queue is empty: the answer for a request, computed from its body."""
        self.usage = {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 0}
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._chat)

    def queue(self, *answers: Any) -> None:
        """Queue answers: dict -> JSON content, str -> text content, int -> that HTTP status."""
        with self._lock:
            self._queue.extend(answers)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def prompts(self) -> list[str]:
        """Every received request's messages flattened to one string each."""
        out = []
        for req in self.requests:
            parts = []
            for message in req.get("messages", []):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
                parts.append(f"[{message.get('role')}] {content}")
            out.append("\n".join(parts))
        return out

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            responder = self.responder
            answer = self._queue.popleft() if self._queue else (responder(body) if responder else 500)
            delay = self.delays.popleft() if self.delays else self.delay_seconds
        if delay:
            await anyio.sleep(delay)
        if isinstance(answer, int):
            return JSONResponse({"error": {"message": f"fake status {answer}", "type": "fake"}}, status_code=answer)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return JSONResponse(
            {
                "id": f"chatcmpl-fake-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake-model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content, "refusal": None},
                    }
                ],
                "usage": {
                    "prompt_tokens": self.usage["prompt_tokens"],
                    "completion_tokens": self.usage["completion_tokens"],
                    "total_tokens": self.usage["prompt_tokens"] + self.usage["completion_tokens"],
                    "prompt_tokens_details": {"cached_tokens": self.usage["cached_tokens"]},
                },
            }
        )
