"""Instance AI routes: threads, chat, cancel, the event stream, confirm, run debug."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from threadcase.demo_instance.apierror import ApiError
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
    if platform.store.get("threads", body.threadId) is not None:
        raise ApiError(409, f"thread {body.threadId!r} already exists; use a fresh thread id per run")
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
    return ok_plain(
        {"id": thread["id"], "threadId": thread["id"], "projectId": project_id, "createdAt": thread["createdAt"]}
    )


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
    return ok_plain({"success": True})


@router.get("/threads/{thread_id}/status")
async def thread_status(thread_id: str, request: Request) -> JSONResponse:
    """Whether a run is active, plus the thread's recent memory tasks."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    return ok_plain(platform.runs.status(thread_id))


@router.get("/threads/{thread_id}/messages")
async def thread_messages(thread_id: str, request: Request) -> JSONResponse:
    """Every stored message of the thread (seeded ones included), in order."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    return ok(platform.store.list("messages", thread_id))


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
    return ok({"cancelled": platform.runs.cancel(thread_id)})


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
    raw = await request.body()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ApiError(422, f"invalid confirm body: the body is not JSON ({exc.msg})") from None
    platform.runs.confirm(request_id, data, user_id=user.id)
    return ok({"ok": True})


@router.get("/debug/threads/{thread_id}/runs")
async def debug_runs(thread_id: str, request: Request) -> JSONResponse:
    """The thread's runs (with their steps, a threadcase extension)."""
    platform = _platform(request)
    platform.thread_for(platform.user(request), thread_id)
    # Each run's steps ride along (a threadcase extension): one request gives a client every token number.
    runs = [
        {
            "runId": r["runId"],
            "label": r.get("label"),
            "startedAt": r.get("startedAt"),
            "status": r.get("status"),
            "steps": platform.store.list("steps", r["runId"]),
        }
        for r in platform.store.list("runs", thread_id)
    ]
    return ok({"runs": runs})


@router.get("/debug/runs/{run_id}")
async def debug_run(run_id: str, request: Request) -> JSONResponse:
    """One run's steps with token usage."""
    platform = _platform(request)
    user = platform.user(request)
    run = platform.store.get("runs", run_id)
    if run is None:
        raise ApiError(404, f"run {run_id!r} not found")
    platform.thread_for(user, str(run["threadId"]))
    return ok(
        {
            "runId": run_id,
            "threadId": run["threadId"],
            "startedAt": run.get("startedAt"),
            "status": run.get("status"),
            "steps": platform.store.list("steps", run_id),
        }
    )
