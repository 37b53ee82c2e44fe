"""A run record rendered as evidence: the transcript, token numbers, conversation metrics, memory.

What the judge reads and what a person reads in a report are the same text, so a verdict can be
checked against exactly what the judge saw. Everything here is a pure function of a
:class:`~threadcase.records.RunRecord`; ``threadcase.records`` re-exports the
public names.

Conversational turns are numbered from 1 and group one user message with everything the agent did
in answer to it (seeded turns included: the judge grades the whole conversation as one). Token
numbers come from run debug, joined through each assistant turn's ``run_ids``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from threadcase.wire import ThreadMemory, TokenUsage

if TYPE_CHECKING:
    from threadcase.records import RunRecord, ToolCallRecord, Turn, WidgetRecord

__all__ = [
    "TEXT_CAP",
    "TOOL_PAYLOAD_CAP",
    "ConversationMetrics",
    "TurnGroup",
    "TurnMetrics",
    "TurnTokens",
    "conversation_metrics",
    "group_turns",
    "normalise_question",
    "render_memory_block",
    "render_token_block",
    "render_tool_calls_per_turn",
    "render_transcript",
    "turn_tokens",
    "widget_questions",
]

TEXT_CAP = 8000
"""Longest user or assistant text rendered, in characters."""
TOOL_PAYLOAD_CAP = 2000
"""Longest tool argument or result payload rendered, in characters."""


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more chars]"


def _json(value: Any, limit: int = TOOL_PAYLOAD_CAP) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return _cap(text, limit)


# --- turns ------------------------------------------------------------------------------------


@dataclass
class TurnGroup:
    """One conversational turn: a user message (absent when the agent spoke first) and the answer."""

    number: int
    user: Turn | None = None
    answers: list[Turn] = field(default_factory=list)

    @property
    def run_ids(self) -> list[str]:
        return [run_id for turn in self.answers for run_id in turn.run_ids]

    @property
    def seeded(self) -> bool:
        turns = ([self.user] if self.user else []) + self.answers
        return bool(turns) and all(t.seeded for t in turns)

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [call for turn in self.answers for call in turn.tool_calls]

    @property
    def widgets(self) -> list[WidgetRecord]:
        return [widget for turn in self.answers for widget in turn.widgets]


def group_turns(record: RunRecord) -> list[TurnGroup]:
    """The record's turns grouped into conversational turns, numbered from 1."""
    groups: list[TurnGroup] = []
    for turn in record.turns:
        if turn.role == "user" or not groups:
            groups.append(TurnGroup(number=len(groups) + 1))
            if turn.role == "user":
                groups[-1].user = turn
                continue
        groups[-1].answers.append(turn)
    return groups


def _ordered_run_ids(record: RunRecord) -> list[str]:
    """Run ids in conversation order; runs only run debug knows about come last."""
    seen: list[str] = []
    for turn in record.turns:
        for run_id in turn.run_ids:
            if run_id not in seen:
                seen.append(run_id)
    seen.extend(run_id for run_id in record.usage if run_id not in seen)
    return seen


def _sum_usage(steps: list[TokenUsage]) -> tuple[int, int, int, int]:
    return (
        sum(s.inputTokens for s in steps),
        sum(s.cachedInputTokens for s in steps),
        sum(s.outputTokens for s in steps),
        sum(s.cacheWriteTokens for s in steps),
    )


@dataclass(frozen=True)
class TurnTokens:
    """A conversational turn's token numbers: the run-debug steps of every run its answers name, summed."""

    runs: int
    """Distinct runs the turn's answers name."""
    runs_read: int
    """Of those, the runs run debug gave numbers for."""
    steps: int
    tokens_in: int
    cached: int
    """Of ``tokens_in``, those read from the provider's prompt cache."""
    tokens_out: int

    @property
    def complete(self) -> bool:
        """Run debug gave every run of the turn, with at least one step: a total that is not a guess."""
        return self.runs > 0 and self.runs_read == self.runs and self.steps > 0


def turn_tokens(group: TurnGroup, record: RunRecord) -> TurnTokens:
    """The turn's token numbers, as its ``### Turn N`` header shows them (the token checks read the same)."""
    # A run named twice is one run: its steps must not be counted twice.
    run_ids = list(dict.fromkeys(group.run_ids))
    steps = [step for run_id in run_ids for step in record.usage.get(run_id, [])]
    tokens_in, cached, tokens_out, _ = _sum_usage(steps)
    read = sum(1 for run_id in run_ids if run_id in record.usage)
    return TurnTokens(len(run_ids), read, len(steps), tokens_in, cached, tokens_out)


def _turn_header(group: TurnGroup, record: RunRecord) -> str:
    tokens = turn_tokens(group, record)
    if not tokens.runs_read:
        return f"### Turn {group.number}"
    numbers = (
        f"{tokens.steps} steps, {tokens.tokens_in} tokens in [{tokens.cached} cached], {tokens.tokens_out} tokens out"
    )
    return f"### Turn {group.number} ({numbers})"


# --- widgets ----------------------------------------------------------------------------------

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalise_question(text: str) -> str:
    """A question's text reduced to what makes it the same question: case, punctuation, spacing."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


def widget_questions(widget: WidgetRecord) -> list[dict[str, Any]]:
    """The clarifying questions a ``questions`` widget asked (``[]`` for any other widget)."""
    if widget.input_type != "questions":
        return []
    questions = widget.request.get("questions") or []
    return [q for q in questions if isinstance(q, dict) and str(q.get("question", "")).strip()]


def _answers_by_question(widget: WidgetRecord) -> dict[str, dict[str, Any]]:
    answers = (widget.answer or {}).get("answers") or []
    return {str(a.get("questionId")): a for a in answers if isinstance(a, dict)}


def _render_questions(widget: WidgetRecord) -> list[str]:
    answers = _answers_by_question(widget)
    lines = []
    for q in widget_questions(widget):
        options = q.get("options") or []
        opts = f" [{', '.join(str(o) for o in options)}]" if options else ""
        answer = answers.get(str(q.get("id")))
        if widget.answer is None or answer is None:
            said = "(no response)"
        elif answer.get("skipped"):
            said = "(skipped)"
        else:
            parts = [str(o) for o in answer.get("selectedOptions") or []]
            if answer.get("customText"):
                parts.append(str(answer["customText"]))
            said = "A: " + ", ".join(parts) if parts else "(skipped)"
        lines.append(f"Asked user: {q.get('question')} ({q.get('type', 'text')}){opts} -> {said}")
    return lines


def _approval_words(widget: WidgetRecord) -> str:
    answer = widget.answer
    if answer is None:
        return "no response"
    if answer.get("kind") == "approval":
        words = "approved" if answer.get("approved") else "rejected"
        if answer.get("userInput"):
            words += f" — user feedback: {_cap(str(answer['userInput']), TEXT_CAP)}"
        return words
    return widget.outcome


def _render_plan(widget: WidgetRecord) -> list[str]:
    plan = widget.request.get("plan") or []
    steps = "; ".join(
        f"{i}. {step.get('title', '')}" + (f" — {step['detail']}" if step.get("detail") else "")
        for i, step in enumerate(plan, start=1)
        if isinstance(step, dict)
    )
    lines = [f"Plan ({len(plan)}): {steps}" if plan else f"Plan: {widget.request.get('message', '')}"]
    lines.append(f"Plan review: {_approval_words(widget)}")
    return lines


def _setup_outcome(widget: WidgetRecord, node: str) -> str:
    answer = widget.answer
    if answer is None:
        return "no response"
    if answer.get("kind") == "approval" and not answer.get("approved"):
        return "dismissed"
    if answer.get("kind") != "setupWorkflowApply":
        return widget.outcome
    if node in (answer.get("skippedNodes") or []):
        return "skipped"
    if node in (answer.get("nodeCredentials") or {}) or node in (answer.get("nodeParameters") or {}):
        return "filled"
    return "skipped"


def _render_setup(widget: WidgetRecord) -> list[str]:
    lines = []
    outcomes: dict[str, list[str]] = {"filled": [], "skipped": [], "other": []}
    for req in widget.request.get("setupRequests") or []:
        if not isinstance(req, dict):
            continue
        raw_node = req.get("node")
        # n8n sends the node itself ({name, type, ...}); older records hold just its name.
        node = str(raw_node.get("name", "?") if isinstance(raw_node, dict) else raw_node or "?")
        needs = []
        if req.get("credentialType"):
            needs.append(str(req["credentialType"]))
        if req.get("parameterIssues"):
            needs.append("params: " + ", ".join(str(k) for k in req["parameterIssues"]))
        outcome = _setup_outcome(widget, node)
        outcomes["filled" if outcome == "filled" else "skipped" if outcome == "skipped" else "other"].append(node)
        lines.append(f"Asked user via setup card: {node} ({'; '.join(needs)}) — {outcome}")
    if widget.answer is not None:
        summary = [
            f"configured {', '.join(outcomes['filled'])}" if outcomes["filled"] else "",
            f"user skipped {', '.join(outcomes['skipped'])}" if outcomes["skipped"] else "",
            f"still needs setup {', '.join(outcomes['other'])}" if outcomes["other"] else "",
        ]
        lines.append("Setup wizard: " + ("; ".join(s for s in summary if s) or widget.outcome))
    return lines


def _render_credentials(widget: WidgetRecord) -> list[str]:
    answer = widget.answer or {}
    chosen = answer.get("credentials") or {}
    lines = []
    for req in widget.request.get("credentialRequests") or []:
        if not isinstance(req, dict):
            continue
        ctype = str(req.get("credentialType", "?"))
        reason = f" ({req['reason']})" if req.get("reason") else ""
        if widget.answer is None:
            outcome = "no response"
        elif ctype in chosen:
            outcome = "filled"
        elif answer.get("kind") == "credentialAutoSetup":
            outcome = "auto setup requested"
        else:
            outcome = "deferred"
        lines.append(f"Asked user for a credential: {ctype}{reason} — {outcome}")
    return lines


def _render_widget(widget: WidgetRecord, tool_name: str | None) -> list[str]:
    kind = widget.input_type
    if kind == "questions":
        return _render_questions(widget)
    if kind == "plan-review":
        return _render_plan(widget)
    if kind == "setup":
        return _render_setup(widget)
    if kind == "credentials":
        return _render_credentials(widget)
    message = _cap(str(widget.request.get("message", "")), TEXT_CAP)
    if kind == "approval" and tool_name:
        return [f"Resume {tool_name}: {message} ({_approval_words(widget)})"]
    if kind in ("approval", "text"):
        return [f"Asked user to confirm: {message} -> {_approval_words(widget)}"]
    answer = widget.answer or {}
    said = answer.get("kind", "no response") if widget.answer is not None else "no response"
    return [f"Asked user ({kind}): {message} -> {said} ({widget.outcome})"]


# --- transcript -------------------------------------------------------------------------------


def _render_tool(call: ToolCallRecord) -> str:
    line = f"Tool: {call.tool_name} args: {_json(call.args)}"
    if call.error is not None:
        return f"{line} error: {_cap(call.error, TOOL_PAYLOAD_CAP)}"
    return f"{line} result: {_json(call.result)}"


def _render_answer(turn: Turn) -> list[str]:
    """Tool calls and widgets in the order they happened (as far as the record knows), then the text."""
    lines: list[str] = []
    calls_by_id = {call.tool_call_id: call for call in turn.tool_calls}
    widgets_by_call: dict[str, list[WidgetRecord]] = {}
    placed: dict[int, list[WidgetRecord]] = {}
    loose: list[WidgetRecord] = []
    for widget in turn.widgets:
        call_id = widget.request.get("toolCallId")
        if isinstance(call_id, str) and call_id in calls_by_id:
            widgets_by_call.setdefault(call_id, []).append(widget)
        elif widget.after_tool_calls is not None:
            placed.setdefault(min(widget.after_tool_calls, len(turn.tool_calls)), []).append(widget)
        else:
            loose.append(widget)
    for position, call in enumerate(turn.tool_calls):
        for widget in placed.get(position, []):
            lines.extend(_render_widget(widget, None))
        lines.append(_render_tool(call))
        for widget in widgets_by_call.get(call.tool_call_id, []):
            lines.extend(_render_widget(widget, call.tool_name))
    for widget in placed.get(len(turn.tool_calls), []) + loose:
        lines.extend(_render_widget(widget, None))
    if turn.text:
        lines.append(f"Assistant: {_cap(turn.text, TEXT_CAP)}")
    if turn.finish_status and turn.finish_status != "completed":
        lines.append(f"(run ended: {turn.finish_status})")
    lines.extend(f"Run error: {_cap(error, TOOL_PAYLOAD_CAP)}" for error in turn.errors)
    return lines


def render_transcript(record: RunRecord) -> str:
    """The whole conversation as the judge reads it: one ``### Turn N`` block per user message."""
    groups = group_turns(record)
    if not groups:
        return "(no conversation recorded)"
    blocks = []
    for group in groups:
        lines = [_turn_header(group, record)]
        if group.user is not None:
            # Done before the message was sent, so read before it.
            lines.extend(f"User action: {_cap(action, TOOL_PAYLOAD_CAP)}" for action in group.user.user_actions)
            lines.append(f"User: {_cap(group.user.text, TEXT_CAP)}")
        for answer in group.answers:
            lines.extend(_render_answer(answer))
        if not group.answers:
            lines.append("(no agent response)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_token_block(record: RunRecord) -> str:
    """Token totals from run debug, or ``(no run debug captured)``."""
    if not any(record.usage.values()):
        return "(no run debug captured)"
    order = _ordered_run_ids(record)
    steps = [step for run_id in order for step in record.usage.get(run_id, [])]
    tokens_in, cached, tokens_out, written = _sum_usage(steps)
    runs = sum(1 for run_id in order if record.usage.get(run_id))
    opening = steps[0].inputTokens
    return "\n".join(
        [
            f"Total: {tokens_in} tokens in / {tokens_out} tokens out across {len(steps)} LLM steps, {runs} runs",
            f"Cache: {cached} tokens read / {written} tokens written",
            f"Opening step: {opening} input tokens on the first LLM call (instructions, tool schemas and the "
            "first message; a seeded case also carries its restored history here)",
        ]
    )


def render_memory_block(memory: ThreadMemory | None) -> str:
    """Observational memory rows as ``- [MARKER] text``, or why there are none."""
    if memory is None or memory.cursor is None:
        return "(observational memory has not compacted this conversation)"
    if not memory.observations:
        return "(compacted, but no observations were kept)"
    return "\n".join(f"- [{obs.marker}] {obs.text}" for obs in memory.observations)


def render_tool_calls_per_turn(record: RunRecord) -> str:
    """``Turn N: tool×k, …`` per conversational turn (``Turn N: (none)`` when it called nothing)."""
    lines = []
    for group in group_turns(record):
        counts = Counter(call.tool_name for call in group.tool_calls)
        listed = ", ".join(f"{name}×{n}" for name, n in counts.items()) or "(none)"
        lines.append(f"Turn {group.number}: {listed}")
    return "\n".join(lines) or "(no turns)"


# --- metrics ----------------------------------------------------------------------------------


class _Metrics(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class TurnMetrics(_Metrics):
    """Ground-truth numbers for one conversational turn."""

    turn: int
    seeded: bool = False
    tool_call_count: int = 0
    tool_error_count: int = 0
    confirmation_asked_total: int = 0
    confirmation_asked_by_kind: dict[str, int] = Field(default_factory=dict)
    replan_after_error_count: int = 0
    """Tool errors after which the agent went on to call a tool again in the same turn."""
    repeat_question_count: int = 0
    """Questions whose normalised text was already asked in an earlier widget."""
    run_finish_status: str | None = None


class ConversationMetrics(_Metrics):
    """Ground-truth numbers for the whole conversation (the judge is told not to recount them)."""

    turn_count: int
    per_turn: list[TurnMetrics]
    total_tool_calls: int
    total_tool_errors: int
    total_confirmations_asked: int
    total_repeat_questions: int
    reached_run_finish_cleanly: bool
    ended_by: str

    def render(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2)


def _replans(turns: list[Turn]) -> int:
    count = 0
    for turn in turns:
        calls = turn.tool_calls
        count += sum(1 for i, call in enumerate(calls) if call.error is not None and i + 1 < len(calls))
    return count


def conversation_metrics(record: RunRecord) -> ConversationMetrics:
    """Counts per turn and in total: tool calls, errors, confirmations, re-plans, repeated questions."""
    asked: set[str] = set()
    per_turn = []
    for group in group_turns(record):
        repeats = 0
        by_kind: Counter[str] = Counter()
        for widget in group.widgets:
            by_kind[widget.input_type] += 1
            texts = {normalise_question(str(q.get("question", ""))) for q in widget_questions(widget)}
            repeats += len(texts & asked)
            asked |= texts
        statuses = [t.finish_status for t in group.answers if t.finish_status]
        per_turn.append(
            TurnMetrics(
                turn=group.number,
                seeded=group.seeded,
                tool_call_count=len(group.tool_calls),
                tool_error_count=sum(1 for c in group.tool_calls if c.error is not None),
                confirmation_asked_total=sum(by_kind.values()),
                confirmation_asked_by_kind=dict(by_kind),
                replan_after_error_count=_replans(group.answers),
                repeat_question_count=repeats,
                run_finish_status=statuses[-1] if statuses else None,
            )
        )
    live_answers = [t for t in record.live_turns if t.role == "assistant"]
    return ConversationMetrics(
        turn_count=len(per_turn),
        per_turn=per_turn,
        total_tool_calls=sum(m.tool_call_count for m in per_turn),
        total_tool_errors=sum(m.tool_error_count for m in per_turn),
        total_confirmations_asked=sum(m.confirmation_asked_total for m in per_turn),
        total_repeat_questions=sum(m.repeat_question_count for m in per_turn),
        reached_run_finish_cleanly=bool(live_answers) and all(t.finish_status == "completed" for t in live_answers),
        ended_by=record.ended_by,
    )
