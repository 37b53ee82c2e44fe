"""After the conversation: collect token numbers, what the agent built, the end state of everything the
seed restored (saved by the agent or not), and the thread's memory.

Everything here is best effort and bounded in time: an instance without run debug, a workflow the
agent deleted, a memory route an older instance lacks — each becomes a warning on the record, never
an exception, so what the conversation produced is still graded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from threadcase import records, wire
from threadcase._util.fanout import fan_out
from threadcase.errors import MissingRouteError, ThreadcaseError
from threadcase.user_proxy.base import SavedWorkflow

if TYPE_CHECKING:
    from threadcase.instance import InstanceClient

__all__ = ["built_ids", "collect_after_conversation", "run_prompts", "saved_workflows"]

_DEBUG_CONCURRENCY = 4


def _workflow_id(call: records.ToolCallRecord) -> str | None:
    result = call.result if isinstance(call.result, dict) else {}
    wid = result.get("workflowId") or call.args.get("workflowId")
    return str(wid) if wid and call.error is None else None


def saved_workflows(turns: list[records.Turn]) -> list[SavedWorkflow]:
    """Workflows the agent saved (built, edited, renamed, moved) and did not delete, last touched last."""
    order: dict[str, str] = {}
    for turn in turns:
        for call in turn.tool_calls:
            wid = _workflow_id(call)
            if wid is None:
                continue
            if call.tool_name == "delete-workflow":
                order.pop(wid, None)
                continue
            if call.tool_name not in ("build-workflow", "rename-workflow", "move-workflow"):
                continue
            result = call.result if isinstance(call.result, dict) else {}
            raw = result.get("workflow")
            workflow: dict[str, Any] = raw if isinstance(raw, dict) else {}
            name = result.get("name") or workflow.get("name") or order.get(wid) or wid
            order.pop(wid, None)
            order[wid] = str(name)
    return [SavedWorkflow(id=wid, name=name) for wid, name in order.items()]


def built_ids(turns: list[records.Turn]) -> tuple[list[str], list[str], list[str]]:
    """(workflow ids, agent ids, data table ids) the live conversation built or edited (agents: also read)."""
    live = [t for t in turns if not t.seeded]
    workflows = [w.id for w in saved_workflows(live)]
    agents: list[str] = []
    tables: list[str] = []
    for turn in live:
        for call in turn.tool_calls:
            result: dict[str, Any] = call.result if isinstance(call.result, dict) else {}
            if call.error is not None:
                continue
            # Any agent the live turns read or saved, not only build-agent results: an edit whose result
            # omits the id, or a read followed by a claimed-but-unsaved edit, must still be read back so
            # the agent checks can see the seeded agent as it was left.
            agent_id = str(result.get("agentId") or call.args.get("agentId") or "")
            touched = "agent" in call.tool_name and not call.tool_name.startswith("delete-")
            if agent_id and touched and agent_id not in agents:
                agents.append(agent_id)
            table = result.get("table")
            if call.tool_name == "create-data-table" and isinstance(table, dict) and table.get("id"):
                tables.append(str(table["id"]))
    return workflows, agents, tables


def _first_prompt(steps: list[wire.RunDebugStep]) -> wire.StepInput | None:
    return steps[0].prompt if steps else None


def run_prompts(record: records.RunRecord, prompts: dict[str, wire.StepInput]) -> list[records.RunPrompt]:
    """Each live run's first request as run debug recorded it, with the turn and the history it came after.

    The history is counted in the record's turns (seeded messages, then each live user message and each
    answer): a request that carried fewer earlier messages than that had the rest replaced.
    """
    found: dict[str, records.RunPrompt] = {}
    user_turn, before = 0, 0
    for position, turn in enumerate(record.turns):
        if turn.seeded:
            continue
        if turn.role == "user":
            user_turn, before = user_turn + 1, position
        # The answering assistant turn shares the user turn's runs, and may add one (a resumed run).
        for run_id in turn.run_ids:
            prompt = prompts.get(run_id)
            if prompt is None or prompt.messages is None or run_id in found or not user_turn:
                continue
            found[run_id] = records.RunPrompt(
                run_id=run_id,
                turn=user_turn,
                messages_sent=len(prompt.messages),
                thread_messages=before,
                observations=prompt.observations,
            )
    return list(found.values())


async def _usage(client: InstanceClient, record: records.RunRecord, thread_id: str) -> None:
    run_ids: list[str] = []
    for turn in record.live_turns:
        for rid in turn.run_ids:
            if rid not in run_ids:
                run_ids.append(rid)
    usage: dict[str, list[wire.TokenUsage]] = {}
    prompts: dict[str, wire.StepInput] = {}
    try:
        for summary in await client.thread_runs(thread_id):
            if summary.runId not in run_ids:
                run_ids.append(summary.runId)
            if summary.steps is not None:
                # The list already carried the steps (an instance that offers it): no request per run.
                usage[summary.runId] = wire.step_usages(summary.steps)
                if (prompt := _first_prompt(summary.steps)) is not None:
                    prompts[summary.runId] = prompt
    except ThreadcaseError as exc:
        record.warnings.append(f"no run list from run debug: {exc}")

    async def one(run_id: str) -> tuple[str, list[wire.RunDebugStep] | None]:
        try:
            debug = await client.run_debug(run_id)
        except ThreadcaseError as exc:
            record.warnings.append(f"no run debug for run {run_id}: {exc}")
            return run_id, None
        return run_id, debug.steps

    missing = [rid for rid in run_ids if rid not in usage]
    for run_id, steps in await fan_out(missing, one, limit=_DEBUG_CONCURRENCY):
        if steps is not None:
            usage[run_id] = wire.step_usages(steps)
            if (prompt := _first_prompt(steps)) is not None:
                prompts[run_id] = prompt
    # In the order of the conversation, whichever way each was read (with its finish event, listed, asked).
    merged = {**record.usage, **usage}
    record.usage = {rid: merged[rid] for rid in run_ids if rid in merged} | merged
    record.run_prompts = run_prompts(record, prompts)


async def _artifacts(
    client: InstanceClient, record: records.RunRecord, project_id: str, built: tuple[list[str], list[str], list[str]]
) -> None:
    workflow_ids, agent_ids, table_ids = built
    for wid in workflow_ids:
        try:
            record.artifacts.workflows.append(await client.get_workflow(wid))
        except ThreadcaseError as exc:
            record.note_instance_failure(f"built workflow {wid} could not be read: {exc}")
    for aid in agent_ids:
        try:
            record.artifacts.agents.append(await client.get_agent(project_id, aid))
        except ThreadcaseError as exc:
            record.note_instance_failure(f"built agent {aid} could not be read: {exc}")
    if table_ids:
        try:
            tables = await client.list_data_tables(project_id)
        except ThreadcaseError as exc:
            record.note_instance_failure(f"data tables could not be listed: {exc}")
        else:
            record.artifacts.data_tables.extend(t for t in tables if str(t.get("id")) in table_ids)
    await _seeded_end_states(client, record, project_id)


def _deleted_live(record: records.RunRecord) -> set[str]:
    return {
        str(call.args.get("workflowId"))
        for turn in record.live_turns
        for call in turn.tool_calls
        if call.tool_name == "delete-workflow" and call.error is None and call.args.get("workflowId")
    }


async def _seeded_end_states(client: InstanceClient, record: records.RunRecord, project_id: str) -> None:
    """The end state of every seeded workflow and agent, saved by the agent or not.

    A seeded workflow the agent never saved is still evidence: "the untouched parts survive" and "the
    edit landed in place, not in a copy" are only visible here. What the built-artifact reads already
    fetched is reused; a read that fails only leaves that artifact without an end state (its checks are
    then not judged), since nothing the agent did depends on it.
    """
    read = {wf.id: wf for wf in record.artifacts.workflows}
    deleted = _deleted_live(record)
    for seeded in record.seed.workflows:
        if seeded.id in deleted:
            seeded.deleted = True
            continue
        if seeded.id in read:
            seeded.final = read[seeded.id]
            continue
        try:
            seeded.final = await client.get_workflow(seeded.id)
        except ThreadcaseError as exc:
            if getattr(exc, "status", None) == 404:
                seeded.deleted = True
            else:
                seeded.final_error = f"could not be read after the conversation: {exc}"
    agents = {agent.id: agent for agent in record.artifacts.agents}
    for seeded_agent in record.seed.agents:
        if seeded_agent.id in agents:
            seeded_agent.final = agents[seeded_agent.id]
            continue
        try:
            seeded_agent.final = await client.get_agent(project_id, seeded_agent.id)
        except ThreadcaseError as exc:
            seeded_agent.final_error = f"could not be read after the conversation: {exc}"


async def _memory(client: InstanceClient, record: records.RunRecord, thread_id: str) -> None:
    try:
        record.memory = await client.thread_memory(thread_id)
    except MissingRouteError:
        # n8n 2.41 has no memory route: not a failure of this run, but compaction cannot be shown.
        record.memory_unavailable = "this instance exposes no memory route"
    except ThreadcaseError as exc:
        record.warnings.append(f"thread memory could not be read: {exc}")


async def collect_after_conversation(
    client: InstanceClient,
    record: records.RunRecord,
    *,
    thread_id: str,
    project_id: str,
    seconds: float = 60,
    read_memory: bool = True,
    list_runs: bool = True,
) -> None:
    """Fill ``record.usage``, ``record.artifacts`` and ``record.memory``; never raises for the instance.

    ``read_memory=False`` leaves ``record.memory`` None: the caller knows no memory task ever ran.
    ``list_runs=False`` keeps ``record.usage`` as the caller filled it: every run's finish carried its steps.
    """
    built = built_ids(record.turns)
    seeded = record.seed.workflows or record.seed.agents
    if not list_runs and not read_memory and not any(built) and not seeded:
        return  # nothing to ask the instance (the usual ending): no scope, no task group
    with anyio.move_on_after(seconds) as scope:
        async with anyio.create_task_group() as tg:
            if list_runs:
                tg.start_soon(_usage, client, record, thread_id)
            tg.start_soon(_artifacts, client, record, project_id, built)
            if read_memory:
                tg.start_soon(_memory, client, record, thread_id)
    if scope.cancelled_caught:
        record.note_instance_failure(f"post-conversation collection stopped after {seconds:g} s; the record is partial")
