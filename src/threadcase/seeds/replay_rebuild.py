"""Rebuild a thread's prior turns and agent-built artifacts from its trace runs (pure, no I/O).

Input: the thread's LangSmith-shaped runs (chain and tool runs), from LangSmith, from an exported
file, or from the demo instance's ``--trace-to`` JSONL. Output: a :class:`Reconstruction` — seed
messages, the workflows and data tables the agent had built before the live turn, the live user
message, and warnings. The result is a pure function of the runs, so an exported file rebuilds
byte-identically to the LangSmith fetch it came from.

What is understood (the demo instance's trace shape and real n8n's, where they differ):

- **Turns**: root ``chain`` runs (no parent), ordered by start time. A user turn is a root named
  ``turn`` whose ``inputs.message`` is a string not starting with a control tag
  (``<workflow-setup-required>``); other roots (resumptions, background runs) belong to the user
  turn before them. The assistant text is ``outputs.response`` (or ``output``/``text``).
- **Tool runs** belong to the root named by ``extra.metadata.langsmith_root_run_id``, else by
  ``trace_id``, else by walking ``parent_run_id``.
- **Human-in-the-loop**: a suspension (outputs ``deferred`` or ``payload.inputType``, or status
  ``suspended``) is dropped; of several runs for one ``metadata.pending_tool_call_id`` only the
  last is kept (the resumption).
- **Workflows**: the latest successful build per workflow id (``build-workflow``,
  ``patch-workflow``, ``submit-workflow``, underscores or hyphens) whose output or input carries the
  workflow as JSON (``{workflow: {name, nodes, connections}}``); ``rename-workflow`` renames;
  ``delete-workflow`` or ``workflows`` with action ``delete`` removes it for good. Builds that carry
  only workflow-SDK source code (newer n8n) cannot be compiled here: they are skipped with a warning
  and listed in ``Reconstruction.unrecovered_builds`` (a replay then does not count its seed as
  restored). See :mod:`.replay_artifacts`.
- **Data tables**: any tool output with ``table: {id, name, columns}``, schema only; a
  ``delete-data-table`` removes it.
- **Privacy**: when a run is read (:meth:`TraceRun.from_raw`), before anything else sees it, a
  root run keeps only ``inputs.message`` and ``outputs.response``, a nested chain run (a sub-agent)
  keeps no inputs or outputs at all, row values (``rows``/``data`` lists) of every run become
  ``"<N row(s) omitted>"``, ``credentials`` of workflow nodes are dropped, and credential listings
  keep only their types (:mod:`.replay_redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from threadcase.case.schema import InlineSeed, SeedDataTable, SeedWorkflow
from threadcase.errors import ReplayError
from threadcase.seeds.replay_artifacts import ArtifactLedger, fit_limits
from threadcase.seeds.replay_redact import omit_rows, strip_credentials

__all__ = ["Reconstruction", "TraceRun", "normalize_runs", "rebuild_thread"]

_CONTROL_TAG = re.compile(r"^\s*<[a-z][a-z0-9_-]*>", re.IGNORECASE)
_ONE_MS = timedelta(milliseconds=1)
_RESPONSE_KEYS = ("response", "output", "text")


# --- runs -------------------------------------------------------------------------------------


def _utc(value: datetime) -> datetime:
    # LangSmith sends naive timestamps that mean UTC; the JSONL of the demo carries an offset.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _stamp(value: datetime) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TraceRun(BaseModel):
    """One chain or tool run of a thread, already redacted (build it with :meth:`from_raw`).

    This is also the on-disk shape of the runs inside an exported replay file: only what the
    rebuild reads, nothing else of the trace.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    run_type: str
    """``chain`` or ``tool`` (others are ignored by the rebuild)."""
    parent_run_id: str | None = None
    trace_id: str | None = None
    start_time: datetime
    """UTC."""
    end_time: datetime | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    """``extra.metadata`` of the run (``thread_id``, ``langsmith_root_run_id``, ``pending_tool_call_id``)."""

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> TraceRun:
        """Read one LangSmith run (API JSON, SDK ``Run.dict()``, or a demo ``--trace-to`` line).

        Redaction happens here, so no unredacted row value or node credential outlives this call.
        Raises ``ValueError`` (a pydantic ``ValidationError``) on a run without id/name/start time.
        """
        extra = raw.get("extra")
        metadata = raw.get("metadata")
        if not isinstance(metadata, dict):
            metadata = extra.get("metadata") if isinstance(extra, dict) else None
        name = str(raw.get("name") or "")
        raw_inputs, raw_outputs = raw.get("inputs"), raw.get("outputs")
        inputs: dict[str, Any] = raw_inputs if isinstance(raw_inputs, dict) else {}
        outputs: dict[str, Any] | None = raw_outputs if isinstance(raw_outputs, dict) else None
        if raw.get("run_type") == "chain":
            # The rebuild reads only a root's message and response; everything else a chain run
            # carries (a sub-agent's prompt, its tool results, echoed rows) is someone's data that
            # nothing here needs, so it is never kept, let alone written to an export.
            if raw.get("parent_run_id") is None:
                inputs, outputs = _root_fields(inputs, outputs)
            else:
                inputs, outputs = {}, None
        # Row values are omitted from every run, not only from tools named after data tables: any
        # tool (or a response) may echo rows it read.
        inputs, outputs = omit_rows(inputs), omit_rows(outputs)
        inputs, outputs = strip_credentials(inputs), strip_credentials(outputs)
        error = raw.get("error")
        return cls(
            id=str(raw.get("id")),
            name=name,
            run_type=str(raw.get("run_type") or ""),
            parent_run_id=None if raw.get("parent_run_id") is None else str(raw["parent_run_id"]),
            trace_id=None if raw.get("trace_id") is None else str(raw["trace_id"]),
            start_time=raw["start_time"],
            end_time=raw.get("end_time"),
            inputs=inputs,
            outputs=outputs,
            error=None if error in (None, "") else str(error),
            metadata=dict(metadata) if isinstance(metadata, dict) else {},
        )

    def model_post_init(self, __context: Any) -> None:
        object.__setattr__(self, "start_time", _utc(self.start_time))
        if self.end_time is not None:
            object.__setattr__(self, "end_time", _utc(self.end_time))

    @property
    def sort_key(self) -> tuple[datetime, datetime, str]:
        # Traces stamp at millisecond precision, so sequential tool calls often share a start time;
        # the one that also ended first was called first. The id only makes the order total.
        return (self.start_time, self.end_time or self.start_time, self.id)


def _root_fields(inputs: Mapping[str, Any], outputs: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A root run reduced to ``inputs.message`` and ``outputs.response`` (from ``output``/``text`` when
    the trace names it so), the only fields a rebuild reads from it."""
    message = inputs.get("message")
    kept_inputs: dict[str, Any] = {"message": message} if isinstance(message, str) else {}
    response = next(
        (v for key in _RESPONSE_KEYS if isinstance(v := (outputs or {}).get(key), str)),
        None,
    )
    return kept_inputs, ({} if response is None else {"response": response})


def normalize_runs(raw_runs: Iterable[Mapping[str, Any] | TraceRun]) -> list[TraceRun]:
    """Redact, keep chain and tool runs, merge repeated records of one run id, sort by start time.

    A run recorded twice (a create and a later update, or a page boundary repeated) keeps the later
    record. Raises :class:`ReplayError` naming the first run that cannot be read.
    """
    by_id: dict[str, TraceRun] = {}
    for index, raw in enumerate(raw_runs):
        if isinstance(raw, TraceRun):
            run = raw
        else:
            if raw.get("run_type") not in ("chain", "tool"):
                continue
            try:
                run = TraceRun.from_raw(raw)
            except (ValidationError, KeyError) as exc:
                raise ReplayError(
                    f"trace run #{index} (id {raw.get('id')!r}) is not a LangSmith run: {_first_line(exc)}"
                ) from exc
        if run.run_type not in ("chain", "tool"):
            continue
        by_id[run.id] = run
    return sorted(by_id.values(), key=lambda r: r.sort_key)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --- reconstruction ---------------------------------------------------------------------------


class Reconstruction(BaseModel):
    """What a replay restores: the prior turns as seed messages, the agent-built artifacts, and the
    live user message (sent by the conversation loop as the opening turn)."""

    model_config = ConfigDict(extra="forbid")

    thread_id: str | None = None
    """The production thread (from the runs' ``thread_id`` metadata), when the runs name it."""
    live_turn_run_id: str
    """The root run id of the live turn."""
    live_message: str
    replayed_turns: int
    """User turns before the live turn, restored as seed messages."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """Full message envelopes (``id``, ``type``, ``role``, ``content``, ``createdAt``), in order."""
    workflows: list[SeedWorkflow] = Field(default_factory=list)
    data_tables: list[SeedDataTable] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    unrecovered_builds: list[str] = Field(default_factory=list)
    """One line per agent-built workflow the rebuild could not recreate (only workflow-SDK code, or
    an invalid workflow): the restored state then differs from the thread's, so the seed does not
    count as restored."""
    recovered_builds: int = 0
    """Workflows recovered from a build's workflow JSON (including ones deleted before the live turn)."""

    def to_inline_seed(self) -> InlineSeed:
        """The same restore request an inline seed makes (the shared restore path)."""
        return InlineSeed(
            mode="inline",
            source={"replay": {"threadId": self.thread_id, "liveTurnRunId": self.live_turn_run_id}},
            messages=[dict(m) for m in self.messages],
            workflows=list(self.workflows),
            data_tables=list(self.data_tables),
        )


class _Segment:
    """One user turn and the non-user roots (resumptions, background runs) that followed it."""

    __slots__ = ("roots", "user")

    def __init__(self, user: TraceRun | None) -> None:
        self.user = user
        self.roots: list[TraceRun] = [] if user is None else [user]


def _is_user_turn(run: TraceRun) -> bool:
    message = run.inputs.get("message")
    return run.name == "turn" and isinstance(message, str) and not _CONTROL_TAG.match(message)


def _response_text(run: TraceRun) -> str:
    outputs = run.outputs or {}
    for key in _RESPONSE_KEYS:
        value = outputs.get(key)
        if isinstance(value, str):
            return value
    return ""


def _is_suspension(run: TraceRun) -> bool:
    outputs = run.outputs or {}
    payload = outputs.get("payload")
    return (
        bool(outputs.get("deferred"))
        or outputs.get("status") == "suspended"
        or (isinstance(payload, dict) and "inputType" in payload)
    )


def _root_of(
    run: TraceRun, roots: Mapping[str, TraceRun], by_id: Mapping[str, TraceRun], memo: dict[str, str | None]
) -> str | None:
    hinted = run.metadata.get("langsmith_root_run_id")
    if isinstance(hinted, str) and hinted in roots:
        return hinted
    if run.trace_id in roots:
        return run.trace_id
    # Walk up the parents; memoised so a deep thread stays linear.
    chain: list[str] = []
    current: TraceRun | None = run
    found: str | None = None
    while current is not None:
        if current.id in memo:
            found = memo[current.id]
            break
        if current.id in roots:
            found = current.id
            break
        chain.append(current.id)
        parent = current.parent_run_id
        current = by_id.get(parent) if parent is not None and parent not in chain else None
    for run_id in chain:
        memo[run_id] = found
    return found


def _tool_call_block(run: TraceRun) -> dict[str, Any]:
    call_id = run.metadata.get("tool_call_id") or run.metadata.get("pending_tool_call_id") or run.id
    block: dict[str, Any] = {
        "type": "tool-call",
        "toolCallId": str(call_id),
        "toolName": run.name,
        "state": "resolved" if run.error is None else "error",
        "input": run.inputs,
    }
    if run.error is None:
        block["output"] = run.outputs if run.outputs is not None else {}
    else:
        block["output"] = {"error": run.error}
        block["error"] = run.error
    return block


def _dedupe_hitl(tools: list[TraceRun]) -> list[TraceRun]:
    """Drop suspensions, keep only the last run per ``pending_tool_call_id`` (the resumption)."""
    kept = [t for t in tools if not _is_suspension(t)]
    last: dict[str, int] = {}
    for index, tool in enumerate(kept):
        pending = tool.metadata.get("pending_tool_call_id")
        if isinstance(pending, str) and pending:
            last[pending] = index
    if not last:
        return kept
    return [
        tool
        for index, tool in enumerate(kept)
        if not (isinstance(p := tool.metadata.get("pending_tool_call_id"), str) and p and last[p] != index)
    ]


def rebuild_thread(
    runs: Iterable[Mapping[str, Any] | TraceRun], *, live_turn_run_id: str | None = None
) -> Reconstruction:
    """Rebuild the prior turns, the agent-built artifacts and the live message from a thread's runs.

    ``runs`` may be raw LangSmith dicts (redacted here) or :class:`TraceRun` objects. The live turn is
    the last user turn, or the user turn whose root run id is ``live_turn_run_id`` (when no user
    turn has that id: a warning, and the last user turn). Raises :class:`ReplayError` when the
    thread has no user turn, or when the live turn is the first one (nothing before it to replay).
    """
    ordered = normalize_runs(runs)
    warnings: list[str] = []
    by_id = {r.id: r for r in ordered}
    roots = {r.id: r for r in ordered if r.run_type == "chain" and r.parent_run_id is None}

    segments: list[_Segment] = []
    prelude = _Segment(None)
    for root in roots.values():  # already in start order
        if _is_user_turn(root):
            segments.append(_Segment(root))
        elif segments:
            segments[-1].roots.append(root)
        else:
            prelude.roots.append(root)
    if not segments:
        raise ReplayError(
            f"the trace has no user turn ({len(ordered)} chain/tool run(s), {len(roots)} root run(s); a user turn is a "
            "root chain run named 'turn' with a string inputs.message)"
        )

    live_index = len(segments) - 1
    if live_turn_run_id is not None:
        hit = next((i for i, s in enumerate(segments) if s.user is not None and s.user.id == live_turn_run_id), None)
        if hit is None:
            warnings.append(
                f"liveTurnRunId {live_turn_run_id!r} is not a user turn of this thread; "
                f"replaying up to the last user turn ({segments[-1].user.id if segments[-1].user else '?'}) instead"
            )
        else:
            live_index = hit
    live = segments[live_index].user
    assert live is not None
    if live_index == 0:
        raise ReplayError(
            f"the live turn ({live.id}) is the thread's first user turn: there is nothing before it to replay; "
            "pick a later liveTurnRunId, or write an ordinary case with that message as its opening turn"
        )

    tools_by_root: dict[str, list[TraceRun]] = {}
    memo: dict[str, str | None] = {}
    orphans = 0
    for run in ordered:
        if run.run_type != "tool":
            continue
        root_id = _root_of(run, roots, by_id, memo)
        if root_id is None:
            orphans += 1
            continue
        tools_by_root.setdefault(root_id, []).append(run)
    if orphans:
        warnings.append(f"{orphans} tool run(s) belong to no root run of this thread and were ignored")
    if prelude.roots:
        warnings.append(f"{len(prelude.roots)} root run(s) before the first user turn were not restored as messages")

    artifacts = ArtifactLedger()
    messages: list[dict[str, Any]] = []
    last_stamp: datetime | None = None

    def stamp(at: datetime) -> str:
        # Replay keeps real times, but restored messages must stay strictly ascending.
        nonlocal last_stamp
        at = at.replace(microsecond=at.microsecond - at.microsecond % 1000)
        if last_stamp is not None and at <= last_stamp:
            at = last_stamp + _ONE_MS
        last_stamp = at
        return _stamp(at)

    suspended = 0
    for segment in [prelude, *segments[:live_index]]:
        tools: list[TraceRun] = []
        texts: list[str] = []
        for root in segment.roots:
            root_tools = tools_by_root.get(root.id, [])
            tools.extend(root_tools)
            if text := _response_text(root):
                texts.append(text)
        kept = _dedupe_hitl(tools)
        suspended += sum(1 for t in tools if _is_suspension(t))
        for tool in kept:
            artifacts.apply(tool.name, tool.inputs, tool.outputs, tool.error)
        if segment.user is None:
            continue
        user = segment.user
        message = user.inputs["message"]
        messages.append(
            {
                "id": f"{user.id}-user",
                "type": "llm",
                "role": "user",
                "content": [{"type": "text", "text": message}],
                "createdAt": stamp(user.start_time),
            }
        )
        content: list[dict[str, Any]] = []
        if texts:
            content.append({"type": "text", "text": "\n\n".join(texts)})
        content.extend(_tool_call_block(t) for t in kept)
        if not content:
            content.append({"type": "text", "text": ""})  # a stored message needs at least one block
        messages.append(
            {
                "id": f"{user.id}-assistant",
                "type": "llm",
                "role": "assistant",
                "content": content,
                "createdAt": stamp(user.start_time + _ONE_MS),
            }
        )
    if suspended:
        warnings.append(f"{suspended} suspended human-in-the-loop tool run(s) dropped (their resumptions are kept)")
    warnings.extend(artifacts.warnings())

    workflows, tables = fit_limits(artifacts, messages, warnings)
    thread_id = next((t for r in roots.values() if isinstance(t := r.metadata.get("thread_id"), str)), None)
    return Reconstruction(
        thread_id=thread_id,
        live_turn_run_id=live.id,
        live_message=live.inputs["message"],
        replayed_turns=live_index,
        messages=messages,
        workflows=workflows,
        data_tables=tables,
        warnings=warnings,
        unrecovered_builds=artifacts.unrecovered(),
        recovered_builds=artifacts.recovered(),
    )
