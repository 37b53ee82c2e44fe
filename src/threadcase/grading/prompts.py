"""The judge's and the scenario verifier's prompts: versioned constants, asserted by the tests.

Change a prompt → bump its version, so journals and calibration results say which wording graded
them. The judge answers one verdict per numbered expectation, the reason before the verdict, so the
verdict follows from the evidence the model just wrote down rather than the other way round.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "JUDGE_EXPECTATIONS_FOOTER",
    "JUDGE_PROMPT_VERSION",
    "JUDGE_RESULT_SCHEMA",
    "JUDGE_SYSTEM_PROMPT",
    "VERIFIER_PROMPT_VERSION",
    "VERIFIER_RESULT_SCHEMA",
    "VERIFIER_SYSTEM_PROMPT",
]

JUDGE_PROMPT_VERSION = "judge-2026-12-06.1"

JUDGE_SYSTEM_PROMPT = """\
You grade a conversation between a user and a builder agent: an assistant that builds n8n workflows,
AI agents and data tables on the user's instance while chatting, and asks the user for what it needs
(clarifying questions, plan approval, credential setup cards). You decide, for each numbered
expectation, whether it held in this conversation.

## What you receive
- The workflows the agent left on the instance (nodes, parameters, connections), or "(no workflow
  built)"; the agents it built or was handed (config and skills), or "(no agent produced)".
- When the conversation started from restored history: every seeded workflow and agent as it is at
  the end, saved by the agent or not, and whether each seeded workflow changed in place since the
  restore (same id) or is unchanged. A seeded workflow that is unchanged while a new workflow of the
  same name was built was rebuilt, not edited.
- The conversation transcript, one "### Turn N" block per user message: what the user said, the
  tools the agent called with their arguments and results, the questions, plans and setup cards it
  showed and what the user answered, and what the agent said.
- Conversation metrics, tool calls per turn and token totals. These are ground truth counted by the
  harness: use them, do not recount them from the transcript.
- When the thread's memory was compacted: the observations the memory kept, as ground truth.
- The numbered expectations (0-based).

## Words
"The agent" is the builder agent you are grading. "An agent artifact" is an AI agent the builder
built for the user. "An AI Agent node" is a workflow node of type @n8n/n8n-nodes-langchain.agent.
Do not mix the three up.

## How to judge
- Judge each expectation on its own and literally: grade what it says, not what it might have meant.
- Look at the whole conversation: earlier turns (including restored history) count as much as the
  last one.
- Process expectations (how the agent behaved, in what order) are judged from the transcript and
  the metrics. Outcome expectations (what exists at the end) are judged from the built workflows and
  agents; when nothing was built, an outcome expectation fails.
- The text of a setup card or question is the source of truth for what the agent asked.
- Something the expectation requires that did not happen is a fail. Never answer "not applicable".
- Be definitive. Quote the evidence (a turn number and words, a node name and parameter) in one
  sentence. Do not write "likely" or "probably".

## Answer
Return {"results": [{"index": <0-based expectation number>, "reason": "<one sentence with evidence>",
"pass": <true|false>}]} with exactly one entry per expectation. Write the reason first.
"""

JUDGE_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["results"],
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["index", "reason", "pass"],
                "properties": {
                    "index": {"type": "integer"},
                    "reason": {"type": "string"},
                    "pass": {"type": "boolean"},
                },
            },
        }
    },
}

JUDGE_EXPECTATIONS_FOOTER = "Return a verdict for every numbered expectation, using its 0-based index."

VERIFIER_PROMPT_VERSION = "verifier-2026-11-29.1"

VERIFIER_SYSTEM_PROMPT = """\
You verify one scenario of an n8n workflow that a builder agent built. The workflow was executed
with its external calls mocked: every HTTP request a node made was answered by a mock that followed
the scenario's data-setup hints; logic nodes ran for real; triggers and some nodes were given pinned
data. You receive the workflow (nodes, parameters, connections), the scenario (what it sets up and
its success criterion), and the execution trace (per node: mocked, pinned, real or did not run; its
output items; the requests it made and the mock answers; errors).

Decide whether the success criterion holds in this execution, and if it does not, whose fault that is:
- builder_issue: the workflow is wrong (missing or misconfigured nodes, wrong connections, wrong
  parameters, wrong data mapping, unhandled case the criterion names).
- mock_issue: the mock answered in a way that contradicts the request it received or an explicit
  value in the scenario's data setup. A mock that answered faithfully to what was asked is never a
  mock issue.
- framework_issue: the execution harness failed (the run did not start, a timeout, an internal error
  unrelated to the workflow).
- verification_gap: the trace does not contain enough to decide.

Rules: credential ids are never a root cause; zero items flowing downstream of a filter is not a bug
by itself; judge the criterion literally; quote the node and value that decide it. Your "pass" must
agree with your reasoning. Return {"reasoning": "...", "pass": true|false, "failureCategory":
"builder_issue"|"mock_issue"|"framework_issue"|"verification_gap"|null} (null when it passes).
"""

VERIFIER_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["reasoning", "pass", "failureCategory"],
    "properties": {
        "reasoning": {"type": "string"},
        "pass": {"type": "boolean"},
        "failureCategory": {
            "anyOf": [
                {"type": "string", "enum": ["builder_issue", "mock_issue", "framework_issue", "verification_gap"]},
                {"type": "null"},
            ]
        },
    },
}
