"""Drive one thread's live conversation: send, follow the events, answer widgets, keep the budgets.

:func:`converse` is the entry point the runner calls after the thread, its credentials and its seed
are in place. It is event-driven: it subscribes to the thread's event stream *before* the first chat
(the instance streams only events after the connection), answers every ``confirmation-request`` as
it arrives, and treats a run as over the moment its ``run-finish`` arrives — polling thread status
only when that first status check shows background work or memory tasks still pending (or a spawned
sub-agent never reported back), then settling briefly.

Budgets (:class:`Budgets`): each user turn gets ``turn_seconds`` (× ``complex_factor`` for complex
cases); the whole conversation gets ``conversation_turns`` turn budgets from the opening message (seed
restore time is not counted); no event for ``inactivity_seconds`` cancels the run as stalled; a
follow-up is sent only while at least a quarter of a turn budget remains. A budget hit ends the
conversation; what was collected is still graded.

In single-prompt mode (one user turn, no assistant turn) there is no simulated user: widgets are
auto-approved, so a genuine clarifying question is never really answered and such a run typically
times out (recorded as ``BUILD FAILED: Run timed out with no scored result``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
from pydantic import BaseModel, ConfigDict

from threadcase import records, wire
from threadcase.case import schema
from threadcase.case.notes import ScriptTurn
from threadcase.errors import ConversationError, InstanceError, ProviderError, ThreadcaseError
from threadcase.harness.conversation_collect import collect_after_conversation, saved_workflows
from threadcase.harness.turn_text import TurnText
from threadcase.models import ModelSettings
from threadcase.user_proxy import ConversationView, ProxyStats, Script, ScriptedProxy, make_proxy, user_player
from threadcase.user_proxy.actions import UnencodableAction
from threadcase.user_proxy.deterministic import auto_approve

if TYPE_CHECKING:
    from threadcase.credentials.seeder import CredentialSeeder
    from threadcase.instance import EventSubscription, InstanceClient

__all__ = ["Budgets", "converse"]

logger = logging.getLogger(__name__)

DEFAULT_MESSAGE_BUDGET = 5
OBSERVER_THRESHOLD_FOR_COMPACTION = 1000


_UNFINISHED_EXECUTION = frozenset({"new", "running", "waiting"})
"""n8n execution statuses of a run still going (``success``, ``error``, ``crashed``, ``canceled`` are final)."""


class Budgets(BaseModel):
    """Time budgets of one conversation (seconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn_seconds: float = 900
    """Per user turn (``--timeout-seconds``)."""
    conversation_turns: float = 2
    """The whole conversation gets this many turn budgets, counted from the opening message."""
    inactivity_seconds: float = 240
    """No event for this long: the run is cancelled as stalled."""
    settle_seconds: float = 0.05
    """Pause after background work settled (only when there was background work)."""
    complex_factor: float = 1.5
    """``complexity: complex`` multiplies the turn budget."""
    status_poll_seconds: float = 0.05
    """Interval of thread-status polls while background work or memory tasks are pending."""
    background_wait_seconds: float = 120
    """Upper bound on waiting for background work after a run finished (then the turn ends anyway)."""
    follow_up_fraction: float = 0.25
    """A follow-up is sent only while at least this fraction of a turn budget remains."""
    collect_seconds: float = 60
    """Upper bound on post-conversation collection (run debug, artifacts, memory)."""
    user_run_wait_seconds: float = 60
    """Upper bound on waiting for a workflow the simulated user ran to finish (``runWorkflowId``)."""

    def turn_budget(self, case: schema.Case) -> float:
        return self.turn_seconds * (self.complex_factor if case.complexity == "complex" else 1.0)


def _answered(turn: records.Turn) -> bool:
    """The agent said or did something in this turn."""
    return bool(turn.text or turn.tool_calls or turn.widgets)


class _SeedLike(Protocol):
    """What the conversation reads from a restored seed (inline or replay)."""

    @property
    def seeded_turns(self) -> list[records.Turn]: ...

    def resolve_attach(self, attach: schema.Attach) -> wire.WorkflowAttachment | wire.AgentAttachment: ...


TurnEnd = Literal["finished", "stalled", "timeout", "undelivered"]


class _SeederCredentials:
    """Adapts the credential seeder to the proxy's ``CredentialProvider``: create, pin, then answer."""

    def __init__(self, seeder: CredentialSeeder, thread_id: str, record: records.RunRecord) -> None:
        self._seeder = seeder
        self._thread_id = thread_id
        self._record = record

    async def create(self, credential_type: str, *, working: bool) -> str:
        try:
            created = await self._seeder.create_for_proxy(self._thread_id, credential_type, working=working)
        except ThreadcaseError as exc:
            message = f"could not create a {credential_type} credential for the user: {exc}"
            # The user could not do what the script says; what the agent does next is not its own doing.
            self._record.note_instance_failure(message)
            # The proxy falls back to its scripted answer.
            raise UnencodableAction(message) from exc
        return created.id


def _replay_prepends(case: schema.Case, live_opening: str | None) -> bool:
    """A replay's live message goes *ahead* of the authored turns (n8n: ``[live, ...conversation]``,
    and ``Case.mode`` counts it so); any other live opening replaces the authored opener's text."""
    return live_opening is not None and isinstance(case.seed, schema.ReplaySeed)


def _opening_text(case: schema.Case, live_opening: str | None) -> str:
    if live_opening is not None:
        return live_opening
    if not case.conversation:
        raise ConversationError("the case has no conversation and no live opening message to send")
    return case.conversation[0].text


def _script_for(case: schema.Case, opening: str, live_opening: str | None) -> Script:
    turns = [(t.role, t.text) for t in case.conversation]
    if _replay_prepends(case, live_opening) or not turns:
        turns.insert(0, ("user", opening))
    else:
        turns[0] = ("user", opening)
    script = Script.from_texts(turns)
    if live_opening is not None:
        # A live opening is a real user's message (a replayed production turn), not a director script:
        # brackets in it are what the user typed, so it is sent verbatim.
        script.turns[0] = ScriptTurn(index=0, role="user", raw=live_opening, spoken=live_opening)
    return script


class _Conversation:
    """The state of one conversation while it runs (one instance per :func:`converse` call)."""

    def __init__(
        self,
        case: schema.Case,
        *,
        client: InstanceClient,
        thread_id: str,
        credentials: CredentialSeeder,
        models: ModelSettings,
        budgets: Budgets,
        record: records.RunRecord,
        headers: dict[str, str] | None,
        script: Script,
        events: EventSubscription | None = None,
    ) -> None:
        self.case = case
        self.client = client
        self.events = events
        self.thread_id = thread_id
        self.budgets = budgets
        self.record = record
        self.headers = headers
        self.single_prompt = case.mode == "single-prompt"
        self.stats = ProxyStats()
        self.proxy: ScriptedProxy = make_proxy(
            script, models, stats=self.stats, case=f"case {record.case_slug!r} iteration {record.iteration}"
        )
        self.provider = _SeederCredentials(credentials, thread_id, record)
        self.turn_budget = budgets.turn_budget(case)
        self.conversation_deadline = 0.0
        self.memory_seen = False
        """A memory task showed up in some thread status: the thread's memory is worth reading."""
        self.status_polled = False
        """Some status came from a request, not from run-finish: a finished memory task may be gone from it."""
        self.run_unaccounted = False
        """A run was started whose run-finish (with the thread's status) was not processed."""

    # --- sending -------------------------------------------------------------------------------

    def chat_request(self, message: str, **extra: Any) -> wire.ChatRequest:
        return wire.ChatRequest(
            message=message,
            mode=self.case.build_mode or "progressive",
            promptVersion=self.case.prompt_version,
            observerThresholdTokens=OBSERVER_THRESHOLD_FOR_COMPACTION if self.case.requires_memory_compaction else None,
            **extra,
        )

    def add_user_turn(self, text: str, sent_by: Literal["opener", "script", "proxy", "replay"]) -> records.Turn:
        turn = records.Turn(
            index=len(self.record.turns), role="user", text=text, sent_by=sent_by, started_at=records.utc_now()
        )
        self.record.turns.append(turn)
        return turn

    def view(self, current: records.Turn | None = None) -> ConversationView:
        turns = list(self.record.turns)
        if current is not None and current not in turns:
            turns.append(current)
        return ConversationView(
            turns=turns,
            saved_workflows=saved_workflows(turns),
            allow_user_execution=self.case.allow_user_execution,
        )

    # --- one run -------------------------------------------------------------------------------

    async def drive_turn(
        self, sub: EventSubscription, assistant: records.Turn, run_id: str, deadline: float
    ) -> TurnEnd:
        """Follow events until the run finished and background work settled, or a budget ran out."""
        text = TurnText()
        tools: dict[str, records.ToolCallRecord] = {}
        pending_agents: set[str] = set()
        active_runs: set[str] = {run_id}
        settling_since: float | None = None
        reconnects = sub.reconnects
        errors: list[wire.ErrorPayload] = []
        """``error`` events of this turn's runs (a run that then ends in error with no output: the model failed)."""
        try:
            while True:
                now = anyio.current_time()
                remaining = deadline - now
                if remaining <= 0:
                    return "timeout"
                wait = min(
                    self.budgets.status_poll_seconds if settling_since is not None else self.budgets.inactivity_seconds,
                    remaining,
                )
                event = await sub.next_event(wait)
                if event is None:
                    if settling_since is not None:
                        if await self._settled(pending_agents):
                            await anyio.sleep(self.budgets.settle_seconds)
                            return "finished"
                        if anyio.current_time() - settling_since > self.budgets.background_wait_seconds:
                            self.record.warnings.append(
                                f"background work still pending {self.budgets.background_wait_seconds:.0f} s after "
                                f"run {run_id} finished; moved on"
                            )
                            return "finished"
                        continue
                    return "timeout" if wait >= remaining else "stalled"
                etype = event.type
                payload = event.payload
                if sub.reconnects != reconnects:
                    reconnects = sub.reconnects
                    text.reconnected()
                if etype == "run-start":
                    rid = str(event.runId or payload.get("runId") or "")
                    if rid:
                        active_runs.add(rid)
                        if rid not in assistant.run_ids:
                            assistant.run_ids.append(rid)
                    settling_since = None
                elif etype in ("text-delta", "text-block"):
                    key = (event.runId, event.agentId, event.responseId)
                    (text.delta if etype == "text-delta" else text.block)(key, str(payload.get("text", "")))
                    assistant.text = text.text
                elif etype == "tool-call":
                    call = records.ToolCallRecord(
                        tool_call_id=str(payload.get("toolCallId", "")),
                        tool_name=str(payload.get("toolName", "")),
                        args=payload.get("args") if isinstance(payload.get("args"), dict) else {},
                    )
                    tools[call.tool_call_id] = call
                    assistant.tool_calls.append(call)
                elif etype in ("tool-result", "tool-error"):
                    call_id = str(payload.get("toolCallId", ""))
                    found = tools.get(call_id)
                    if found is None:
                        found = records.ToolCallRecord(tool_call_id=call_id, tool_name=str(payload.get("toolName", "")))
                        tools[call_id] = found
                        assistant.tool_calls.append(found)
                    if etype == "tool-result":
                        found.result = payload.get("result")
                    else:
                        found.error = str(payload.get("error", "tool error"))
                elif etype == "confirmation-request":
                    delivered = True
                    with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as scope:
                        delivered = await self.answer_widget(payload, assistant)
                    if scope.cancelled_caught:
                        return "timeout"
                    if not delivered:
                        # The agent waits for this answer and nothing else will come: waiting out the
                        # inactivity budget (minutes) would change nothing, and the failure is recorded.
                        return "undelivered"
                elif etype == "agent-spawned":
                    # n8n names the sub-agent in the event's own agentId (the payload's parentId is the spawner).
                    agent_id = str(event.agentId or payload.get("agentId") or "")
                    if agent_id:
                        pending_agents.add(agent_id)
                elif etype == "agent-completed":
                    pending_agents.discard(str(event.agentId or payload.get("agentId") or ""))
                elif etype == "error":
                    error = wire.ErrorPayload.model_validate(payload)
                    errors.append(error)
                    if error.from_model_provider:
                        # The model provider failed, not the agent: nothing after it says anything about the agent.
                        self.model_failed(error.text, assistant)
                    else:
                        assistant.errors.append(error.text)
                elif etype == "run-finish":
                    rid = str(event.runId or payload.get("runId") or run_id)
                    assistant.finish_status = str(payload.get("status", "completed"))
                    if payload.get("reason"):
                        assistant.errors.append(f"run {rid} finished {assistant.finish_status}: {payload['reason']}")
                    if assistant.finish_status == "error" and errors and not _answered(assistant):
                        # An error and then a run that said and did nothing: the model never answered
                        # (n8n's "Failed after 3 attempts. Last error: ..." carries no status to tell by).
                        self.model_failed(errors[0].text, assistant)
                    if event.runSteps is not None:
                        # The run's token numbers came with its finish (a threadcase extension): no debug request.
                        self.record.usage[rid] = wire.step_usages(event.runSteps)
                    active_runs.discard(rid)
                    if active_runs:
                        continue
                    # The thread's status right after run-finish: carried by the event when the instance
                    # offers it (the demo does), else the one request that follows; polling only if busy.
                    if await self._settled(pending_agents, event.threadStatus):
                        return "finished"
                    settling_since = anyio.current_time()
        finally:
            assistant.ended_at = records.utc_now()

    def model_failed(self, message: str, assistant: records.Turn | None = None) -> None:
        """Record that the builder's model could not answer (the first message is the case's reason)."""
        if self.record.model_failure is None:
            self.record.model_failure = message
        if assistant is not None and f"model provider failed: {message}" not in assistant.errors:
            assistant.errors.append(f"model provider failed: {message}")

    async def _settled(self, pending_agents: set[str], status: wire.ThreadStatus | None = None) -> bool:
        """No run, background task, memory task or spawned agent pending; ``status`` = the one the
        run-finish event carried (a threadcase extension), which saves asking for it."""
        if status is not None:
            self.run_unaccounted = False
        else:
            self.status_polled = True
            try:
                status = await self.client.thread_status(self.thread_id)
            except InstanceError as exc:
                # Not knowing is no reason to hold the conversation: the next chat would say if it is busy.
                self.record.warnings.append(f"thread status unreadable after a run; moved on: {exc}")
                self.memory_seen = True  # unknown, so the memory is read at the end
                return True
        if status.memoryTasks:
            self.memory_seen = True
        return status.settled and not pending_agents

    async def answer_widget(self, payload: dict[str, Any], assistant: records.Turn) -> bool:
        """Answer one widget; False when the instance refused the answer and the agent still waits for it."""
        try:
            request = wire.ConfirmationRequest.model_validate(payload)
        except ValueError as exc:
            assistant.errors.append(f"unreadable confirmation-request: {str(exc)[:200]}")
            return True
        widget = records.WidgetRecord(
            request_id=request.requestId,
            input_type=request.kind,
            request=payload,
            after_tool_calls=len(assistant.tool_calls),
        )
        body: wire.ConfirmBody
        if self.single_prompt:
            short = auto_approve(request)
            body, widget.answered_by, widget.outcome = short.body, "auto-approve", short.outcome
            self.stats["auto-approve"] += 1
            self.stats.outcome(short.outcome)
        else:
            answer = await self.proxy.answer(request, self.view(assistant), self.provider)
            body, widget.answered_by, widget.outcome = answer.body, answer.answered_by, answer.outcome
        widget.answer = body.model_dump(mode="json", exclude_none=True)
        assistant.widgets.append(widget)
        try:
            await self.client.confirm(request.requestId, body)
        except InstanceError as exc:
            widget.outcome = "no response"
            self.record.note_instance_failure(f"confirm {request.requestId} failed: {exc}", assistant)
            # 404/409: the widget is gone (its run ended, or it timed out), so nothing waits for this
            # answer and the run's own events go on; anything else leaves the agent waiting for good.
            return exc.status in (404, 409)
        return True

    async def cancel_run(self) -> None:
        with anyio.move_on_after(10, shield=True):
            try:
                await self.client.cancel(self.thread_id)
            except InstanceError as exc:
                self.record.warnings.append(f"cancelling the run failed: {exc}")

    # --- the conversation ----------------------------------------------------------------------

    async def run(self, recorded_opening: str, sent_by: Literal["opener", "replay"], request: wire.ChatRequest) -> None:
        budget = self.case.message_budget or DEFAULT_MESSAGE_BUDGET
        start = anyio.current_time()
        self.conversation_deadline = start + self.budgets.conversation_turns * self.turn_budget
        opened = self.client.subscribe(self.thread_id) if self.events is None else contextlib.nullcontext(self.events)
        async with opened as sub:
            await sub.ready()
            user = self.add_user_turn(recorded_opening, sent_by)
            message_request = request
            while True:
                turn_start = anyio.current_time()
                turn_deadline = min(turn_start + self.turn_budget, self.conversation_deadline)
                self.run_unaccounted = True
                try:
                    run_id = await self.client.chat(self.thread_id, message_request, headers=self.headers)
                except ProviderError as exc:
                    # No model to answer (n8n: "no model configured"): a premise of the case, not a crash.
                    self.run_unaccounted = False
                    self.model_failed(exc.reason)
                    self.record.ended_by = "error"
                    return
                assistant = records.Turn(
                    index=len(self.record.turns), role="assistant", run_ids=[run_id], started_at=records.utc_now()
                )
                self.record.turns.append(assistant)
                user.run_ids.append(run_id)
                end = await self.drive_turn(sub, assistant, run_id, turn_deadline)
                if end != "finished":
                    await self.cancel_run()
                    self._record_budget_hit(end, assistant, turn_start, turn_deadline)
                    return
                if self.record.model_failure is not None:
                    # The model did not answer: another message would only reach the same broken model.
                    self.record.ended_by = "error"
                    return
                if self.single_prompt:
                    self.record.ended_by = "single-prompt"
                    return
                if self.record.follow_ups_sent >= budget:
                    if self.proxy.might_continue():
                        self.record.ended_by = "budget"
                        self.record.warnings.append(
                            f"message budget reached: {budget} follow-ups sent; the conversation ended there"
                        )
                    else:
                        self.record.ended_by = "script-exhausted"
                    return
                left = self.conversation_deadline - anyio.current_time()
                if left < self.budgets.follow_up_fraction * self.turn_budget:
                    self.record.ended_by = "conversation-timeout"
                    self.record.warnings.append(
                        f"conversation budget nearly spent ({left:.1f} s left of "
                        f"{self.budgets.conversation_turns * self.turn_budget:.0f} s); no further follow-up sent"
                    )
                    return
                view = self.view().model_copy(update={"follow_ups_left": budget - self.record.follow_ups_sent})
                if self.proxy.uses_model:
                    with anyio.move_on_after(max(0.0, left)) as scope:
                        follow = await self.proxy.next_message(view)
                    if scope.cancelled_caught:
                        self.record.ended_by = "conversation-timeout"
                        self.record.warnings.append("the conversation budget ran out while the user was deciding")
                        return
                else:
                    # The scripted user decides without waiting on anything: no deadline to arm (arming and
                    # disarming one per turn was a visible share of a scripted turn's cost).
                    follow = await self.proxy.next_message(view)
                if follow is None:
                    self.record.ended_by = "done" if self.proxy.uses_model else "script-exhausted"
                    return
                actions = await self._side_effects(follow.rename_workflow_to, follow.run_workflow_id)
                sent_by_now: Literal["script", "proxy"] = "proxy" if self.proxy.last_source == "model" else "script"
                user = self.add_user_turn(follow.message, sent_by_now)
                user.user_actions.extend(actions)
                self.record.follow_ups_sent += 1
                # The script counts the message as sent from here: the notes of the turns after it
                # govern what the agent does next.
                self.proxy.script.advance()
                message_request = self.chat_request(follow.message)

    async def _side_effects(self, rename_to: str | None, run_workflow_id: str | None) -> list[str]:
        """Do what the user chose to do outside the conversation before their next message (rename the
        last saved workflow, run a saved workflow); returns one line per action for the user turn, so
        the judge sees it — the message sent to the agent never mentions it."""
        actions: list[str] = []
        if not rename_to and not run_workflow_id:
            return actions
        names = {w.id: w.name for w in saved_workflows(self.record.turns)}
        if rename_to:
            saved = list(names)
            if saved:
                try:
                    await self.client.rename_workflow(saved[-1], rename_to)
                except InstanceError as exc:
                    self.record.note_instance_failure(
                        f"renaming workflow {saved[-1]} outside the conversation failed: {exc}"
                    )
                else:
                    actions.append(f"renamed workflow {names[saved[-1]]!r} to {rename_to!r} outside the conversation")
                    names[saved[-1]] = rename_to
        if run_workflow_id:
            actions.append(await self._run_for_user(run_workflow_id, names.get(run_workflow_id, run_workflow_id)))
        return actions

    async def _run_for_user(self, workflow_id: str, name: str) -> str:
        """Run a saved workflow for real, as the user clicking "Execute workflow"; the line that says how it went."""
        try:
            execution_id = await self.client.run_workflow(workflow_id)
        except InstanceError as exc:
            # The user could not do what they chose to: what the agent says next is not about a real run.
            self.record.note_instance_failure(f"running workflow {workflow_id} ({name!r}) for the user failed: {exc}")
            return f"tried to run workflow {name!r}; the instance did not run it"
        outcome = await self._execution_outcome(execution_id)
        return f"ran workflow {name!r} (execution {execution_id}: {outcome})"

    async def _execution_outcome(self, execution_id: str) -> str:
        """``success``, ``error — <message>``, or why it is not known; waits (bounded) while it still runs."""
        deadline = anyio.current_time() + max(
            0.0, min(self.budgets.user_run_wait_seconds, self.conversation_deadline - anyio.current_time())
        )
        pause = self.budgets.status_poll_seconds
        while True:
            try:
                execution = await self.client.get_execution(execution_id)
            except InstanceError as exc:
                self.record.note_instance_failure(f"reading execution {execution_id} of the user's run failed: {exc}")
                return "status unknown"
            status = str(execution.get("status") or "")
            if status not in _UNFINISHED_EXECUTION:
                break
            if anyio.current_time() + pause > deadline:
                self.record.warnings.append(
                    f"execution {execution_id} of the user's run was still {status} when the user moved on"
                )
                return f"still {status}"
            await anyio.sleep(pause)
            # n8n runs executions in the background: back off, a real workflow may take seconds.
            pause = min(pause * 2, 1.0)
        data = execution.get("data")
        result = data.get("resultData") if isinstance(data, dict) else None
        error = result.get("error") if isinstance(result, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if status == "success" or not message:
            return status or "status unknown"
        return f"{status} — {str(message)[:300]}"

    def _record_budget_hit(self, end: TurnEnd, assistant: records.Turn, turn_start: float, deadline: float) -> None:
        if end == "undelivered":
            # The instance refused a widget's answer; the failure is already recorded against the instance.
            assistant.finish_status = "cancelled"
            self.record.ended_by = "error"
            return
        if end == "stalled":
            assistant.finish_status = "stalled"
            self.record.ended_by = "stalled"
            self.record.warnings.append(
                f"run stalled: no event for {self.budgets.inactivity_seconds:g} s; the run was cancelled"
            )
            return
        assistant.finish_status = "timeout"
        by_conversation = deadline < turn_start + self.turn_budget
        self.record.ended_by = "conversation-timeout" if by_conversation else "turn-timeout"
        if self.single_prompt:
            self.record.warnings.append(records.BUILD_FAILED_TIMEOUT)
        elif by_conversation:
            self.record.warnings.append(
                f"conversation budget of {self.budgets.conversation_turns * self.turn_budget:g} s ran out during a run"
            )
        else:
            self.record.warnings.append(f"turn budget of {self.turn_budget:g} s ran out; the run was cancelled")


async def converse(
    case: schema.Case,
    *,
    client: InstanceClient,
    thread_id: str,
    project_id: str,
    seed: _SeedLike | None,
    live_opening: str | None,
    credentials: CredentialSeeder,
    models: ModelSettings,
    budgets: Budgets,
    record: records.RunRecord,
    headers: dict[str, str] | None = None,
    events: EventSubscription | None = None,
) -> records.RunRecord:
    """Drive the case's live conversation on ``thread_id`` and fill ``record`` (returned, same object).

    ``events``: the thread's event stream when the caller opened it already (it stays the caller's to
    close, and may still be connecting); None opens one here, before the first message.

    ``live_opening`` is the message to send first instead of the authored opener: for a replay seed it
    goes ahead of the authored turns (which then script the follow-ups, as in n8n and as
    ``Case.mode`` counts it); otherwise it replaces ``conversation[0].text``.

    Fills ``turns`` (seeded turns first), ``ended_by``, ``proxy_stats``, ``follow_ups_sent`` and
    ``warnings``; then collects ``usage`` (run debug), ``artifacts`` (what the agent built or edited)
    and ``memory`` — collection failures become warnings. Raises a ``RunError`` only when nothing
    live could happen (the opening message could not be sent, the event stream could not be opened);
    a failure later ends the conversation (``ended_by="error"``) and what was collected is kept.
    """
    opening = _opening_text(case, live_opening)
    script = _script_for(case, opening, live_opening)
    record.mode = case.mode
    if seed is not None:
        record.turns = [*seed.seeded_turns, *[t for t in record.turns if not t.seeded]]
    # conversation[0] goes to the builder as written, notes and all, as n8n sends it (validate warns
    # about a note there): stripping it would change the prompt under test.
    spoken = script.opener.raw
    recorded = spoken
    extra: dict[str, Any] = {}
    attach = case.conversation[0].attach if case.conversation and not _replay_prepends(case, live_opening) else None
    if attach is not None:
        if seed is None:
            raise ConversationError("the opening turn attaches a seed artifact, but no seed was restored")
        attachment = seed.resolve_attach(attach)
        extra["attachments"] = [attachment]
        prefix = f"[attached {attachment.type}: {attachment.name}]"
        if attach.source == "setup-panel-execute" and isinstance(attachment, wire.WorkflowAttachment):
            extra["context"] = {"source": "setup-panel-execute", "workflowId": attachment.id}
            prefix += "\n[The user clicked Execute in the setup panel.]"
        recorded = f"{prefix}\n{spoken}" if spoken else prefix
    conversation = _Conversation(
        case,
        client=client,
        thread_id=thread_id,
        credentials=credentials,
        models=models,
        budgets=budgets,
        record=record,
        headers=headers,
        script=script,
        events=events,
    )
    request = conversation.chat_request(spoken, **extra)
    try:
        await conversation.run(recorded, "replay" if live_opening is not None else "opener", request)
    except InstanceError as exc:
        if not record.produced_output:
            raise
        record.ended_by = "error"
        record.note_instance_failure(f"the conversation stopped on an instance error: {exc}")
    finally:
        await conversation.proxy.aclose()
        conversation.stats["credential-test-bypassed"] = credentials.bypassed_count
        record.proxy_stats = conversation.stats.as_dict()
        record.warnings.extend(f"proxy: {line}" for line in conversation.proxy.log)
        if conversation.single_prompt:
            record.user = records.UserPlayer(kind="auto-approve")
        else:
            record.user = user_player(models)
            record.script = conversation.proxy.delivery(
                ended_by=record.ended_by,
                follow_ups=record.follow_ups_sent,
                budget=case.message_budget or DEFAULT_MESSAGE_BUDGET,
            )
    # Memory rows only exist after a memory task ran; when every run-finish carried the thread's status
    # and none listed one, reading the (empty) memory is a request that cannot change anything.
    read_memory = (
        case.requires_memory_compaction
        or conversation.memory_seen
        or conversation.status_polled
        or conversation.run_unaccounted
    )
    # Every run we started finished with its steps attached: listing the thread's runs cannot add any.
    live_runs = [rid for turn in record.live_turns for rid in turn.run_ids]
    runs_known = bool(live_runs) and all(rid in record.usage for rid in live_runs) and not conversation.run_unaccounted
    await collect_after_conversation(
        client,
        record,
        thread_id=thread_id,
        project_id=project_id,
        seconds=budgets.collect_seconds,
        read_memory=read_memory,
        list_runs=not runs_known,
    )
    record.finished_at = records.utc_now()
    return record
