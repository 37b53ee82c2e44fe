"""A scripted OpenAI-compatible model for a real n8n to call: streamed chat completions on loopback.

n8n's Instance AI talks to a model through the Vercel AI SDK (see
``/work/shared/reference/n8n-2.41-agent-protocol.md``): ``POST {url}/chat/completions`` with
``stream: true`` for the orchestrator (tools offered), and a non-streaming request with no tools for
the thread title. A model configured through n8n's settings as an ``openAiApi`` connection with a
custom URL first tries ``POST {url}/responses`` and falls back to chat completions on a 404 that
says the route is unknown; this server answers that 404 so every call lands on chat completions.

Tests queue what the model does next (:class:`Reply`): stream a short text with usage, or fail with
an HTTP status and a provider message. An empty queue answers with :attr:`FakeModel.default`. Every
request is recorded (path and JSON body) so a test can assert what n8n sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

__all__ = ["FakeModel", "Reply"]


@dataclass(frozen=True)
class Reply:
    """One answer of the fake model: ``text`` streamed in words, or an HTTP ``status`` with ``message``."""

    text: str = "Hello from the fake model."
    status: int = 200
    message: str = ""
    prompt_tokens: int = 120
    completion_tokens: int = 7

    @classmethod
    def failure(cls, status: int, message: str) -> Reply:
        """The provider refuses the call: HTTP ``status`` with an OpenAI-style error body."""
        return cls(status=status, message=message)


class FakeModel:
    """State and ASGI app of one fake model server (serve ``app`` on 127.0.0.1; base URL + ``/v1``)."""

    def __init__(self, default: Reply | None = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self.default = default or Reply()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._chat)
        self.app.post("/v1/responses")(self._responses)

    def queue(self, *replies: Reply) -> None:
        """The next chat-completion requests get these replies, in order (then :attr:`default`)."""
        with self._lock:
            self._queue.extend(replies)

    def clear(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def orchestrator_requests(self) -> list[dict[str, Any]]:
        """Chat requests that offered tools (the agent's steps, not the title call)."""
        with self._lock:
            return [body for path, body in self.requests if path.endswith("/chat/completions") and body.get("tools")]

    async def _responses(self, request: Request) -> JSONResponse:
        with self._lock:
            self.requests.append((request.url.path, {}))
        # The AI SDK falls back to chat completions when a custom endpoint says this route is unknown.
        return JSONResponse(
            {"error": {"message": "Unknown request URL: POST /v1/responses", "code": "unknown_url"}}, status_code=404
        )

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append((request.url.path, body))
            # The title request (no tools) is not the agent's turn: it never takes a queued reply.
            reply = self._queue.popleft() if self._queue and body.get("tools") else self.default
        if reply.status != 200:
            error = {"message": reply.message or f"fake model status {reply.status}", "type": "fake_error"}
            return JSONResponse({"error": error}, status_code=reply.status)
        model = str(body.get("model", "fake"))
        if not body.get("stream"):
            return JSONResponse(_completion(model, reply))
        return StreamingResponse(_stream(model, reply), media_type="text/event-stream")


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.text}}],
        "usage": _usage(reply),
    }


async def _stream(model: str, reply: Reply) -> AsyncIterator[bytes]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def frame(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n"

    yield frame([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    words = reply.text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == 0 else " " + word
        yield frame([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
    yield frame([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    yield frame([], usage=_usage(reply))
    yield b"data: [DONE]\n\n"
