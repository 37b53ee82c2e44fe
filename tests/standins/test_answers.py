"""Which rule answers, what its templates become, and the built-in answers for n8n's helper agents."""

from __future__ import annotations

import json
from typing import Any

from tests.standins import n8n_requests as n8n
from threadcase.standins.answers import answer
from threadcase.standins.asks import read_ask
from threadcase.standins.script import ModelScript


def script(*rules: dict[str, Any]) -> ModelScript:
    return ModelScript.model_validate({"rules": list(rules)})


QUESTION = {
    "id": "ask",
    "when": {"userText": {"contains": ["standup"]}, "after": "user", "notSeen": ["ask-user"]},
    "reply": {"toolCalls": [{"name": "ask-user", "arguments": {"questions": [{"id": "room", "question": "Where?"}]}}]},
}
BUILD = {
    "id": "build",
    "when": {"after": "ask-user"},
    "reply": {
        "toolCalls": [
            {
                "name": "build-workflow",
                "arguments": {
                    "filePath": "src/workflows/standup.json",
                    "sourceCode": {
                        "$json": {"name": "Standup", "nodes": [{"parameters": {"channel": "{{answer.room}}"}}]}
                    },
                },
            }
        ]
    },
}
DONE = {"id": "done", "when": {"after": "build-workflow"}, "reply": {"text": "Saved {{result.workflowName}}."}}


def test_the_first_matching_rule_answers_and_the_step_decides_which() -> None:
    rules = script(QUESTION, BUILD, DONE)
    first = answer(rules, read_ask(n8n.orchestrator(n8n.user("Set up a standup reminder"))))
    assert (first.source, [name for name, _ in first.tool_calls]) == ("rule:ask", ["ask-user"])

    asked = [n8n.user("Set up a standup reminder"), n8n.call("c1", "ask-user", {})]
    answered = {"answered": True, "answers": [{"questionId": "room", "selectedOptions": [], "customText": "#daily"}]}
    second = answer(rules, read_ask(n8n.orchestrator(*asked, n8n.bare_result("c1", answered))))
    assert second.source == "rule:build"
    ((name, arguments),) = second.tool_calls
    # The answer given through the widget lands in the workflow; sourceCode is JSON text.
    assert name == "build-workflow"
    assert json.loads(arguments["sourceCode"]) == {"name": "Standup", "nodes": [{"parameters": {"channel": "#daily"}}]}

    built = n8n.build_result("c2", {"success": True, "workflowId": "W1", "workflowName": "Standup"})
    third = answer(
        rules,
        read_ask(
            n8n.orchestrator(*asked, n8n.bare_result("c1", answered), n8n.call("c2", "build-workflow", {}), built)
        ),
    )
    assert (third.source, third.text) == ("rule:done", "Saved Standup.")


def test_a_question_answered_once_is_not_asked_again_in_a_later_turn() -> None:
    history = [
        n8n.user("Set up a standup reminder"),
        n8n.call("c1", "ask-user", {}),
        n8n.bare_result("c1", {"answered": True, "answers": []}),
        {"role": "assistant", "content": "Done."},
        n8n.user("Also make the standup reminder louder"),
    ]
    reply = answer(script(QUESTION), read_ask(n8n.orchestrator(*history)))
    assert reply.source == "unmatched"
    assert "no rule matched" in (reply.text or "")
    assert "Also make the standup reminder louder" in (reply.text or "")


def test_regex_groups_and_tool_results_fill_templates() -> None:
    rule = {
        "id": "find",
        "when": {"userText": {"regex": r"rename (?P<old>\w+) to (?P<new>\w+)"}, "after": "workflows"},
        "reply": {
            "toolCalls": [
                {
                    "name": "build-workflow",
                    "arguments": {"workflowId": "{{results.workflows.workflows.0.id}}", "name": "{{match.new}}"},
                }
            ]
        },
    }
    listing = {"workflows": [{"id": "seeded-7f3", "name": "Alpha [seed 1]"}], "total": 1}
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("please rename Alpha to Beta"),
            n8n.call("c1", "workflows", {"action": "list"}),
            n8n.bare_result("c1", listing),
        )
    )
    reply = answer(script(rule), ask)
    assert reply.tool_calls == [("build-workflow", {"workflowId": "seeded-7f3", "name": "Beta"})]


def test_a_template_with_no_value_says_so_in_the_reply_and_the_log() -> None:
    rule = {"id": "done", "when": {"after": "build-workflow"}, "reply": {"text": "Saved {{result.workflowId}}."}}
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("x"), n8n.call("c1", "build-workflow", {}), n8n.build_result("c1", {"success": False})
        )
    )
    reply = answer(script(rule), ask)
    assert reply.problem is not None
    assert reply.problem.startswith("rule:done: {{result.workflowId}}: no 'workflowId'")
    assert reply.text == f"[threadcase scripted model] {reply.problem}"


def test_a_fallback_stands_in_for_a_skipped_answer_but_never_for_a_given_one() -> None:
    rule = {"id": "use", "when": {"after": "ask-user"}, "reply": {"text": "Channel: {{answer.room|#general}}."}}
    asked = [n8n.user("standup"), n8n.call("c1", "ask-user", {})]
    skipped = {"answered": True, "answers": []}
    given = {"answered": True, "answers": [{"questionId": "room", "selectedOptions": ["#eng"]}]}
    assert answer(script(rule), read_ask(n8n.orchestrator(*asked, n8n.bare_result("c1", skipped)))).text == (
        "Channel: #general."
    )
    assert (
        answer(script(rule), read_ask(n8n.orchestrator(*asked, n8n.bare_result("c1", given)))).text == "Channel: #eng."
    )


def test_agent_conditions_keep_orchestrator_rules_away_from_helpers() -> None:
    greedy = {"id": "any", "reply": {"text": "orchestrator text"}}
    title = answer(
        script(greedy),
        read_ask(n8n.helper(n8n.TITLE_SYSTEM, "Generate a title ...\n\n<message>\nWeekly sales digest\n</message>")),
    )
    assert (title.source, title.text) == ("builtin:title", "Weekly sales digest")
    override = {"id": "title", "when": {"agent": "title"}, "reply": {"text": "Custom"}}
    assert answer(script(override), read_ask(n8n.helper(n8n.TITLE_SYSTEM, "<message>x</message>"))).text == "Custom"


def test_a_reply_can_be_a_provider_error() -> None:
    rule = {"id": "down", "reply": {"error": {"status": 503, "message": "overloaded"}}}
    reply = answer(script(rule), read_ask(n8n.orchestrator(n8n.user("hi"))))
    assert reply.error is not None
    assert (reply.error.status, reply.error.message) == (503, "overloaded")


# --- built-in helpers ---------------------------------------------------------------------------

FIXTURE_PROMPT = """Generate realistic mock output (pin-data items) for the following simulated n8n nodes.

Workflow: Standup ping

Node name: Post to Slack
Node type: n8n-nodes-base.slack
- Output JSON Schema:
```json
{"type": "object",
 "properties": {"channel": {"type": "string"}, "ok": {"type": "boolean"}, "message": {"type": "object"}}}
```

Node name: Wait for approval
Node type: n8n-nodes-base.wait
"""


def test_fixtures_follow_the_output_schema_of_each_listed_node() -> None:
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.FIXTURES_SYSTEM, FIXTURE_PROMPT)))
    assert json.loads(reply.text or "") == {
        "Post to Slack": [{"json": {"channel": "sample", "ok": True, "message": {"simulated": True}}}],
        "Wait for approval": [{"json": {"ok": True}}],
    }


PIN_PROMPT = """Generate mock output data for service nodes in this workflow.

## Workflow Graph

```mermaid
flowchart
```

## Nodes Requiring Mock Data

### Read orders (n8n-nodes-base.dataTable v1)
- Resource: row | Operation: get

### Ask the model (@n8n/n8n-nodes-langchain.agent v2.2)

## Expected Output Format

```json
{"Read orders": [{ "json": { ... } }]}
```
"""


def test_pin_data_covers_exactly_the_nodes_requiring_mock_data() -> None:
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.PIN_SYSTEM, PIN_PROMPT)))
    assert json.loads(reply.text or "") == {
        "Read orders": [{"json": {"ok": True}}],
        "Ask the model": [{"json": {"ok": True}}],
    }


HINTS_PROMPT = """Generate a consistent data context and per-node mock hints for this workflow.

## Test Scenario

Two new orders arrive.

## Workflow Nodes

- Incoming order (n8n-nodes-base.webhook) {"path":"orders"}
- Notify (n8n-nodes-base.slack) {"resource":"message"}

## Connections

  Incoming order -[main]-> Notify
"""


def test_hints_give_a_webhook_envelope_and_one_hint_per_node() -> None:
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.HINTS_SYSTEM, HINTS_PROMPT)))
    hints = json.loads(reply.text or "")
    assert hints["triggerContent"] == {"headers": {}, "query": {}, "body": {"scenario": "Two new orders arrive."}}
    assert set(hints["nodeHints"]) == {"Incoming order", "Notify"}
    assert "Two new orders arrive." in hints["globalContext"]


def test_the_http_mock_responder_asks_for_quirks_then_submits() -> None:
    tools = ("get_endpoint_quirks", "submit_response")
    first = read_ask(n8n.helper(n8n.MOCK_SYSTEM, "POST https://slack.com/api/chat.postMessage", tool_names=tools))
    assert answer(script(DONE), first).tool_calls == [("get_endpoint_quirks", {})]
    body = n8n.helper(n8n.MOCK_SYSTEM, "POST ...", tool_names=tools)
    body["messages"] += [
        n8n.call("q", "get_endpoint_quirks", {}),
        {"role": "tool", "tool_call_id": "q", "content": "No quirks."},
    ]
    assert answer(script(DONE), read_ask(body)).tool_calls == [
        ("submit_response", {"type": "json", "statusCode": 200, "body": {"ok": True}})
    ]
    body["messages"] += [
        n8n.call("s", "submit_response", {}),
        {"role": "tool", "tool_call_id": "s", "content": "Invalid: shape"},
    ]
    assert answer(script(DONE), read_ask(body)).tool_calls == [
        ("submit_response", {"type": "json", "statusCode": 200, "body": {}})
    ]


def test_an_ai_node_inside_a_mocked_execution_gets_a_short_final_answer() -> None:
    system = "You simulate ONE response from the LLM that powers an AI agent inside an n8n workflow under evaluation."
    body = n8n.helper(system, "## Tools the agent may call ...", tool_names=("submit_agent_step",))
    assert answer(script(DONE), read_ask(body)).tool_calls == [
        ("submit_agent_step", {"kind": "final", "content": "Done."})
    ]
    body["messages"] += [
        n8n.call("s", "submit_agent_step", {}),
        {"role": "tool", "tool_call_id": "s", "content": "Accepted."},
    ]
    assert answer(script(DONE), read_ask(body)).text == "Step submitted."


OBSERVER_PROMPT = """Current timestamp: 2026-12-02T10:00:00.000Z

Unobserved transcript tokens: 1200

Current observation log tail:
(empty)

New transcript delta since the last observation:
[2026-12-02T09:41:05.000Z] user:
The budget code is ORANGE-7 and reports go to finance@example.com.
[2026-12-02T09:41:09.000Z] assistant:
Noted.
[2026-12-02T09:45:00.000Z] user:
Ship it on Thursdays."""


def test_the_observer_keeps_what_the_user_said() -> None:
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.OBSERVER_SYSTEM, OBSERVER_PROMPT)))
    assert (reply.text or "").splitlines() == [
        "* CRITICAL (09:41) User said: The budget code is ORANGE-7 and reports go to finance@example.com.",
        "* CRITICAL (09:45) User said: Ship it on Thursdays.",
    ]
    nothing = (
        OBSERVER_PROMPT.split("New transcript delta")[0] + "New transcript delta since the last observation:\n(empty)"
    )
    assert answer(script(DONE), read_ask(n8n.helper(n8n.OBSERVER_SYSTEM, nothing))).text == "NO_OBSERVATIONS"


def test_the_reflector_keeps_everything() -> None:
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.REFLECTOR_SYSTEM, "observations ...")))
    assert json.loads(reply.text or "") == {"drop": [], "merge": []}


CLASSIFY_PROMPT = """Classify the following n8n workflow nodes.

Node name: Slack
Node type: n8n-nodes-base.slack
Parameters: {"select":"channel","channelId":{"__rl":true,"value":"#revenue","mode":"name"}}

Node name: Call billing API
Node type: n8n-nodes-base.httpRequest
Parameters: {"method":"POST","url":"https://billing.example.com/charge"}

Output a single JSON object with exactly these keys: "Slack", "Call billing API"."""


def test_the_destructiveness_classifier_simulates_every_node_it_is_asked_about() -> None:
    # n8n's own rule when uncertain: "simulate", low confidence; nothing runs for real.
    reply = answer(script(DONE), read_ask(n8n.helper(n8n.CLASSIFIER_SYSTEM, CLASSIFY_PROMPT)))
    verdicts = json.loads(reply.text or "")
    assert set(verdicts) == {"Slack", "Call billing API"}
    assert {v["verdict"] for v in verdicts.values()} == {"simulate"}
    assert reply.source == "builtin:classifier"
