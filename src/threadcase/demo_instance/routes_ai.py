"""Instance AI routes: threads, chat, cancel, the event stream, confirm, run debug."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.bodies import decode_json
from threadcase.demo_instance.events import SSEResponse, utc_now
from threadcase.demo_instance.platform import Platform, ok, ok_plain, parse_body, parse_misbehaviours
from threadcase.wire import ChatRequest, CreateThreadRequest

__all__ = ["router"]

router = APIRouter(prefix="/rest/instance-ai")


def _platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


@router.post("/threads")
async def create_thread(request: Request) -> JSONResponse:
    """Create a chat thread in a project the caller may use (misbehaviours from ``sourceContext``)."""
    platform = _platform(request)
    user = platform.user(request)
    body = await parse_body(request, CreateThreadRequest, "thread request", direct=True)
    if not body.threadId.strip() or len(body.threadId) > 128:
        raise ApiError(422, f"invalid thread request: threadId must be 1-128 characters, got {body.threadId!r}")
    if body.sourceContext is not None and len(str(body.sourceContext)) > 2048:
        raise ApiError(422, "invalid thread request: sourceContext is larger than 2 KB")
    misbehave = parse_misbehaviours((body.sourceContext or {}).get("demoMisbehave"), "sourceContext.demoMisbehave")
    project_id = body.projectId or platform.personal_project(user)["id"]
    platform.project_for(user, project_id)
    existing = platform.store.get("threads", body.threadId)
    if existing is not None:
        if existing.get("ownerId") != user.id:
            raise ApiError(403, f"thread {body.threadId!r} belongs to another user")
        # As n8n: creating a thread that exists is a no-op that says so.
        return ok_plain({"thread": _thread_view(existing), "created": False})
    thread = {
        "id": body.threadId,
        "projectId": project_id,
        "ownerId": user.id,
        "source": body.source,
        "origin": body.origin,
        "sourceContext": body.sourceContext,
        "misbehave": sorted(misbehave),
        "agentState": {},
        "boundAgentId": None,
        "allowlist": None,
        "bypass": [],
        "createdAt": utc_now(),
    }
    platform.store.insert("threads", str(thread["id"]), thread, scope=user.id)
    return ok_plain({"thread": _thread_view(thread), "created": True})


def _thread_view(thread: dict[str, Any]) -> dict[str, Any]:
    """A thread as n8n answers it: ``{id, resourceId (the owner), createdAt, updatedAt, metadata}``."""
    metadata = {"source": thread.get("source"), "origin": thread.get("origin")}
    if thread.get("sourceContext") is not None:
        metadata["sourceContext"] = thread["sourceContext"]
    return {
        "id": thread["id"],
        "resourceId": thread.get("ownerId"),
        "createdAt": thread.get("createdAt"),
        "updatedAt": thread.get("createdAt"),
        "metadata": metadata,
    }


@router.delete("/threads/{thread_id}")
async def delete_thread(thread_id: str, request: Request) -> JSONResponse:
    """Delete a thread with its messages, events, memory, runs and debug steps."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    platform.runs.forget_thread(thread_id)
    with platform.store.tx():
        platform.store.delete("threads", thread_id)
        for kind in ("messages", "events", "observations"):
            platform.store.delete_scope(kind, thread_id)
        platform.store.delete("cursors", thread_id)
        # Runs and their debug steps go too: nothing of a deleted conversation stays in storage.
        platform.store.delete_children("steps", "runs", thread_id)
        platform.store.delete_scope("runs", thread_id)
    platform.hub.forget(thread_id)
    return ok_plain({"ok": True})


@router.get("/threads/{thread_id}/status")
async def thread_status(thread_id: str, request: Request) -> JSONResponse:
    """Whether a run is active, plus the thread's recent memory tasks."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    return ok_plain(platform.runs.status(thread_id))


def _query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ApiError(400, f"query parameter {name} must be an integer from {low} to {high}, got {raw!r}")
    return value


def _text_of(message: dict[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in message.get("content") or [] if b.get("type") == "text")


@router.get("/threads/{thread_id}/messages")
async def thread_messages(thread_id: str, request: Request) -> JSONResponse:
    """The thread's stored messages, as n8n pages them: page 0 is the newest ``limit`` (default 50,
    at most 200), oldest first within a page. By default ("rich") ``content`` is the text as one string;
    ``?raw=true`` gives the stored blocks (text, tool calls with input and output)."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    limit = _query_int(request, "limit", 50, 1, 200)
    page = _query_int(request, "page", 0, 0, 1000)
    stored = platform.store.list("messages", thread_id)
    end = max(0, len(stored) - page * limit)
    window = stored[max(0, end - limit) : end]
    if request.query_params.get("raw") == "true":
        raw = [
            {k: m.get(k) for k in ("id", "role", "content", "type", "createdAt", "seeded") if k in m} for m in window
        ]
        return ok({"threadId": thread_id, "messages": raw})
    rich = []
    for message in window:
        entry = {
            "id": message.get("id"),
            "role": message.get("role"),
            "createdAt": message.get("createdAt"),
            "content": _text_of(message),
            "reasoning": "",
            "isStreaming": False,
            "seeded": bool(message.get("seeded")),
        }
        if message.get("runId"):
            entry["runId"] = message["runId"]
        rich.append(entry)
    thread = platform.store.get("threads", thread_id) or {}
    next_event_id = len(platform.hub.log(thread_id).events) + 1
    return ok(
        {"threadId": thread_id, "projectId": thread.get("projectId"), "messages": rich, "nextEventId": next_event_id}
    )


def _attachments(platform: Platform, user_project: str, body: ChatRequest) -> list[dict[str, Any]]:
    resolved = []
    for index, attachment in enumerate(body.attachments):
        kind = "workflows" if attachment.type == "workflow" else "agents"
        doc = platform.store.get(kind, attachment.id)
        if doc is None or doc.get("projectId") != user_project:
            raise ApiError(404, f"attachments[{index}]: {attachment.type} {attachment.id!r} not found in this project")
        name = doc.get("name") if attachment.type == "workflow" else (doc.get("config") or {}).get("name")
        resolved.append({"type": attachment.type, "id": attachment.id, "name": name or attachment.name})
    return resolved


@router.post("/chat/{thread_id}")
async def chat(thread_id: str, request: Request) -> JSONResponse:
    """Start a run for one user message; answers ``{runId}`` at once, the run streams on the events route."""
    platform = _platform(request)
    user = platform.user(request)
    thread = platform.thread_for(user, thread_id)
    body = await parse_body(request, ChatRequest, "chat request", direct=True)
    if not body.message.strip() and not body.attachments:
        raise ApiError(422, "invalid chat request: message is empty and there are no attachments")
    header = parse_misbehaviours(request.headers.get("x-demo-misbehave"), "X-Demo-Misbehave header")
    misbehaviours = platform.settings.misbehave | frozenset(thread.get("misbehave") or []) | header
    run_id = platform.runs.start(
        thread,
        owner_id=user.id,
        message=body.message,
        attachments=_attachments(platform, str(thread["projectId"]), body),
        mode=body.mode,
        context=body.context,
        threshold=body.observerThresholdTokens,
        misbehaviours=misbehaviours,
    )
    return ok_plain({"runId": run_id})


@router.post("/chat/{thread_id}/cancel")
async def cancel(thread_id: str, request: Request) -> JSONResponse:
    """Cancel the thread's running turn (ends with ``run-finish`` status cancelled)."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    platform.runs.cancel(thread_id)
    return ok({"ok": True})


@router.get("/events/{thread_id}")
async def events(thread_id: str, request: Request) -> Response:
    """The thread's Server-Sent Events; live only, or replayed after ``Last-Event-ID``."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    raw = request.headers.get("last-event-id")
    after: int | None = None
    if raw is not None and raw.strip():
        try:
            after = int(raw)
        except ValueError:
            raise ApiError(422, f"Last-Event-ID must be an event id (an integer), got {raw!r}") from None
    stream = SSEResponse(
        platform.hub,
        platform.hub.log(thread_id),
        after=after,
        heartbeat=platform.settings.heartbeat_seconds,
        faults=platform.faults,
        run_active=lambda: thread_id in platform.runs.active,
    )
    return _AsgiResponse(stream)


class _AsgiResponse(Response):
    """Lets a raw ASGI callable stand where FastAPI expects a Response."""

    def __init__(self, asgi: SSEResponse) -> None:
        super().__init__()
        self._asgi = asgi

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._asgi(scope, receive, send)


@router.post("/confirm/{request_id}")
async def confirm(request_id: str, request: Request) -> JSONResponse:
    """Answer a widget (``confirmation-request``) with a kind-tagged body."""
    platform = _platform(request)
    user = platform.user(request)
    data = decode_json(await request.body(), "confirm body")
    platform.runs.confirm(request_id, data, user_id=user.id)
    return ok({"ok": True})


@router.get("/debug/threads/{thread_id}/runs")
async def debug_runs(thread_id: str, request: Request) -> JSONResponse:
    """The thread's runs, as n8n's run debug lists them (``startedAt`` in epoch milliseconds); each run's
    steps ride along (a threadcase extension): one request gives a client every token number."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    runs = []
    for r in platform.store.list("runs", thread_id):
        steps = platform.store.list("steps", r["runId"])
        runs.append(
            {
                "runId": r["runId"],
                "threadId": thread_id,
                "startedAt": r.get("startedAt"),
                "stepCount": len(steps),
                "workflowCodeCount": 0,
                "label": r.get("label"),
                "steps": steps,
            }
        )
    return ok({"threadId": thread_id, "runs": runs})


@router.get("/debug/runs/{run_id}")
async def debug_run(run_id: str, request: Request) -> JSONResponse:
    """One run's steps (``{stepNumber, input, output}``, usage in the output), as n8n answers it."""
    platform = _platform(request)
    user = platform.user(request)
    run = platform.store.get("runs", run_id)
    if run is None:
        raise ApiError(404, "Run debug record not found")
    platform.thread_for(user, str(run["threadId"]))
    steps = platform.store.list("steps", run_id)
    return ok(
        {
            "threadId": run["threadId"],
            "runId": run_id,
            "startedAt": run.get("startedAt"),
            "label": run.get("label"),
            "nextStepIndex": len(steps),
            "steps": steps,
            "workflowCode": [],
        }
    )
