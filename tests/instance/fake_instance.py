"""A small n8n-shaped server for client tests: counts what it saw, drops connections on demand.

Real HTTP over loopback (uvicorn in a thread), so the client's own stack is exercised: cookies,
chunked SSE, connections cut mid-response. Only the handful of routes the client tests need.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PASSWORD = "s3cret-pass-word"
COOKIE = "n8n-auth"


class Dropped(Exception):
    """Raised after a response started: uvicorn then cuts the connection mid-response."""


class FakeInstance:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: Counter[str] = Counter()
        self.events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.last_event_ids: list[str | None] = []
        self.drop_chat_response = False
        self.drop_status_times = 0
        self.busy_chat_times = 0
        """Answer chat 503 (before doing anything) this many times."""
        self.stream_plan: list[tuple[str, int]] = []
        """Per stream connection, in order: ("end" | "cut", after N events). Later connections stay open."""
        self.session = "session-1"
        """The only session cookie value accepted; :meth:`expire_sessions` invalidates the current one."""
        self.replay_overlap = 0
        """On resume, also resend this many events the client already had (tests de-duplication)."""
        self.app = Starlette(
            routes=[
                Route("/healthz/readiness", self.health),
                Route("/rest/login", self.login, methods=["POST"]),
                Route("/rest/instance-ai/chat/{thread_id}", self.chat, methods=["POST"]),
                Route("/rest/instance-ai/threads/{thread_id}/status", self.status),
                Route("/rest/instance-ai/threads/{thread_id}", self.delete_thread, methods=["DELETE"]),
                Route("/rest/instance-ai/events/{thread_id}", self.stream),
                Route("/rest/credentials", self.create_credential, methods=["POST"]),
            ]
        )

    def count(self, key: str) -> None:
        with self.lock:
            self.seen[key] += 1

    def emit(self, thread_id: str, type_: str, payload: dict[str, Any]) -> None:
        with self.lock:
            log = self.events[thread_id]
            log.append({"id": len(log) + 1, "type": type_, "payload": payload})

    def authorised(self, request: Request) -> bool:
        return request.cookies.get(COOKIE) == self.session

    def expire_sessions(self) -> None:
        """As an instance restart does: every issued cookie stops working."""
        with self.lock:
            self.session = f"session-{int(self.session.split('-')[1]) + 1}"

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def login(self, request: Request) -> Response:
        self.count("login")
        body = await request.json()
        if body.get("password") != PASSWORD:
            # Echo the attempt back, as careless servers do: the client must redact it.
            return JSONResponse({"message": "Wrong username or password", "echo": body}, status_code=401)
        response = JSONResponse({"data": {"id": "u1", "email": body["emailOrLdapLoginId"]}})
        response.set_cookie(COOKIE, self.session, httponly=True)
        return response

    async def chat(self, request: Request) -> Response:
        if not self.authorised(request):
            return JSONResponse({"message": "Unauthorized"}, status_code=401)
        if self.busy_chat_times > 0:
            self.busy_chat_times -= 1
            self.count("chat-503")
            return JSONResponse({"message": "busy"}, status_code=503)
        self.count("chat")
        thread_id = request.path_params["thread_id"]
        body = await request.json()
        run_id = f"run-{self.seen['chat']}"
        self.emit(thread_id, "run-start", {"runId": run_id})
        self.emit(thread_id, "text-delta", {"text": f"echo: {body['message']}"})
        self.emit(thread_id, "run-finish", {"runId": run_id, "status": "completed"})
        if self.drop_chat_response:
            return _cut_response()
        return JSONResponse({"data": {"runId": run_id}})

    async def status(self, request: Request) -> Response:
        self.count("status")
        if not self.authorised(request):
            return JSONResponse({"message": "Unauthorized"}, status_code=401)
        if self.drop_status_times > 0:
            self.drop_status_times -= 1
            return _cut_response()
        return JSONResponse(
            {"data": {"hasActiveRun": False, "isSuspended": False, "backgroundTasks": [], "memoryTasks": []}}
        )

    async def delete_thread(self, request: Request) -> Response:
        self.count("delete-thread")
        return JSONResponse({"message": "not found"}, status_code=404)

    async def create_credential(self, request: Request) -> Response:
        self.count("create-credential")
        body = await request.json()
        # Echo the data like some servers do; the client must drop it.
        return JSONResponse({"data": {"id": "c1", "name": body["name"], "type": body["type"], "data": body["data"]}})

    async def stream(self, request: Request) -> Response:
        if not self.authorised(request):
            return JSONResponse({"message": "Unauthorized"}, status_code=401)
        thread_id = request.path_params["thread_id"]
        if thread_id == "missing":
            return JSONResponse({"message": f"thread {thread_id} not found"}, status_code=404)
        header = request.headers.get("last-event-id")
        with self.lock:
            self.last_event_ids.append(header)
            plan = self.stream_plan.pop(0) if self.stream_plan else None
            log = self.events[thread_id]
            start = len(log) if header is None else max(0, int(header) - self.replay_overlap)

        async def body() -> AsyncIterator[bytes]:
            sent = 0
            position = start
            yield b": connected\n\n"
            while True:
                while True:
                    if plan is not None and sent >= plan[1]:
                        if plan[0] == "cut":
                            raise Dropped("cut the event stream")
                        return
                    if position >= len(log):
                        break
                    event = log[position]
                    position += 1
                    sent += 1
                    data = json.dumps({"type": event["type"], "payload": event["payload"]})
                    yield f"id: {event['id']}\nevent: {event['type']}\ndata: {data}\n\n".encode()
                yield b": heartbeat\n\n"
                await anyio.sleep(0.01)

        return StreamingResponse(body(), media_type="text/event-stream")


def _cut_response() -> Response:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"data": '
        raise Dropped("cut the response")

    return StreamingResponse(body(), media_type="application/json")
