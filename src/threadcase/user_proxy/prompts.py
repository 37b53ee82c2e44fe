"""The user proxy's prompts: versioned constants, and the assembly of one decision's messages.

Bump :data:`PROMPT_VERSION` whenever a constant changes: results are comparable only within one
version. The system prompt is static (providers can cache it); everything that varies goes in the
user message, in fixed sections: the script, the conversation so far, the new event, the menu.
"""

from __future__ import annotations

import json
from typing import Any

from threadcase.case.notes import Script
from threadcase.records import Turn

__all__ = [
    "CONFIRMATION_INSTRUCTIONS",
    "PROMPT_VERSION",
    "REASK",
    "SECTION_CONVERSATION",
    "SECTION_EVENT",
    "SECTION_MENU",
    "SECTION_SCRIPT",
    "SYSTEM_PROMPT",
    "USER_TURN_INSTRUCTIONS",
    "confirmation_messages",
    "render_conversation",
    "user_turn_messages",
]

PROMPT_VERSION = "user-proxy/2026-12-02.1"

SYSTEM_PROMPT = """\
You play the USER of a chat assistant that builds automations (workflows, AI agents, data tables) \
for them. You are not the assistant: never describe what the assistant should do internally, never \
write code for it, never mention this simulation.

## Your script
You receive the user's script: what they intend to ask for, in order, with stage directions in \
[brackets]. Stage directions say how the user behaves; they are NEVER spoken. Never quote, paraphrase \
or mention the script or its directions. Be brief: one or two sentences, plain and natural.

## Stage directions override every default below
- Declining or withholding a value: answer that question with skipped=true and no selected options; \
never invent the value, never say "you decide" or "use a default".
- Holding firm: if the assistant asks again for something you declined, decline again.
- Pushing back or changing your mind: do it when the direction says so, in your own words.
- An ordered list of changes "one at a time": send exactly one change per message, in order, and send \
the next only after the assistant applied the previous one.
- Credentials: engage a credential card only when a direction governs that moment; a direction may \
name which existing credential to use, or say a credential should not authenticate.

## Otherwise, always answer
Value priority: stated in the script → implied by it (Slack with no channel → #general) → invented \
but plausible (user_alice, /incoming, a 32-hex Notion id). Use skipped=true only for an incoherent \
question. Named services are concrete requirements: if the user said "via Gmail", keep Gmail; accept a \
generic substitute only when the assistant explains why.

## Cards and plans
- Setup cards are not questions: fill parameters with apply_setup_wizard (nodeParametersJson), never \
answer_questions. A wizard card has no automatic option. To withhold a value, dismiss the whole card \
with approve_or_reject(approved=false).
- Credentials are deferred by default ("I'll set them up later"). Only when a direction engages one: a \
standalone card → choose_credential_setup_option (manual/auto/skip); a wizard slot → \
apply_setup_wizard nodeCredentialsJson {"<node>": {"<credentialType>": "<existing id or create>"}}, \
and list the types that should work in workingCredentialTypes.
- Push back on a plan or summary that misses a stated requirement (a concrete value, a stated \
behaviour such as sorting, filtering, branching, error handling, de-duplication or retries, a named \
service): reject it and quote the requirement. Approve a plan that covers what the user asked for.

## Between runs
The script is a reference, not a checklist. Deliver the script's next request when it is still open, \
with its values verbatim. A request marked delivered was already made: never send it again, and never \
repeat your own previous message. Declare done when nothing the user wants is left open. If the \
assistant is stuck waiting on credentials, tell it in your own words that you will add them later and \
it should go on without them.
"""

REASK = """Your last answer was not sent to the assistant: {reason}. Choose again, as the user."""
"""Appended (after the rejected answer) when a decision is re-asked once; then the script decides."""

CONFIRMATION_INSTRUCTIONS = """\
A widget is on screen. Choose exactly one action:
- answer_questions: answers[] with questionId, selectedOptions (from the offered options), customText, \
skipped.
- apply_setup_wizard: nodeParametersJson (JSON object node -> {parameter: value}), nodeCredentialsJson \
(JSON object node -> {credentialType: existing id or "create"}, or null), workingCredentialTypes.
- approve_or_reject: approved, userInput (feedback when rejecting).
- respond_to_domain_access: allow_once | allow_all | deny.
- pick_resource_decision: decision (one of the offered options).
- choose_credential_setup_option: option manual | auto | skip, credentialType, existingCredentialId, \
credentialShouldWork.
"""

USER_TURN_INSTRUCTIONS = """\
The assistant's run finished and nothing is on screen. Choose exactly one action:
- send_follow_up_message: message (what the user says next); renameWorkflowTo (rename the last saved \
workflow outside the conversation first; the message must not mention it) or null; runWorkflowId or \
null.
- declare_done: nothing the user wants is left open.
"""

RUN_WORKFLOW_NOTE = """\
You may run one saved workflow for real before your message (runWorkflowId); it runs normally, without \
mocks, so only credential-free manual or schedule workflows make sense. Saved workflows:
"""

SECTION_SCRIPT = "## Script (what the user intends — never mention or quote it)"
SECTION_CONVERSATION = "## Actual conversation so far"
SECTION_EVENT = "## New event requiring a response"
SECTION_MENU = "## Your options"

_TEXT_CAP = 4000


def _cap(text: str, limit: int = _TEXT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def render_conversation(turns: list[Turn]) -> str:
    """The conversation so far, compactly: user and assistant text, tool calls, widgets and answers."""
    lines: list[str] = []
    for turn in turns:
        if turn.role == "user":
            # What the user did outside the chat (ran a workflow, renamed one) and how it went: theirs to
            # know when deciding, never the assistant's.
            lines.extend(f"User action (not told to the assistant): {_cap(a, 500)}" for a in turn.user_actions)
            lines.append(f"User: {_cap(turn.text)}")
            continue
        if turn.text:
            lines.append(f"Assistant: {_cap(turn.text)}")
        for call in turn.tool_calls:
            status = f"error: {_cap(call.error, 300)}" if call.error else "ok"
            lines.append(f"Tool: {call.tool_name} ({status})")
        for widget in turn.widgets:
            asked = widget.request.get("message") or widget.input_type
            lines.append(f"Asked user ({widget.input_type}): {_cap(str(asked), 500)} -> {widget.outcome}")
    return "\n".join(lines) if lines else "(nothing yet)"


def _user_message(script: Script, turns: list[Turn], event: dict[str, Any], menu: str) -> str:
    return "\n\n".join(
        [
            f"{SECTION_SCRIPT}\n{json.dumps(script.dump(), indent=1, ensure_ascii=False)}",
            f"{SECTION_CONVERSATION}\n{render_conversation(turns)}",
            f"{SECTION_EVENT}\n{_cap(json.dumps(event, ensure_ascii=False, default=str), 12000)}",
            f"{SECTION_MENU}\n{menu}",
        ]
    )


def confirmation_messages(script: Script, turns: list[Turn], payload: dict[str, Any]) -> list[dict[str, str]]:
    """The messages of a decision while a widget is on screen."""
    event = {"type": "confirmation-request", "payload": payload}
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": _user_message(script, turns, event, CONFIRMATION_INSTRUCTIONS)},
    ]


def user_turn_messages(
    script: Script,
    turns: list[Turn],
    *,
    saved_workflows: list[tuple[str, str]] | None = None,
    follow_ups_left: int | None = None,
) -> list[dict[str, str]]:
    """The messages of a decision between runs; ``saved_workflows`` only when user execution is allowed."""
    menu = USER_TURN_INSTRUCTIONS
    if follow_ups_left is not None:
        menu += f"You can send at most {follow_ups_left} more message(s) in this conversation.\n"
    if saved_workflows:
        menu += "\n" + RUN_WORKFLOW_NOTE + "\n".join(f"- {wid}: {name}" for wid, name in saved_workflows)
    event = {"type": "run-finish", "payload": {"note": "the assistant finished its run"}}
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": _user_message(script, turns, event, menu)},
    ]
