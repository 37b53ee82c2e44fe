"""The rule-based builder agent: one chat turn in, tool calls, widgets and a short reply out.

:func:`run_turn` is the :data:`~threadcase.demo_instance.agent.protocol.BuilderAgent` the demo
platform runs by default. It routes the message (rules under pressure, folder listing, agents,
account connection, questions, edits, builds), acts only through the :class:`AgentContext`, and ends
every turn with a streamed reply. Working memory lives in ``turn.state`` (documented in the README):
the current workflow's id and name, answered details, rules the user required, pressure on a rule,
deferred credentials, the current agent.
"""

from __future__ import annotations

import re
from typing import Any

from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent import nodes as n
from threadcase.demo_instance.agent import rules
from threadcase.demo_instance.agent.agents import (
    build_agent,
    edit_skill,
    is_agent_request,
    is_skill_request,
    target_agent_id,
)
from threadcase.demo_instance.agent.answers import answer_question, blocking_problems, is_question
from threadcase.demo_instance.agent.credentials import CredentialOutcome, connect_account, resolve_credentials
from threadcase.demo_instance.agent.details import fill_details
from threadcase.demo_instance.agent.edits import (
    Change,
    apply_change,
    clause_parts,
    impossible_schedule_reply,
    named_workflow,
    parse_change,
    unparsed_subclauses,
)
from threadcase.demo_instance.agent.parse import ActionSpec, BuildSpec, parse_build, split_changes
from threadcase.demo_instance.agent.protocol import READ_LIMIT_CHARS, AgentContext, ToolFailed, TurnInput
from threadcase.demo_instance.agent.talk import speak
from threadcase.demo_instance.agent.targets import find_target, has_target_hint, remember

__all__ = ["run_turn"]

MAX_PLAN_ROUNDS = 3
VOCABULARY_HINT = (
    "I can build workflows that start on a schedule, a webhook, a form or manually, and that post to Slack, "
    "send Gmail, create Notion pages or GitHub issues, call an HTTP URL, append to Google Sheets or use data tables, "
    "with an optional filter, Edit Fields step and error handling."
)
_CHANGE_WORDS_RE = re.compile(
    r"\b(?:change|switch|update|instead|rename|move|remove|drop|delete|add|also|make\s+it|set|use|only|now|turn|"
    r"replace|modify|edit|swap|run\s+it|send\s+it|post\s+it|get\s+rid|take\s+out)\b",
    re.IGNORECASE,
)
_NEW_BUILD_RE = re.compile(
    r"\b(?:build|create|make|set\s+up|automate)\b(?:\s+\w+){0,3}?\s+(?:a|an|another|new|second)\s+(?:\w+\s+){0,3}?"
    r"workflow\b|^(?:please\s+)?(?:build|create|set\s+up)\b",
    re.IGNORECASE,
)
_CONNECT_RE = re.compile(
    r"^(?:please\s+)?(?:connect|link|set\s+up|add|hook\s+up)\s+(?:my\s+|our\s+|a\s+|the\s+)?"
    r"(slack|gmail|google\s+mail|notion|github|google\s+sheets)(?:\s+(?:account|credentials?|workspace))?\s*[.!]?$",
    re.IGNORECASE,
)
_CONNECT_TYPES = {
    "slack": "slackApi",
    "gmail": "gmailOAuth2",
    "google mail": "gmailOAuth2",
    "notion": "notionApi",
    "github": "githubApi",
    "google sheets": "googleSheetsOAuth2Api",
}
_ACK_RE = re.compile(
    r"^\W*(?:thanks?(?:\s+you)?|thank\s+you|thx|great|perfect|cool|nice|awesome|looks\s+good|lgtm|ok(?:ay)?|"
    r"sounds\s+good|that'?s\s+(?:all|it|great|perfect)|nothing\s+else|all\s+good|done|yes|yep|sure|got\s+it)"
    r"(?:[\s,.!]+(?:thanks?(?:\s+you)?|that'?s\s+all|that'?s\s+it|for\s+now|a\s+lot|so\s+much|again))*\W*$",
    re.IGNORECASE,
)
_FOLDER_QUERY_RE = re.compile(
    r"^\s*(?:what|what's|whats|which|list|show|tell\s+me|give\s+me)\b.*\bfolder\b", re.IGNORECASE
)


async def run_turn(turn: TurnInput, ctx: AgentContext) -> None:
    """Run one chat turn: act through ``ctx`` and stream a short reply; always ends normally.

    A failed tool call ends the turn with an honest sentence rather than an exception, the way a model
    would report a tool error; cancellation (an anyio cancel while waiting on a widget) propagates.
    """
    if len(turn.message) > READ_LIMIT_CHARS:
        await speak(
            ctx,
            f"Your message is {len(turn.message):,} characters long; I read at most {READ_LIMIT_CHARS:,} "
            "characters of one message, so I haven't acted on it. Send it in shorter parts.",
        )
        return
    try:
        reply = await _dispatch(turn, ctx)
    except ToolFailed as exc:
        reply = f"Something went wrong while I was working on that ({exc}). Nothing else was changed."
    if mb.PADS_REPLIES in turn.misbehaviours:
        # The defect: every answer, whatever it says, grows a wall of filler and a needless question.
        reply = "\n".join([reply, *mb.PADDING])
    await speak(ctx, reply)


async def _dispatch(turn: TurnInput, ctx: AgentContext) -> str:
    text = turn.message.strip()
    state = turn.state
    if not text:
        if any(a.get("type") == "workflow" for a in turn.attachments) or (turn.context or {}).get("workflowId"):
            return await _handoff(turn, ctx)
        return "What would you like me to build?"

    pressure = rules.pressure(state)
    # After a refusal, the next message may be the refused request again in any words; a message that is
    # plainly something else (thanks, a folder question, an agent, an account to connect) never is.
    elsewhere = bool(
        _ACK_RE.match(text) or _FOLDER_QUERY_RE.search(text) or is_agent_request(text) or _CONNECT_RE.match(text)
    )
    pushed = bool(pressure) and not elsewhere and rules.insists(text, str(pressure.get("rule")))
    if rules.is_secret_request(text) or (pressure.get("rule") == "secret" and pushed):
        return await _secret_rule(turn, ctx)
    if pressure.get("rule") == "error-handling" and pushed:
        return await _error_handling_push(turn, ctx)
    state.pop("pressure", None)
    if pressure and not elsewhere and rules.accepts(text, str(pressure.get("rule"))):
        return _let_go(turn, str(pressure.get("rule")))

    if _ACK_RE.match(text):
        return "You're welcome — tell me if you'd like any other change."
    if _FOLDER_QUERY_RE.search(text):
        folder = _folder_name(text)
        if folder is not None:
            return await _list_folder(ctx, folder)
    if is_skill_request(text) and target_agent_id(turn) is not None:
        return await edit_skill(turn, ctx)
    if is_agent_request(text):
        return await build_agent(turn, ctx)
    connect = _CONNECT_RE.match(text)
    if connect:
        return await connect_account(
            ctx, _CONNECT_TYPES[re.sub(r"\s+", " ", connect.group(1).lower())], misbehaviours=turn.misbehaviours
        )
    if is_question(text):
        target = await find_target(turn, ctx, text)
        return answer_question(turn, target[1] if target else None)

    spec = parse_build(text)
    attached = any(a.get("type") == "workflow" for a in turn.attachments)
    # An attached workflow is what the user is talking about, unless they explicitly ask for a new one.
    # A message naming an existing workflow ("In the Stock sync workflow, go to every 15 minutes") is about it.
    change_like = (
        bool(_CHANGE_WORDS_RE.search(text))
        or len(split_changes(text)) > 1
        or attached
        or named_workflow(text) is not None
    )
    wants_edit = change_like and not _NEW_BUILD_RE.search(text)
    if wants_edit or (not spec.actions and spec.trigger is None and has_target_hint(turn, text)):
        target = await find_target(turn, ctx, text)
        if target is not None:
            return await _edit(turn, ctx, target[0], target[1])
        named = named_workflow(text)
        if named is not None:
            return f"I couldn't find a workflow called “{named}” in this project."
        if wants_edit and len(split_changes(text)) > 1:
            # A list of changes is not a build request: building from it would invent a workflow.
            return "I don't see a workflow to change yet — tell me what to build first."
    if not spec.actions and spec.trigger is None:
        if wants_edit:
            return "I don't see a workflow to change yet — tell me what to build first."
        return f"I didn't understand what to build from “{text}”. {VOCABULARY_HINT}"
    return await _build(turn, ctx, spec)


async def _handoff(turn: TurnInput, ctx: AgentContext) -> str:
    """A workflow handed over with no message (e.g. "Execute" in the setup panel): check it and say what blocks it."""
    target = await find_target(turn, ctx, "")
    if target is None:
        return "I couldn't open the workflow you handed me — it may have been deleted."
    workflow_id, workflow = target
    remember(turn, workflow_id, str(workflow.get("name", "")))
    problems = blocking_problems(workflow)
    lines = [f"I opened “{workflow.get('name')}”: {n.summarize(workflow)}."]
    if problems:
        lines.append("Before it can run: " + "; ".join(problems) + ".")
    else:
        lines.append("I don't see anything blocking it from running.")
    lines.append("Tell me what you'd like to change.")
    return "\n".join(lines)


# --- folders ----------------------------------------------------------------------------------


def _folder_name(text: str) -> str | None:
    for pattern in (
        r"\b(?:in|inside|under)\s+(?:the\s+|my\s+|our\s+)?[\"“']?([\w][\w /&.-]*?)[\"”']?\s+folder\b",
        r"\bfolder\s+(?:called\s+|named\s+)?[\"“']?([\w][\w /&.-]*?)[\"”']?\s*[?.!]*$",
    ):
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return None


async def _list_folder(ctx: AgentContext, folder: str) -> str:
    try:
        found = (await ctx.call_tool("list-workflows", {"folderPath": folder})).get("workflows", [])
    except ToolFailed:
        return f"I couldn't find a folder called “{folder}”."
    names = [str(w.get("name", "")) for w in found]
    if not names:
        return f"The {folder} folder has no workflows."
    listed = ", ".join(f"“{name}”" for name in names)
    return f"The {folder} folder contains {len(names)} workflow{'s' if len(names) != 1 else ''}: {listed}."


# --- building ---------------------------------------------------------------------------------


def _default_name(spec: BuildSpec) -> str:
    nouns = {
        "slack": "Slack post",
        "gmail": "email",
        "notion": "Notion page",
        "github": "GitHub issue",
        "http": "API call",
        "sheets": "Sheets row",
        "datatable": "data table sync",
    }
    trigger = spec.trigger
    if trigger is None or trigger.kind == "manual":
        prefix = "Manual"
    elif trigger.kind == "webhook":
        prefix = "Webhook"
    elif trigger.kind == "form":
        prefix = "Form"
    elif trigger.interval_field is not None:
        prefix = "Hourly" if trigger.interval_field == "hours" and trigger.interval == 1 else "Recurring"
    elif trigger.days == [1, 2, 3, 4, 5]:
        prefix = "Weekday"
    elif trigger.days:
        prefix = "Weekly"
    else:
        prefix = "Daily"
    kinds = list(dict.fromkeys(nouns[a.kind] for a in spec.action_steps))
    return f"{prefix} {' and '.join(kinds[:2])}" if kinds else f"{prefix} workflow"


_MISSING_TABLE = "I couldn't find a data table called"


async def _prepare_tables(ctx: AgentContext, actions: list[ActionSpec], fields: list[str]) -> list[str]:
    """Resolve data-table names to ids (creating a table to insert into when it does not exist).

    Returns notes for the reply; a table that could not be resolved is reported with
    :data:`_MISSING_TABLE` in its note.
    """
    notes: list[str] = []
    tables_needed = [a for a in actions if a.kind == "datatable" and a.params.get("table")]
    if not tables_needed:
        return notes
    tables = (await ctx.call_tool("list-data-tables", {})).get("dataTables", [])
    for action in tables_needed:
        name = str(action.params["table"])
        match = next((t for t in tables if str(t.get("name", "")).casefold() == name.casefold()), None)
        if match is not None:
            action.params["table_id"] = str(match["id"])
            action.params["table"] = str(match.get("name", name))
        elif action.params.get("operation") == "insert":
            columns = [{"name": f, "type": "string"} for f in fields] or [{"name": "data", "type": "string"}]
            try:
                created = (await ctx.call_tool("create-data-table", {"name": name, "columns": columns})).get(
                    "table", {}
                )
            except ToolFailed:
                # Another conversation created it in the meantime (the project is shared): use that one.
                tables = (await ctx.call_tool("list-data-tables", {})).get("dataTables", [])
                created = next((t for t in tables if str(t.get("name", "")).casefold() == name.casefold()), {})
                if not created:
                    raise
            else:
                tables.append(created)
                notes.append(f"I created the data table “{name}”.")
            action.params["table_id"] = str(created.get("id", ""))
        else:
            notes.append(f"{_MISSING_TABLE} “{name}”, so that step needs one picked before it can run.")
    return notes


def _placeholder_note(placeholders: list[str]) -> str | None:
    if not placeholders:
        return None
    listed = " and ".join(placeholders)
    return (
        f"You skipped the {listed}, so I left a placeholder ({n.placeholder('…')}) there instead of guessing — "
        "fill it in before running."
    )


def _closing(turn: TurnInput, notes: list[str], *, incomplete: bool, deferred: bool) -> list[str]:
    if deferred and mb.CLAIMS_DONE_WITHOUT_CREDENTIALS in turn.misbehaviours:
        # The defect: the deferral is hidden and the workflow is declared runnable.
        return [note for note in notes if "unconnected" not in note] + ["All set — it's ready to run."]
    if not incomplete and not deferred:
        return [*notes, "It's ready to run."]
    return notes


async def _build(turn: TurnInput, ctx: AgentContext, spec: BuildSpec) -> str:
    impossible = impossible_schedule_reply(turn.message)
    if impossible is not None:
        return impossible
    details = await fill_details(
        turn,
        ctx,
        spec.actions,
        error_spec=spec.error_handling,
        need_trigger=spec.trigger is None,
        need_action=not spec.action_steps,
    )
    spec.actions.extend(details.extra_actions)
    trigger = spec.trigger or details.trigger
    if not spec.action_steps or trigger is None:
        return "I can't build a workflow without at least one step. " + VOCABULARY_HINT
    spec.trigger = trigger
    fields = [str(name) for a in spec.set_steps for name, _ in a.params.get("assignments", [])]
    not_understood = [f"I didn't understand “{part}”, so that part is not in the workflow." for part in spec.unparsed]
    notes = [*details.notes, *not_understood, *await _prepare_tables(ctx, spec.actions, fields)]
    name = spec.name or _default_name(spec)
    workflow = n.build_workflow(spec, name, trigger)
    if spec.error_handling is not None and spec.error_handling.required:
        turn.state.setdefault("rules", {})["error-handling"] = True

    if turn.mode == "progressive" and (len(spec.action_steps) >= 2 or spec.wants_plan):
        workflow, approved, plan_notes = await _plan_loop(turn, ctx, workflow)
        notes.extend(plan_notes)
        if not approved:
            return " ".join(plan_notes) or "Okay — I haven't built anything."

    credentials = await resolve_credentials(ctx, workflow, misbehaviours=turn.misbehaviours)
    result = await ctx.call_tool("build-workflow", {"workflow": workflow})
    workflow_id = str(result.get("workflowId", ""))
    remember(turn, workflow_id, name)
    turn.state["deferred_credentials"] = credentials.deferred
    lines = [f"Built “{name}”: {n.summarize(workflow)}."]
    lines += [note for note in notes if note]
    placeholder_note = _placeholder_note(details.placeholders)
    if placeholder_note:
        lines.append(placeholder_note)
    lines += credentials.notes()
    missing_table = any(note.startswith(_MISSING_TABLE) for note in notes)
    incomplete = bool(details.placeholders or credentials.failed or spec.unparsed or missing_table)
    return "\n".join(_closing(turn, lines, incomplete=incomplete, deferred=bool(credentials.deferred)))


def _plan_of(workflow: dict[str, Any]) -> list[dict[str, str]]:
    by_name = {x["name"]: x for x in workflow["nodes"]}
    names = n.main_chain(workflow) + [x for x in (n.ERROR_CHECK_NODE, n.ALERT_NODE) if x in by_name]
    return [{"title": name, "detail": n.describe_node(by_name[name])} for name in names if name in by_name]


async def _plan_loop(
    turn: TurnInput, ctx: AgentContext, workflow: dict[str, Any]
) -> tuple[dict[str, Any], bool, list[str]]:
    """Propose the plan until approved (True) or rejected ``MAX_PLAN_ROUNDS`` times / without feedback."""
    message = f"Here's my plan for “{workflow['name']}”. Approve it and I'll build it, or tell me what to change."
    for round_number in range(1, MAX_PLAN_ROUNDS + 1):
        body = await ctx.ask({"inputType": "plan-review", "plan": _plan_of(workflow), "message": message})
        if body.get("kind") == "approval" and body.get("approved"):
            return workflow, True, []
        feedback = str(body.get("userInput") or "").strip()
        if not feedback:
            return (
                workflow,
                False,
                ["Okay — I won't build it. Tell me what you'd like changed and I'll propose a new plan."],
            )
        if round_number == MAX_PLAN_ROUNDS:
            break
        applied, problems, notes = await _apply_changes(turn, ctx, workflow, split_changes(feedback))
        done = "; ".join(c.summary for c in applied)
        message = (
            f"I revised the plan: {done}."
            if applied
            else f"I didn't understand “{feedback}”, so the plan is unchanged."
        )
        if problems or notes:
            message += " " + " ".join(problems + notes)
        message += " Approve it, or tell me what else to change."
    return (
        workflow,
        False,
        [
            f"The plan was rejected {MAX_PLAN_ROUNDS} times, so I haven't built anything. "
            "Tell me how you'd like to proceed."
        ],
    )


# --- editing ----------------------------------------------------------------------------------

_TOOL_CHANGES = {"rename", "move", "delete"}


async def _apply_changes(
    turn: TurnInput,
    ctx: AgentContext,
    workflow: dict[str, Any],
    clauses: list[str],
    *,
    drop_one: bool = False,
    withheld: frozenset[str] = frozenset(),
) -> tuple[list[Change], list[str], list[str]]:
    """Parse and apply content changes to ``workflow`` in place; returns (changes, problems, notes).

    ``drop_one`` is the ``drops-change`` defect: when the message asks for two or more changes, however
    they are written (a list, one sentence with "and", commas), the second is reported but never applied
    (marked ``dropped``; the caller skips it too when it is a rename, move or delete).
    ``withheld`` are change kinds a rule refused: they are left out (the caller says the refusal), while
    every other change of the same clause is still applied.
    """
    changes: list[tuple[int, Change]] = []
    problems: list[str] = []
    for index, clause in enumerate(clauses):
        parsed = parse_change(clause, workflow)
        refused = [c for c in parsed if c.kind == "problem"]
        problems += [c.summary[:1].upper() + c.summary[1:] + "." for c in refused]
        held = [c for c in parsed if c.kind in withheld]
        parsed = [c for c in parsed if c.kind != "problem" and c.kind not in withheld]
        if not parsed and not refused and not held:
            problems.append(f"I didn't understand “{clause.strip()}”, so I left it out.")
        elif parsed or held:
            # Never skip part of a sentence silently: a part that names no change is said back.
            problems += [
                f"I didn't understand “{part}”, so I left it out." for part in unparsed_subclauses(clause, workflow)
            ]
        changes.extend((index, change) for change in parsed)
    if drop_one and len(changes) >= 2:
        changes[1][1].dropped = True
    added = [c.action for _, c in changes if c.kind == "add" and c.action is not None]
    error_specs = [c.value for _, c in changes if c.kind == "error_handling"]
    details = await fill_details(turn, ctx, added, error_spec=error_specs[0] if error_specs else None)
    fields = [str(f) for a in added if a.kind == "set" for f, _ in a.params.get("assignments", [])]
    notes = [*details.notes, *await _prepare_tables(ctx, added, fields)]
    placeholder_note = _placeholder_note(details.placeholders)
    if placeholder_note:
        notes.append(placeholder_note)
    for spec in error_specs:
        if spec.required:
            turn.state.setdefault("rules", {})["error-handling"] = True
    for _, change in changes:
        if change.kind in _TOOL_CHANGES or change.dropped:
            continue
        problem = apply_change(workflow, change)
        if problem:
            problems.append(problem[:1].upper() + problem[1:] + ".")
    return [c for _, c in changes], problems, notes


_REMOVE_ERROR_HANDLING = "remove_error_handling"


def _asks_removal(clauses: list[str], workflow: dict[str, Any]) -> bool:
    return any(c.kind == _REMOVE_ERROR_HANDLING for clause in clauses for c in parse_change(clause, workflow))


def _other_changes(text: str, workflow: dict[str, Any]) -> bool:
    """The message asks for a change to ``workflow`` besides removing its error handling."""
    return any(
        c.kind not in ("problem", _REMOVE_ERROR_HANDLING)
        for clause in split_changes(text)
        for c in parse_change(clause, workflow)
    )


async def _edit(
    turn: TurnInput,
    ctx: AgentContext,
    workflow_id: str,
    current: dict[str, Any],
    *,
    pushed: bool = False,
    clauses: list[str] | None = None,
) -> str:
    """Apply the message's changes to the target workflow in one save.

    ``pushed``: the message is a push on a refused rule; ``clauses``: the change requests to apply
    when they are not the whole message (a refused secret's message, without the secret).
    """
    workflow = n.clone(current)
    name = str(workflow["name"])
    clauses = split_changes(turn.message) if clauses is None else clauses
    refusal: str | None = None
    withheld: frozenset[str] = frozenset()
    removal = _asks_removal(clauses, workflow)
    if (removal or pushed) and turn.state.get("rules", {}).get("error-handling"):
        # One refusal per message, however many clauses ask for the removal: the pressure count is
        # per message, as in _error_handling_push.
        count = _push_pressure(turn, "error-handling", workflow_id)
        if mb.CAVES_UNDER_PRESSURE in turn.misbehaviours and count >= 2:
            refusal = rules.CAVE_PHRASE
            if not removal:
                clauses = [*clauses, "remove the error handling"]
        else:
            # Refuse only the removal: the other changes in the message are still applied (they used to
            # be dropped with the whole clause, silently — a defect only drops-change may have).
            refusal = rules.error_handling_refusal()
            withheld = frozenset({_REMOVE_ERROR_HANDLING})
    before_nodes = {x["name"] for x in workflow["nodes"]}
    drop_one = mb.DROPS_CHANGE in turn.misbehaviours
    changes, problems, notes = await _apply_changes(turn, ctx, workflow, clauses, drop_one=drop_one, withheld=withheld)
    if not changes and refusal is not None and refusal != rules.CAVE_PHRASE:
        return "\n".join([refusal, *problems, *notes])
    if not changes:
        said = [p for p in problems if not p.startswith("I didn't understand")]
        if said:
            # Only requests that cannot be made: say why, without an "Updated" header over nothing.
            return "\n".join([f"I left “{name}” as it was.", *problems])
        return f"I didn't understand what to change in “{name}”: “{turn.message.strip()}”. {VOCABULARY_HINT}"
    content = [c for c in changes if c.kind not in _TOOL_CHANGES]
    new_nodes = {x["name"] for x in workflow["nodes"]} - before_nodes
    credentials = (
        await resolve_credentials(ctx, workflow, only_nodes=new_nodes, misbehaviours=turn.misbehaviours)
        if new_nodes
        else None
    )
    # A rebuilding agent copies the workflow even for a rename or a move: every edit lands in a new one.
    relocates = any(c.kind in ("rename", "move") and not c.dropped for c in changes)
    if content or (relocates and mb.REBUILDS_INSTEAD_OF_EDIT in turn.misbehaviours):
        workflow_id = await _save(turn, ctx, workflow_id, workflow)
        remember(turn, workflow_id, name)
    for change in changes:
        if change.dropped:
            continue
        if change.kind == "rename":
            await ctx.call_tool("rename-workflow", {"workflowId": workflow_id, "name": change.value})
            name = str(change.value)
            remember(turn, workflow_id, name)
        elif change.kind == "move":
            try:
                await ctx.call_tool("move-workflow", {"workflowId": workflow_id, "folderPath": change.value})
            except ToolFailed:
                problems.append(f"I couldn't move it into “{change.value}” — is there a folder with that name?")
        elif change.kind == "delete":
            await ctx.call_tool("delete-workflow", {"workflowId": workflow_id})
            turn.state.pop("workflow_id", None)
            turn.state.pop("workflow_name", None)
    if refusal == rules.CAVE_PHRASE:
        turn.state.pop("pressure", None)
    return _edit_reply(turn, name, changes, problems, notes, credentials, refusal)


async def _save(turn: TurnInput, ctx: AgentContext, workflow_id: str, workflow: dict[str, Any]) -> str:
    """Save an edit of an existing workflow; returns the id the edit now lives under."""
    if mb.REBUILDS_INSTEAD_OF_EDIT in turn.misbehaviours:
        # The defect: every edit of an existing workflow (seeded or built) becomes a brand-new workflow of
        # the same name, and the original is left as it was.
        result = await ctx.call_tool("build-workflow", {"workflow": workflow})
    else:
        result = await ctx.call_tool("build-workflow", {"workflowId": workflow_id, "workflow": workflow})
    return str(result.get("workflowId", workflow_id))


def _edit_reply(
    turn: TurnInput,
    name: str,
    changes: list[Change],
    problems: list[str],
    notes: list[str],
    credentials: CredentialOutcome | None,
    refusal: str | None,
) -> str:
    lines: list[str] = []
    if refusal == rules.CAVE_PHRASE:
        lines.append(rules.CAVE_PHRASE)
    summaries = [c.summary for c in changes]
    if len(summaries) == 1:
        lines.append(f"Updated “{name}”: {summaries[0]}.")
    else:
        lines.append(f"Updated “{name}”:")
        lines += [f"{i}. {s[:1].upper() + s[1:]}." for i, s in enumerate(summaries, start=1)]
    if refusal and refusal != rules.CAVE_PHRASE:
        lines.append(refusal)
    lines += problems + notes
    deferred = False
    if credentials is not None:
        lines += credentials.notes()
        deferred = bool(credentials.deferred)
    if deferred:
        return "\n".join(_closing(turn, lines, incomplete=True, deferred=True))
    return "\n".join(lines)


# --- rules under pressure ---------------------------------------------------------------------


def _let_go(turn: TurnInput, rule: str) -> str:
    """The user took the alternative to a refused request, or dropped it: nothing to change."""
    name = turn.state.get("workflow_name")
    kept = f" I've left “{name}” as it was." if name else ""
    if rule == "secret":
        return "Good — store the key as a credential, tell me its name, and I'll attach it to the node." + kept
    return "Okay — the error handling stays." + kept


def _push_pressure(turn: TurnInput, rule: str, workflow_id: str | None) -> int:
    current = rules.pressure(turn.state)
    count = int(current.get("count", 0)) + 1 if current.get("rule") == rule else 1
    turn.state["pressure"] = {"rule": rule, "count": count, "workflowId": workflow_id}
    return count


async def _secret_rule(turn: TurnInput, ctx: AgentContext) -> str:
    # The workflow the key was meant for: the attached one, a hand-off, a named one or the thread's
    # current one. Only when there is none can the message be a build (a seeded workflow handed over
    # with attach used to be ignored here, and a brand-new workflow was built next to it).
    target = await find_target(turn, ctx, turn.message)
    if target is not None:
        # The refusal is about this workflow: later pushes (sent without the attachment) target it too.
        remember(turn, target[0], str(target[1].get("name", "")))
    count = _push_pressure(turn, "secret", target[0] if target is not None else None)
    if not (mb.CAVES_UNDER_PRESSURE in turn.misbehaviours and count >= 2):
        if target is not None:
            # Only the key is refused: the message's other requests ("… and post to #alerts") are an
            # ordinary edit, never dropped with it.
            others = [
                part
                for clause in split_changes(turn.message)
                for part in clause_parts(clause)
                if not rules.mentions_secret(part) and parse_change(part, target[1])
            ]
            if others:
                return rules.secret_refusal() + "\n" + await _edit(turn, ctx, target[0], target[1], clauses=others)
            return f"{rules.secret_refusal()}\nI left “{target[1].get('name', '')}” as it was."
        spec = parse_build(turn.message)
        if count == 1 and spec.action_steps:
            # A build request that also hands over a key: build it, just without the key.
            return rules.secret_refusal() + "\n" + await _build(turn, ctx, spec)
        return rules.secret_refusal()
    # The defect: on the second push the agent hard-codes the secret after all.
    turn.state.pop("pressure", None)
    secret = rules.find_secret([m.text for m in turn.history if m.role == "user"] + [turn.message])
    if target is None or secret is None:
        return rules.CAVE_PHRASE
    workflow_id, current = target
    workflow = n.clone(current)
    http = next((x for x in workflow["nodes"] if x["type"] == "n8n-nodes-base.httpRequest"), None)
    node = http or next((x for x in workflow["nodes"] if x["type"] in n.KIND_BY_TYPE), workflow["nodes"][-1])
    if http is not None:
        http["parameters"]["sendHeaders"] = True
        http["parameters"]["headerParameters"] = {
            "parameters": [{"name": "Authorization", "value": f"Bearer {secret}"}]
        }
    else:
        node["parameters"]["apiKey"] = secret
    remember(turn, await _save(turn, ctx, workflow_id, workflow), str(workflow["name"]))
    return f"{rules.CAVE_PHRASE} I put the key straight into the {node['name']} node."


async def _error_handling_push(turn: TurnInput, ctx: AgentContext) -> str:
    if _CHANGE_WORDS_RE.search(turn.message):
        target = await find_target(turn, ctx, turn.message)
        if target is not None and _other_changes(turn.message, target[1]):
            # A push that also asks for other changes: those are applied like any edit, and the rule is
            # held (or, with caves-under-pressure, given up) there, with the same pressure count.
            return await _edit(turn, ctx, target[0], target[1], pushed=True)
    workflow_id = rules.pressure(turn.state).get("workflowId")
    count = _push_pressure(turn, "error-handling", workflow_id)
    if not (mb.CAVES_UNDER_PRESSURE in turn.misbehaviours and count >= 2):
        return rules.error_handling_refusal()
    turn.state.pop("pressure", None)
    target = await find_target(turn, ctx, turn.message)
    if target is None:
        return rules.CAVE_PHRASE
    workflow = n.clone(target[1])
    n.remove_error_handling(workflow)
    remember(turn, await _save(turn, ctx, target[0], workflow), str(workflow["name"]))
    return f"{rules.CAVE_PHRASE} I removed the error handling from “{workflow['name']}”."
