"""The LLM judge: one structured call per case-iteration for every process and outcome expectation.

The expectations are numbered from 0 (process first, then outcome) and the judge returns
``{results: [{index, reason, pass}]}``. Whatever the judge fails to say is *not judged*, never a
pass: an index with no verdict is "no verdict returned", a call that produced nothing after its
attempts is "judge produced no result". The context is ordered static first (what was built, which
does not change between attempts or iterations), then the conversation, then the expectations.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from threadcase.case import schema
from threadcase.grading._call import grading_call
from threadcase.grading.check_build import workflow_difference
from threadcase.grading.prompts import (
    JUDGE_EXPECTATIONS_FOOTER,
    JUDGE_PROMPT_VERSION,
    JUDGE_RESULT_SCHEMA,
    JUDGE_SYSTEM_PROMPT,
)
from threadcase.models import ModelSettings, ModelUsage
from threadcase.records import RunRecord
from threadcase.render import (
    conversation_metrics,
    render_memory_block,
    render_token_block,
    render_tool_calls_per_turn,
    render_transcript,
)
from threadcase.verdicts import Attribution, UnitKind, UnitVerdict
from threadcase.wire import Workflow

__all__ = [
    "Expectation",
    "JudgeAnswer",
    "JudgeOutcome",
    "JudgeVerdict",
    "build_judge_messages",
    "expectations_of",
    "judge_expectations",
    "not_judged_all",
    "render_artifacts_block",
]

WORKFLOW_JSON_CAP = 40_000
"""Longest JSON rendered per workflow or agent; a huge build must not crowd out the transcript."""


class Expectation(BaseModel):
    """One model-graded expectation: its unit key, kind, and text."""

    model_config = ConfigDict(frozen=True)

    unit: str
    kind: UnitKind
    text: str


def expectations_of(case: schema.Case) -> list[Expectation]:
    """Process expectations then outcome expectations, in the order the judge numbers them."""
    process = [
        Expectation(unit=f"process#{i}", kind="process", text=t) for i, t in enumerate(case.process_expectations)
    ]
    outcome = [
        Expectation(unit=f"outcome#{i}", kind="outcome", text=t) for i, t in enumerate(case.outcome_expectations)
    ]
    return process + outcome


def not_judged_all(
    expectations: list[Expectation], reason: str, attribution: Attribution = "framework_issue"
) -> list[UnitVerdict]:
    """One ``not_judged`` verdict per expectation, each with ``reason`` and ``attribution``."""
    return [
        UnitVerdict(unit=e.unit, kind=e.kind, label=e.text, status="not_judged", reason=reason, attribution=attribution)
        for e in expectations
    ]


class JudgeVerdict(BaseModel):
    """One entry of the judge's answer."""

    model_config = ConfigDict(populate_by_name=True)

    index: int
    reason: str
    passed: bool = Field(alias="pass")


class JudgeAnswer(BaseModel):
    """The judge's whole answer: ``{results: [{index, reason, pass}]}``."""

    results: list[JudgeVerdict]


class JudgeOutcome(BaseModel):
    """What one judge call produced: a verdict per expectation, and the call's info (model, attempts, tokens)."""

    verdicts: list[UnitVerdict]
    info: dict[str, Any] = Field(default_factory=dict)
    usage: ModelUsage = Field(default_factory=ModelUsage)
    """The judge call's token usage (retries included)."""


def _cap_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=1, default=str)
    return text if len(text) <= WORKFLOW_JSON_CAP else text[:WORKFLOW_JSON_CAP] + "\n… (truncated)"


def render_artifacts_block(record: RunRecord) -> str:
    """What the agent left on the instance: workflows (nodes, parameters, connections), agents."""
    parts = ["## Workflows built"]
    if not record.artifacts.workflows:
        parts.append("(no workflow built)")
    for wf in record.artifacts.workflows:
        parts.append(f"### Workflow {wf.name!r} (id {wf.id})\n```json\n{_cap_json(_workflow_body(wf))}\n```")
    parts.append("## Agents")
    if not record.artifacts.agents:
        parts.append("(no agent produced)")
    for agent in record.artifacts.agents:
        body = {"config": agent.config, "skills": agent.skills}
        parts.append(f"### Agent {agent.id}\n```json\n{_cap_json(body)}\n```")
    if record.artifacts.data_tables:
        parts.append("## Data tables\n```json\n" + _cap_json(record.artifacts.data_tables) + "\n```")
    parts.extend(_seeded_block(record))
    return "\n\n".join(parts)


def _seeded_block(record: RunRecord) -> list[str]:
    """Every seeded workflow and agent as the conversation left it, saved by the agent or not.

    Without it the judge cannot see "the untouched parts survive": a seeded workflow the agent never
    saved appears nowhere else.
    """
    parts: list[str] = []
    saved = {wf.id for wf in record.artifacts.workflows}
    if record.seed.workflows:
        parts.append("## Seeded workflows (restored before the conversation), at the end of it")
    for seeded in record.seed.workflows:
        head = f"### Seeded workflow {seeded.seed_name!r} (per-run id {seeded.id})"
        if seeded.deleted:
            parts.append(f"{head}: deleted during the conversation")
            continue
        if seeded.final is None:
            parts.append(f"{head}: {seeded.final_error or 'not read back'}")
            continue
        if seeded.restored is None:
            status = "its state right after the restore is unknown"
        else:
            difference = workflow_difference(seeded.restored, seeded.final)
            status = "unchanged since the restore" if difference is None else f"changed in place: {difference}"
        if seeded.id in saved:
            parts.append(f"{head}: {status}; its end state is under Workflows built")
        else:
            shown = _cap_json(_workflow_body(seeded.final))
            parts.append(f"{head}: {status}; the agent never saved it\n```json\n{shown}\n```")
    agents = {agent.id for agent in record.artifacts.agents}
    if record.seed.agents:
        parts.append("## Seeded agents (restored before the conversation), at the end of it")
    for seeded_agent in record.seed.agents:
        head = f"### Seeded agent {seeded_agent.seed_id!r} (per-run id {seeded_agent.id})"
        if seeded_agent.id in agents:
            parts.append(f"{head}: its end state is under Agents")
        elif seeded_agent.final is None:
            parts.append(f"{head}: {seeded_agent.final_error or 'not read back'}")
        else:
            body = {"config": seeded_agent.final.config, "skills": seeded_agent.final.skills}
            parts.append(f"{head}: the conversation never read or saved it\n```json\n{_cap_json(body)}\n```")
    return parts


def _workflow_body(wf: Workflow) -> dict[str, Any]:
    """What the judge reads of a workflow: nodes (with credential names), connections, activation."""
    nodes = [
        {
            "name": n.name,
            "type": n.type,
            "typeVersion": n.typeVersion,
            "parameters": n.parameters,
            **({"credentials": {k: (v or {}).get("name") for k, v in n.credentials.items()}} if n.credentials else {}),
            **({"onError": n.onError} if n.onError else {}),
        }
        for n in wf.nodes
    ]
    return {"nodes": nodes, "connections": wf.connections, "active": wf.active}


def build_judge_messages(record: RunRecord, expectations: list[Expectation]) -> list[str]:
    """The user message's parts: the cacheable artifacts block, then the conversation and expectations."""
    sections = [
        "## Conversation transcript\n" + render_transcript(record),
        "## Conversation metrics (ground truth — do not recount)\n" + conversation_metrics(record).render(),
        "## Tool calls per turn (ground truth — do not recount)\n" + render_tool_calls_per_turn(record),
        "## Token usage totals (ground truth — do not recount)\n" + render_token_block(record),
    ]
    if record.memory is not None and record.memory.compacted:
        sections.append(
            "## Observational memory after compaction (ground truth — do not recount)\n"
            + render_memory_block(record.memory)
        )
    numbered = "\n".join(f"{i}. [{e.kind}] {e.text}" for i, e in enumerate(expectations))
    sections.append(f"## Expectations\n{numbered}\n\n{JUDGE_EXPECTATIONS_FOOTER}")
    return [render_artifacts_block(record), "\n\n".join(sections)]


async def judge_expectations(
    case: schema.Case,
    record: RunRecord,
    *,
    models: ModelSettings,
    expectations: list[Expectation] | None = None,
) -> JudgeOutcome:
    """Grade the process and outcome expectations of ``case`` against ``record`` in one call.

    ``expectations`` narrows them (default: all of the case's, :func:`expectations_of`); the judge sees
    only those, numbered from 0. Never raises for a model failure: units the judge did not grade come
    back not judged.
    """
    expectations = expectations_of(case) if expectations is None else expectations
    info: dict[str, Any] = {"model": models.judge_model, "prompt_version": JUDGE_PROMPT_VERSION}
    if not expectations:
        return JudgeOutcome(verdicts=[], info=info)
    if not models.judge_enabled:
        return JudgeOutcome(verdicts=not_judged_all(expectations, "no judge model configured"), info=info)

    call = await grading_call(
        models,
        "judge",
        case=f"case {record.case_slug!r} iteration {record.iteration}",
        system=JUDGE_SYSTEM_PROMPT,
        user_parts=build_judge_messages(record, expectations),
        schema_name="expectation_verdicts",
        schema=JUDGE_RESULT_SCHEMA,
        parse=JudgeAnswer.model_validate,
    )
    info.update(
        attempts=call.attempts,
        input_tokens=call.usage.input_tokens,
        cached_input_tokens=call.usage.cached_input_tokens,
        output_tokens=call.usage.output_tokens,
    )
    usage = call.usage
    if call.errors:
        info["errors"] = "; ".join(call.errors)
    if call.value is None:
        why = f" ({call.errors[-1]})" if call.errors else ""
        return JudgeOutcome(
            verdicts=not_judged_all(expectations, f"judge produced no result{why}"), info=info, usage=usage
        )

    by_index: dict[int, JudgeVerdict] = {}
    for verdict in call.value.results:
        by_index.setdefault(verdict.index, verdict)  # a repeated index keeps its first verdict
    verdicts = []
    for i, exp in enumerate(expectations):
        got = by_index.get(i)
        if got is None or not got.reason.strip():
            verdicts.extend(not_judged_all([exp], "no verdict returned"))
            continue
        verdicts.append(
            UnitVerdict(
                unit=exp.unit,
                kind=exp.kind,
                label=exp.text,
                status="pass" if got.passed else "fail",
                reason=got.reason.strip(),
                attribution=None if got.passed else "builder_issue",
            )
        )
    return JudgeOutcome(verdicts=verdicts, info=info, usage=usage)
