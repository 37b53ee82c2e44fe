"""Run orchestration: one agent turn per chat message, as a background task of the server.

A chat stores the user message, emits ``run-start`` and starts the turn; the agent acts only through
:class:`RunContext` (the platform's ``AgentContext``). Whatever happens — completion, cancellation,
an agent crash — the run ends with exactly one ``run-finish`` ``{runId, status}``, emitted *after*
the thread is idle again and after any memory task is queued, so a client reacting to ``run-finish``
immediately sees the true thread status and may send its next message at once.

Token accounting: one LLM step per ``call_tool`` and ``ask`` and one final step; input = instructions
+ tool schemas + observations + visible history + this run so far; cached input = what the previous
step of this thread already read (the static prefix only, after compaction changed the history);
output = what the agent wrote since the previous step.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import TypeAdapter, ValidationError

from threadcase.demo_instance.agent.protocol import (
    READ_LIMIT_CHARS,
    BuilderAgent,
    HistoryMessage,
    ToolFailed,
    TurnInput,
)
from threadcase.demo_instance.apierror import ApiError, validation_message
from threadcase.demo_instance.events import EventHub, epoch_ms, hex_id, utc_now
from threadcase.demo_instance.memory import (
    DEFAULT_THRESHOLD,
    FORGETS_AFTER_COMPACTION,
    estimate_tokens,
    forget_user_details,
    observe,
    visible_tokens,
)
from threadcase.demo_instance.offload import heavy_turn, run_turn_off_loop
from threadcase.demo_instance.settings import DemoSettings
from threadcase.demo_instance.storage import Store
from threadcase.demo_instance.tools import TOOL_SCHEMAS, ToolError, ToolScope, run_tool
from threadcase.demo_instance.traces import TraceWriter, turn_runs
from threadcase.wire import ConfirmationRequest, ConfirmBody, Observation

__all__ = ["INSTRUCTIONS_TOKENS", "RunContext", "RunManager", "visible_messages"]

INSTRUCTIONS_TOKENS = 1_800
"""The size of the builder's system prompt, as if it had one."""
TOOL_SCHEMA_TOKENS = estimate_tokens(json.dumps(TOOL_SCHEMAS))
STATIC_TOKENS = INSTRUCTIONS_TOKENS + TOOL_SCHEMA_TOKENS

_CONFIRM = TypeAdapter(ConfirmBody)
_LIVE_TASK = frozenset({"queued", "running"})
"""n8n lists a memory task only while it is queued or running."""
_PROMPT_CONFIGURATION = {"version": "demo@1", "systemPromptVersion": "demo-builder@1", "skillVariants": []}
"""What ``promptConfiguration`` says once a thread has run (n8n names its prompt version there)."""
_Turn = tuple["ActiveRun", dict[str, Any]]


def visible_messages(store: Store, thread_id: str) -> list[dict[str, Any]]:
    """The thread's messages after the observation cursor (all of them before any compaction)."""
    return _after_cursor(store.list("messages", thread_id), store.get("cursors", thread_id))


def _after_cursor(messages: list[dict[str, Any]], cursor: dict[str, Any] | None) -> list[dict[str, Any]]:
    if cursor is None:
        return messages
    last = cursor["lastObservedMessageId"]
    for index, message in enumerate(messages):
        if message.get("id") == last:
            return messages[index + 1 :]
    return messages


def _history(message: dict[str, Any]) -> HistoryMessage | None:
    role = message.get("role")
    if role not in ("user", "assistant"):
        return None
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    return HistoryMessage(
        id=str(message.get("id")),
        role=role,
        # A past message the agent refused for its length is read only up to the limit, like a new one.
        text="".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")[:READ_LIMIT_CHARS],
        tool_calls=[
            {"toolName": b.get("toolName"), "args": b.get("input"), "result": b.get("output")}
            for b in blocks
            if b.get("type") == "tool-call"
        ],
        seeded=bool(message.get("seeded")),
        created_at=str(message.get("createdAt") or ""),
    )


@dataclass
class Waiter:
    """A widget waiting for its confirm."""

    request_id: str
    thread_id: str
    owner_id: str
    run_id: str
    event: anyio.Event = field(default_factory=anyio.Event)
    body: dict[str, Any] | None = None
    closed: bool = False


@dataclass
class ActiveRun:
    """The running turn of one thread: its ids, events, tool calls and token counters."""

    run_id: str
    thread_id: str
    owner_id: str
    message: str
    started_at: str
    misbehaviours: frozenset[str]
    threshold: int
    scope: anyio.CancelScope | None = None
    cancel_requested: bool = False
    blocks: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    spawned: list[str] = field(default_factory=list)
    said: str = ""
    base_tokens: int = 0
    prefix_key: str = ""
    run_tokens: int = 0
    pending_output: str = ""
    step_count: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)
    # What the run read of its thread at its start, kept current by its own writes, so finishing does not
    # read it all back: the visible messages, their token estimate, and how many messages the thread had.
    visible: list[dict[str, Any]] | None = None
    visible_tokens: int = 0
    message_count: int = 0

    started_ms: int = 0
    """When the run started, in epoch milliseconds (run debug's ``startedAt``, as n8n sends it)."""
    agent_id: str = ""
    """The orchestrator's id, on every event of the run (n8n: ``orchestrator-<runId>``)."""
    step_began: float = field(default_factory=time.perf_counter)
    """When the current agent step began (the run's start, then each step's end): its ``stepTimeMs``."""
    waiting: int = 0
    """Widgets of this run waiting for their answer: the thread is then suspended, not running."""

    def doc(self, status: str) -> dict[str, Any]:
        """The run as stored (``runs`` kind) with ``status``."""
        return {
            "runId": self.run_id,
            "threadId": self.thread_id,
            "startedAt": self.started_ms,
            "status": status,
            "label": self.message[:80],
        }


class RunContext:
    """The platform's ``AgentContext`` for one run."""

    def __init__(self, manager: RunManager, run: ActiveRun, scope: ToolScope) -> None:
        self._m = manager
        self._run = run
        self._scope = scope

    async def _latency(self) -> None:
        if self._m.settings.latency_ms:
            await anyio.sleep(self._m.settings.latency_ms / 1000)

    def _emit(
        self, type: str, payload: dict[str, Any], *, agent_id: str | None = None, response_id: str | None = None
    ) -> None:
        run = self._run
        self._m.hub.log(run.thread_id).append(
            type, payload, run_id=run.run_id, agent_id=agent_id or run.agent_id, response_id=response_id
        )

    async def say(self, text: str) -> None:
        """Stream text to the user as ``text-delta`` events."""
        await self._latency()
        run = self._run
        if run.said and text and not run.said[-1].isspace() and not text[0].isspace():
            # Separate two utterances the way a client concatenating deltas would want to read them.
            text = "\n\n" + text
        run.said += text
        run.pending_output += text
        if run.blocks and run.blocks[-1].get("type") == "text":
            run.blocks[-1]["text"] += text
        else:
            run.blocks.append({"type": "text", "text": text})
        # One response per agent step, as n8n's responseId (``<run>:step:<n>``) tells them apart.
        self._emit("text-delta", {"text": text}, response_id=f"{run.run_id}:step:{run.step_count + 1}")

    async def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run a platform tool (``tool-call`` then ``tool-result`` or ``tool-error``); returns its result."""
        await self._latency()
        run = self._run
        call_id = f"call_{hex_id()[:16]}"
        self._m.record_step(run, "tool-calls", json.dumps({"tool": name, "args": args}, default=str))
        started = utc_now()
        self._emit("tool-call", {"toolCallId": call_id, "toolName": name, "args": args})
        # A tool runs against the thread as it is now (an allowlist may have been re-pinned mid-run).
        thread = self._m.store.get("threads", run.thread_id) or self._scope.thread
        scope = ToolScope(self._m.store, thread, self._scope.owner_id)
        try:
            try:
                result = run_tool(scope, name, args)
            except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
                # Arguments of a shape the tool did not expect: the agent sees a tool error, as with a model.
                raise ToolError(f"invalid arguments for {name}: {type(exc).__name__}: {exc}") from exc
        except ToolError as exc:
            message = str(exc)
            self._emit("tool-error", {"toolCallId": call_id, "toolName": name, "error": message})
            self._record_call(call_id, name, args, None, message, started)
            raise ToolFailed(message) from None
        self._emit("tool-result", {"toolCallId": call_id, "toolName": name, "result": result})
        self._record_call(call_id, name, args, result, None, started)
        return result

    def _record_call(
        self, call_id: str, name: str, args: dict[str, Any], result: Any, error: str | None, started: str
    ) -> None:
        run = self._run
        block: dict[str, Any] = {
            "type": "tool-call",
            "toolCallId": call_id,
            "toolName": name,
            "state": "resolved" if error is None else "error",
            "input": args,
            "output": result if error is None else {"error": error},
        }
        run.blocks.append(block)
        run.calls.append(
            {
                "toolName": name,
                "input": args,
                "output": result,
                "error": error,
                "startedAt": started,
                "endedAt": utc_now(),
            }
        )
        run.run_tokens += estimate_tokens(json.dumps(block["output"], default=str))

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Show a widget (``confirmation-request``) and wait for the user's confirm body."""
        await self._latency()
        run = self._run
        request_id = f"req_{hex_id()}"
        payload = {**request, "requestId": request_id}
        ConfirmationRequest.model_validate(payload)  # an agent bug surfaces here, not in a client
        self._m.record_step(run, "tool-calls", json.dumps(request, default=str))
        waiter = Waiter(request_id, run.thread_id, run.owner_id, run.run_id)
        self._m.waiters[request_id] = waiter
        started = utc_now()
        self._emit("confirmation-request", payload)
        run.waiting += 1
        try:
            await waiter.event.wait()
        finally:
            run.waiting -= 1
            waiter.closed = True
        assert waiter.body is not None
        answer = waiter.body
        run.blocks.append(
            {
                "type": "tool-call",
                "toolCallId": request_id,
                "toolName": "ask-user",
                "state": "resolved",
                "input": request,
                "output": answer,
            }
        )
        run.calls.append(
            {
                "toolName": "ask-user",
                "input": request,
                "output": answer,
                "error": None,
                "startedAt": started,
                "endedAt": utc_now(),
            }
        )
        run.run_tokens += estimate_tokens(json.dumps(answer))
        return answer

    async def spawn(self, role: str, target: dict[str, Any] | None = None) -> str:
        """Start a sub-agent (``agent-spawned``); returns its id."""
        agent_id = f"agent-{hex_id()[:12]}"
        self._run.spawned.append(agent_id)
        # As n8n: the sub-agent's id is the event's own agentId; the payload names its parent.
        payload: dict[str, Any] = {"parentId": self._run.agent_id, "role": role, "tools": []}
        if target is not None:
            payload["targetResource"] = target
        self._emit("agent-spawned", payload, agent_id=agent_id)
        return agent_id

    async def complete(self, agent_id: str) -> None:
        """Mark a sub-agent finished (``agent-completed``)."""
        if agent_id in self._run.spawned:
            self._run.spawned.remove(agent_id)
            self._emit("agent-completed", {"role": "sub-agent", "result": ""}, agent_id=agent_id)


class RunManager:
    """Starts, cancels and finishes runs; holds pending widgets and memory tasks."""

    def __init__(
        self,
        *,
        settings: DemoSettings,
        store: Store,
        hub: EventHub,
        agent: BuilderAgent | None,
        tracer: TraceWriter | None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.hub = hub
        self._agent = agent
        self._builtin_agent = agent is None
        """The rule-based agent awaits nothing but its context, so a long turn of it can compute off the loop."""
        self.tracer = tracer
        self.active: dict[str, ActiveRun] = {}
        self.waiters: dict[str, Waiter] = {}
        self.memory_tasks: dict[str, list[dict[str, Any]]] = {}
        self._memory_idle: dict[str, anyio.Event] = {}
        self._last_step: dict[str, tuple[str, int]] = {}
        self.tg: TaskGroup | None = None
        # Run workers: tasks of ``tg`` that run one turn after another. Handing a turn to an idle worker
        # costs a fifth of starting a task for it (~12 µs with anyio's task bookkeeping); a worker is
        # added only when every one is busy, so there are as many as runs were ever in flight at once.
        self._idle_workers = 0
        self._handoff: tuple[MemoryObjectSendStream[_Turn], MemoryObjectReceiveStream[_Turn]] | None = None

    # --- agent ----------------------------------------------------------------------------------

    def agent(self) -> BuilderAgent:
        """The builder agent that runs turns (the rule-based one unless injected)."""
        if self._agent is None:
            # Resolved on first use so the platform starts (and its tests run) without the builder.
            module = importlib.import_module("threadcase.demo_instance.agent")
            run_turn = getattr(module, "run_turn", None)
            if run_turn is None:
                raise RuntimeError(
                    "the rule-based builder agent is not installed (threadcase.demo_instance.agent.run_turn)"
                )
            self._agent = run_turn
        return self._agent

    # --- status ---------------------------------------------------------------------------------

    def status(self, thread_id: str) -> dict[str, Any]:
        """The thread's status as n8n 2.41 answers it: ``{hasActiveRun, isSuspended, runId?,
        backgroundTasks, memoryTasks, promptConfiguration?}`` (memory tasks only while queued or running)."""
        run = self.active.get(thread_id)
        suspended = run is not None and run.waiting > 0
        status: dict[str, Any] = {
            "hasActiveRun": run is not None and not suspended,
            "isSuspended": suspended,
            "backgroundTasks": [
                {"taskId": a, "agentId": a, "status": "running", "runId": run.run_id} for a in run.spawned
            ]
            if run is not None
            else [],
            "memoryTasks": [dict(t) for t in self.memory_tasks.get(thread_id, []) if t["status"] in _LIVE_TASK],
        }
        if run is not None:
            status["runId"] = run.run_id
        if self.store.count("runs", thread_id):
            status["promptConfiguration"] = dict(_PROMPT_CONFIGURATION)
        return status

    # --- chat -----------------------------------------------------------------------------------

    def start(
        self,
        thread: dict[str, Any],
        *,
        owner_id: str,
        message: str,
        attachments: list[dict[str, Any]],
        mode: str | None,
        context: dict[str, Any] | None,
        threshold: int | None,
        misbehaviours: frozenset[str],
    ) -> str:
        """Start a run for a chat message; returns its run id (409 while one is running)."""
        thread_id = str(thread["id"])
        if thread_id in self.active:
            raise ApiError(409, f"thread {thread_id} already has a run in progress; wait for run-finish or cancel it")
        if self.tg is None:
            raise ApiError(503, "the demo instance is shutting down")
        run_id = f"run_{hex_id()}"
        now = utc_now()
        run = ActiveRun(
            run_id=run_id,
            thread_id=thread_id,
            owner_id=owner_id,
            message=message,
            started_at=now,
            misbehaviours=misbehaviours,
            threshold=threshold or int(thread.get("observerThresholdTokens") or DEFAULT_THRESHOLD),
            started_ms=epoch_ms(),
            agent_id=f"orchestrator-{run_id}",
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": message}]
        if attachments:
            content.append({"type": "attachments", "attachments": attachments})
        user_message = {
            "id": f"msg_{hex_id()}",
            "role": "user",
            "type": "llm",
            "content": content,
            "createdAt": now,
            "seeded": False,
        }
        with self.store.tx():
            self.store.insert("messages", str(user_message["id"]), user_message, scope=thread_id)
            self.store.insert("runs", run_id, run.doc("running"), scope=thread_id)
            attached = [a["id"] for a in attachments if a["id"] not in thread.get("attached", [])]
            if threshold or attached:
                if threshold:
                    thread["observerThresholdTokens"] = threshold
                # An attachment is a hand-off: the conversation may see that artifact from now on.
                thread["attached"] = [*thread.get("attached", []), *attached]
                self.store.put("threads", thread_id, thread, scope=owner_id)
        self.active[thread_id] = run
        self.hub.log(thread_id).append(
            "run-start", {"messageId": user_message["id"]}, run_id=run_id, agent_id=run.agent_id
        )
        turn_args = {
            "attachments": attachments,
            "context": context,
            "mode": mode or "progressive",
            "user_message_id": user_message["id"],
        }
        if self._idle_workers and self._handoff is not None:
            self._idle_workers -= 1
            self._handoff[0].send_nowait((run, turn_args))
        else:
            self.tg.start_soon(self._worker, run, turn_args, name="demo run worker")
        return run_id

    async def _worker(self, run: ActiveRun, turn_args: dict[str, Any]) -> None:
        """Run this turn, then each turn handed over while idle, until the stream closes or shutdown."""
        if self._handoff is None:
            self._handoff = anyio.create_memory_object_stream[_Turn](math.inf)
        receive = self._handoff[1]
        while True:
            await self._execute(run, turn_args)
            self._idle_workers += 1
            try:
                run, turn_args = await receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            except BaseException:
                self._idle_workers -= 1  # cancelled while idle (shutdown): no longer a worker to hand to
                raise

    def close(self) -> None:
        """Close the workers' hand-off stream (idle workers end; call once no run can start)."""
        if self._handoff is not None:
            for stream in self._handoff:
                stream.close()

    def cancel(self, thread_id: str) -> bool:
        """Cancel the thread's running turn, if any."""
        run = self.active.get(thread_id)
        if run is None:
            return False
        run.cancel_requested = True
        if run.scope is not None:
            run.scope.cancel()
        return True

    # --- confirm --------------------------------------------------------------------------------

    def confirm(self, request_id: str, raw: Any, *, user_id: str) -> None:
        """Deliver a confirm body to the widget waiting on ``request_id`` (idempotent per body)."""
        waiter = self.waiters.get(request_id)
        if waiter is None or waiter.owner_id != user_id:
            raise ApiError(404, f"confirmation request {request_id!r} not found (it was never asked on your threads)")
        try:
            body = _CONFIRM.validate_python(raw)
        except ValidationError as exc:
            raise ApiError(422, validation_message(exc, "confirm body")) from None
        as_dict = body.model_dump(exclude_none=True)
        if waiter.body is not None:
            if waiter.body == as_dict:
                return  # idempotent: the same answer twice is one delivery
            raise ApiError(409, f"confirmation request {request_id!r} was already answered with a different body")
        if waiter.closed:
            raise ApiError(409, f"confirmation request {request_id!r} is no longer pending (its run ended)")
        waiter.body = as_dict
        waiter.event.set()

    # --- tokens ---------------------------------------------------------------------------------

    def record_step(self, run: ActiveRun, finish: str, written: str) -> None:
        """Record one agent step with its token usage for run debug."""
        run.pending_output += written
        output_tokens = estimate_tokens(run.pending_output)
        input_tokens = run.base_tokens + run.run_tokens
        previous = self._last_step.get(run.thread_id)
        if previous is None:
            cached = 0
        elif previous[0] == run.prefix_key:
            cached = min(previous[1], input_tokens)
        else:
            cached = min(STATIC_TOKENS, input_tokens)
        self._last_step[run.thread_id] = (run.prefix_key, input_tokens)
        # n8n's run-debug step: {stepNumber, input, output}, the output's usage as the AI SDK reports it.
        step = {
            "stepNumber": run.step_count,  # from 0, as n8n counts
            "input": {"stepNumber": run.step_count, "provider": "demo", "modelId": "demo-builder"},
            "output": {
                "content": [{"type": "text", "text": run.pending_output}] if run.pending_output else [],
                "finishReason": finish,
                "model": {"provider": "demo", "modelId": "demo-builder"},
                "usage": {
                    "inputTokens": input_tokens,
                    "inputTokenDetails": {
                        "noCacheTokens": input_tokens - cached,
                        "cacheReadTokens": cached,
                        "cacheWriteTokens": input_tokens - cached,
                    },
                    "outputTokens": output_tokens,
                    "outputTokenDetails": {"textTokens": output_tokens, "reasoningTokens": 0},
                    "totalTokens": input_tokens + output_tokens,
                },
                "providerMetadata": {"demo": {"estimate": "chars/4"}},
                # As n8n records each step's timing (the agent's latency included).
                "performance": {"stepTimeMs": round((time.perf_counter() - run.step_began) * 1000, 3)},
            },
        }
        run.step_began = time.perf_counter()
        self.store.insert("steps", f"{run.step_count:06d}", step, scope=run.run_id)
        run.steps.append(step)
        run.step_count += 1
        run.run_tokens += output_tokens
        run.pending_output = ""

    # --- the run itself -------------------------------------------------------------------------

    async def _execute(self, run: ActiveRun, turn_args: dict[str, Any]) -> None:
        status, reason = "completed", None
        turn: TurnInput | None = None
        try:
            idle = self._memory_idle.get(run.thread_id)
            if idle is not None:
                await idle.wait()  # a compaction in flight decides what this turn may see
            thread = self.store.get("threads", run.thread_id)
            if thread is None:
                raise RuntimeError("thread was deleted")
            turn = self._turn_input(run, thread, turn_args)
            ctx = RunContext(self, run, ToolScope(self.store, thread, run.owner_id))
            with anyio.CancelScope() as scope:
                run.scope = scope
                if run.cancel_requested:
                    scope.cancel()
                agent = self.agent()
                if self._builtin_agent and heavy_turn(turn):
                    # A long message: parsing it must not hold up every other request (see offload.py).
                    await run_turn_off_loop(agent, turn, ctx)
                else:
                    await agent(turn, ctx)
            if scope.cancelled_caught:
                status, reason = "cancelled", "cancelled by the user"
            else:
                self.record_step(run, "stop", "")
        except Exception as exc:
            status, reason = "error", f"{type(exc).__name__}: {exc}"
        # Synchronous on purpose: nothing can interrupt finishing, so run-finish is always emitted.
        self._finish(run, status, reason, turn)

    def _turn_input(self, run: ActiveRun, thread: dict[str, Any], turn_args: dict[str, Any]) -> TurnInput:
        messages = self.store.list("messages", run.thread_id)
        stored_cursor = self.store.get("cursors", run.thread_id)
        visible_all = _after_cursor(messages, stored_cursor)
        user_id = turn_args["user_message_id"]
        visible = [m for m in visible_all if m.get("id") != user_id]
        observations = [Observation.model_validate(o) for o in self.store.list("observations", run.thread_id)]
        history = [h for h in (_history(m) for m in visible) if h is not None]
        obs_tokens = sum(estimate_tokens(o.text) for o in observations)
        history_tokens = visible_tokens(visible)
        run.base_tokens = STATIC_TOKENS + obs_tokens + history_tokens
        user_tokens = visible_tokens([m for m in visible_all if m.get("id") == user_id])
        run.visible, run.visible_tokens, run.message_count = visible_all, history_tokens + user_tokens, len(messages)
        cursor = stored_cursor or {}
        run.prefix_key = hashlib.sha1(
            json.dumps([cursor.get("lastObservedMessageId"), len(observations)]).encode()
        ).hexdigest()
        run.run_tokens = estimate_tokens(run.message)
        return TurnInput(
            thread_id=run.thread_id,
            project_id=str(thread["projectId"]),
            run_id=run.run_id,
            message=run.message,
            attachments=turn_args["attachments"],
            context=turn_args["context"],
            mode=turn_args["mode"],
            history=history,
            observations=observations,
            misbehaviours=run.misbehaviours,
            state=dict(thread.get("agentState") or {}),
        )

    def _finish(self, run: ActiveRun, status: str, reason: str | None, turn: TurnInput | None) -> None:
        for request_id, waiter in list(self.waiters.items()):
            if waiter.run_id == run.run_id:
                waiter.closed = True
                if waiter.body is None:
                    del self.waiters[request_id]
        thread = self.store.get("threads", run.thread_id)
        if thread is None:
            # The thread was deleted under the run: nobody can subscribe to it any more, write nothing.
            self.active.pop(run.thread_id, None)
            return
        log = self.hub.log(run.thread_id)
        for agent_id in list(run.spawned):
            log.append("agent-completed", {"role": "sub-agent", "result": ""}, run_id=run.run_id, agent_id=agent_id)
        run.spawned.clear()
        if status == "error":
            # n8n's error payload: the message in ``content`` (a provider's HTTP status, when there is one,
            # in ``statusCode``; an agent crash has none).
            log.append("error", {"content": reason or "the agent failed"}, run_id=run.run_id, agent_id=run.agent_id)
        memory_task = None
        with self.store.tx():
            if run.blocks:
                message = {
                    "id": f"msg_{hex_id()}",
                    "role": "assistant",
                    "type": "llm",
                    "content": run.blocks,
                    "createdAt": utc_now(),
                    "seeded": False,
                    "runId": run.run_id,
                }
                self.store.insert("messages", str(message["id"]), message, scope=run.thread_id)
                if run.visible is not None:
                    run.visible.append(message)
                    run.visible_tokens += visible_tokens([message])
                    run.message_count += 1
            if turn is not None:
                thread["agentState"] = turn.state
                self.store.put("threads", run.thread_id, thread, scope=thread.get("ownerId"))
            # The run's row is only ever written by its start and here: no need to read it back.
            doc = {**run.doc(status), "finishedAt": utc_now(), "reason": reason}
            self.store.put("runs", run.run_id, doc, scope=run.thread_id)
        if status == "completed":
            memory_task = self._maybe_queue_memory(run)
        self.active.pop(run.thread_id, None)
        finish: dict[str, Any] = {"status": status}
        if reason:
            finish["reason"] = reason
        # The thread's status and the run's steps ride along (threadcase extensions), so a client reacting
        # to run-finish knows at once whether work is pending, and has the run's token numbers, unasked.
        extra = {"threadStatus": self.status(run.thread_id), "runSteps": list(run.steps)}
        log.append("run-finish", finish, run_id=run.run_id, agent_id=run.agent_id, extra=extra)
        if self.tracer is not None:
            self.tracer.write(
                turn_runs(
                    thread_id=run.thread_id,
                    project=self.tracer.project,
                    message=run.message,
                    response=run.said,
                    start_time=run.started_at,
                    end_time=utc_now(),
                    status=status,
                    tool_calls=run.calls,
                    run_id=run.run_id,
                )
            )
        if memory_task is not None and self.tg is not None:
            self.tg.start_soon(self._run_memory, run.thread_id, memory_task, run.misbehaviours)

    # --- memory ---------------------------------------------------------------------------------

    def _maybe_queue_memory(self, run: ActiveRun) -> dict[str, Any] | None:
        if run.visible is not None and self.store.count("messages", run.thread_id) == run.message_count:
            # Only this run wrote to the thread since it read it (no compaction runs beside a run).
            visible, tokens = run.visible, run.visible_tokens
        else:  # the run never read its thread, or messages were added beside it (a restore): read again
            visible = visible_messages(self.store, run.thread_id)
            tokens = visible_tokens(visible)
        if not visible or tokens <= run.threshold:
            return None
        task = {"taskId": f"mem_{hex_id()[:12]}", "taskKind": "observer", "status": "queued"}
        tasks = self.memory_tasks.setdefault(run.thread_id, [])
        tasks.append(task)
        del tasks[:-5]  # keep the recent ones visible; old completed tasks are noise
        self._memory_idle[run.thread_id] = anyio.Event()
        return task

    async def _run_memory(self, thread_id: str, task: dict[str, Any], misbehaviours: frozenset[str]) -> None:
        try:
            task["status"] = "running"
            task["startedAt"] = epoch_ms()
            await anyio.sleep(self.settings.memory_task_seconds)
            with self.store.tx():
                if self.store.get("threads", thread_id) is None:
                    task["status"] = "failed"
                    return
                visible = visible_messages(self.store, thread_id)
                start = self.store.count("observations", thread_id)
                for offset, row in enumerate(observe(visible, misbehaviours=misbehaviours)):
                    self.store.insert("observations", f"{start + offset:06d}", row, scope=thread_id)
                if visible:
                    last = visible[-1]
                    self.store.put(
                        "cursors",
                        thread_id,
                        {"lastObservedMessageId": last["id"], "lastObservedAt": last.get("createdAt") or utc_now()},
                        scope=thread_id,
                    )
                    if FORGETS_AFTER_COMPACTION in misbehaviours:
                        # The agent's remembered answers would bring the dropped facts back: gone too.
                        thread = self.store.get("threads", thread_id) or {}
                        thread["agentState"] = forget_user_details(dict(thread.get("agentState") or {}))
                        self.store.put("threads", thread_id, thread, scope=thread.get("ownerId"))
            task["status"] = "completed"
        except Exception:
            task["status"] = "failed"
        finally:
            idle = self._memory_idle.pop(thread_id, None)
            if idle is not None:
                idle.set()

    def forget_thread(self, thread_id: str) -> None:
        """Cancel and forget everything in memory about a deleted thread."""
        self.cancel(thread_id)
        for request_id in [r for r, w in self.waiters.items() if w.thread_id == thread_id and w.body is not None]:
            del self.waiters[request_id]  # answered widgets of a deleted thread can never be asked about again
        self.memory_tasks.pop(thread_id, None)
        self._last_step.pop(thread_id, None)
