"""The scripted OpenAI-compatible model: an ASGI app answering chat completions from a script.

Speaks what n8n 2.41's agent framework (the Vercel AI SDK's OpenAI-compatible provider) sends and
accepts: ``POST /v1/chat/completions`` streamed (``data:`` chunks with ``delta.content`` or
``delta.tool_calls``, a final chunk with ``finish_reason``, a ``choices: []`` chunk with ``usage``,
``data: [DONE]``) or not (one ``chat.completion`` with ``usage``); ``GET /v1/models``. Every answer
reports token usage (the rule's, or an estimate of four characters a token), which n8n's run debug
records per step.

``GET /threadcase/log`` lists what was asked and which rule answered (the newest 2,000), so a
script's gaps and n8n's calls can be read back; ``--log FILE`` appends the same as JSON lines.
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from threadcase.standins.answers import Answer, answer
from threadcase.standins.asks import Ask, read_ask
from threadcase.standins.script import ModelScript, ScriptError

__all__ = ["ScriptedModel", "completion_body", "create_app", "serve_forever", "stream_chunks"]

LOG_KEEP = 2000
_TEXT_PIECE = 24
_ARGUMENT_PIECE = 512


class ScriptedModel:
    """The script, the request counter and the log of one server."""

    def __init__(self, script: ModelScript, *, api_key: str = "", log_path: Path | None = None) -> None:
        self.script = script
        self.api_key = api_key
        self.log_path = log_path
        self._lock = threading.Lock()
        self._count = 0
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_KEEP)

    def next_number(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.log.append(entry)
            if self.log_path is not None:
                with open(self.log_path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(entry) + "\n")


def _usage(ask: Ask, reply: Answer) -> dict[str, int]:
    if reply.usage is not None:
        prompt, completion = reply.usage.prompt_tokens, reply.usage.completion_tokens
    else:
        produced = len(reply.text or "") + sum(len(name) + len(json.dumps(args)) for name, args in reply.tool_calls)
        prompt, completion = max(1, math.ceil(ask.size_chars() / 4)), max(1, math.ceil(produced / 4))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _tool_call_objects(number: int, reply: Answer) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{number}_{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for index, (name, args) in enumerate(reply.tool_calls)
    ]


def completion_body(number: int, model: str, reply: Answer, usage: dict[str, int]) -> dict[str, Any]:
    """A non-streamed ``chat.completion``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = _tool_call_objects(number, reply)
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": usage,
    }


def stream_chunks(number: int, model: str, reply: Answer, usage: dict[str, int]) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer, in order (``[DONE]`` not included)."""
    base = {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        chunks.extend(chunk({"content": piece}) for piece in _pieces(reply.text, _TEXT_PIECE))
    for index, call in enumerate(_tool_call_objects(number, reply)):
        opening = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [opening]}))
        for piece in _pieces(call["function"]["arguments"], _ARGUMENT_PIECE):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    chunks.append({**base, "choices": [], "usage": usage})
    return chunks


def create_app(model: ScriptedModel) -> FastAPI:
    """The ASGI app serving ``model``."""
    app = FastAPI(title="threadcase scripted model", docs_url=None, redoc_url=None, openapi_url=None)

    def refused(request: Request) -> Response | None:
        if not model.api_key:
            return None
        if request.headers.get("authorization", "") != f"Bearer {model.api_key}":
            return JSONResponse({"error": {"message": "invalid API key", "type": "invalid_request_error"}}, 401)
        return None

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        denied = refused(request)
        if denied is not None:
            return denied
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "threadcase"} for name in model.script.models]
        return JSONResponse({"object": "list", "data": data})

    @app.get("/threadcase/log")
    async def log() -> Response:
        return JSONResponse({"requests": list(model.log)})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        denied = refused(request)
        if denied is not None:
            return denied
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "the body is not JSON", "type": "invalid_request_error"}}, 400)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return JSONResponse({"error": {"message": "messages is required", "type": "invalid_request_error"}}, 400)
        number = model.next_number()
        ask = read_ask(body)
        reply = answer(model.script, ask)
        usage = _usage(ask, reply)
        model.record(
            {
                "n": number,
                "at": time.time(),
                "agent": ask.agent,
                "after": ask.after,
                "stream": ask.stream,
                "source": reply.source,
                "userText": ask.user_text[:200],
                "toolCalls": [name for name, _ in reply.tool_calls],
                "text": (reply.text or "")[:200],
                "usage": usage,
                "status": reply.error.status if reply.error else 200,
                **({"problem": reply.problem} if reply.problem else {}),
            }
        )
        if reply.delay_ms:
            await anyio.sleep(reply.delay_ms / 1000)
        if reply.error is not None:
            error = {"message": reply.error.message, "type": "threadcase_scripted", "code": None}
            return JSONResponse({"error": error}, status_code=reply.error.status)
        name = ask.model or model.script.models[0]
        if not ask.stream:
            return JSONResponse(completion_body(number, name, reply, usage))

        async def events() -> AsyncIterator[bytes]:
            for item in stream_chunks(number, name, reply, usage):
                yield f"data: {json.dumps(item)}\n\n".encode()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return app


def serve_forever(model: ScriptedModel, *, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve ``model`` until interrupted; ``ready`` gets the base URL (``http://HOST:PORT/v1``) once bound."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ScriptError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(create_app(model), log_level="warning", access_log=False, ws="none"))
    ready(f"http://{host}:{sock.getsockname()[1]}/v1")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
