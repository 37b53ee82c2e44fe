"""Answering questions about what was built and what the user said.

Facts about the workflow come from the workflow itself (fetched fresh). "What did I say ..."
questions are answered from the visible history first, then from the observations that replaced the
compacted messages, then — said plainly — from what the workflow now holds; if none of those has the
fact, the agent says it does not know. It never answers from anything it cannot see, which is what
makes a compaction case honest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent import nodes as n
from threadcase.demo_instance.agent.edits import filter_spec_of
from threadcase.demo_instance.agent.parse import CHANNEL_RE, EMAIL_RE, URL_RE, parse_filter, parse_name, parse_trigger
from threadcase.demo_instance.agent.protocol import TurnInput

__all__ = ["answer_question", "blocking_problems", "is_question", "question_topic"]

# "Can you add ...?" and "Could we ...?" are requests; "Can I turn it on?" and "Will it ...?" are questions.
_QUESTION_RE = re.compile(
    r"^\s*(?:what|what's|whats|which|where|when|who|how|why|does|doesn't|do|did|is|isn't|are|was|were|"
    r"can\s+you\s+tell|tell\s+me|remind\s+me|can\s+i|could\s+i|should\s+(?:i|we|it)|will\s+(?:it|this|that)|"
    r"would\s+(?:it|this|that)|has\s+it|have\s+(?:i|you)|am\s+i|shall\s+i|may\s+i)\b",
    re.IGNORECASE,
)
_READY_RE = re.compile(
    r"\b(?:ready|turn\s+it\s+on|switch\s+it\s+on|activate|enable\s+it|go\s+live|live|good\s+to\s+go|safe\s+to|"
    r"start\s+it|run\s+it\s+now|work(?:s|ing)?)\b",
    re.IGNORECASE,
)
# Without a question mark only these openers make a question ("When a webhook is called, ..." is a request).
_STRONG_QUESTION_RE = re.compile(r"^\s*(?:what|what's|whats|which|who|remind\s+me|tell\s+me)\b", re.IGNORECASE)
_RECALL_RE = re.compile(
    r"\b(?:did\s+i\s+(?:say|tell|mention|ask|want|give|set|pick|choose)|i\s+(?:said|told|asked|wanted|mentioned)|"
    r"remind\s+me)\b",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """A question to answer, not a request to act ("can you add ..." is a request)."""
    if text.rstrip().endswith("?"):
        return bool(_QUESTION_RE.match(text))
    return bool(_STRONG_QUESTION_RE.match(text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?\n])\s+", text) if s.strip()]


Finder = Callable[[str], bool]


def _narrowest(text: str, finder: Finder) -> str:
    """The clause of ``text`` that holds the fact, so a recall answers what was asked, not the whole note.

    "alerts go to #ops, and the on-call address is a@b.c" answers a channel question with its first clause.
    Dots inside addresses and URLs are not clause ends (a clause end is followed by a space).
    """
    for clause in re.split(r"[.;:,]\s+(?:and\s+)?|\s+and\s+", text):
        clause = clause.strip().rstrip(".")
        if clause and finder(clause):
            return clause
    return text.strip()


def question_topic(question: str) -> str:
    """What a question is about: ready, threshold, channel, recipient, schedule, url, name, errors or other."""
    return _topic(question)[0]


def _topic(question: str) -> tuple[str, Finder]:
    low = question.lower()
    if _READY_RE.search(low) and not _RECALL_RE.search(low):
        return "ready", lambda s: False
    if re.search(
        r"\b(?:weekends?|weekdays?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|hourly|daily|how\s+often|what\s+time|"
        r"schedule)\b",
        low,
    ):
        return "schedule", lambda s: parse_trigger(s) is not None
    if re.search(r"\b(?:threshold|filter|condition|limit|amount|minimum|maximum|only)\b", low):
        return "threshold", lambda s: parse_filter(s) is not None or bool(re.search(r"\bthreshold\b.*\d", s, re.I))
    if re.search(r"\b(?:channel|slack|post)\b", low):
        return "channel", lambda s: bool(CHANNEL_RE.search(s))
    if re.search(r"\b(?:email|e-mail|recipient|send\s+to|who)\b", low):
        return "recipient", lambda s: bool(EMAIL_RE.search(s))
    if re.search(r"\b(?:when|schedule|time|often|run|runs|trigger)\b", low):
        return "schedule", lambda s: parse_trigger(s) is not None
    if re.search(r"\b(?:url|endpoint|api)\b", low):
        return "url", lambda s: bool(URL_RE.search(s))
    if re.search(r"\b(?:name|called)\b", low):
        return "name", lambda s: parse_name(s) is not None
    if re.search(r"\berror|fail", low):
        return "errors", lambda s: bool(re.search(r"error|fail", s, re.I))
    words = [
        w for w in re.findall(r"[a-z]{4,}", low) if w not in {"what", "which", "said", "tell", "that", "does", "were"}
    ]
    keyword = words[-1] if words else ""
    return "other", lambda s: bool(keyword) and keyword in s.lower()


def _workflow_fact(topic: str, workflow: dict[str, Any]) -> str | None:
    nodes = [x for x in workflow.get("nodes", []) if x["name"] not in {n.ALERT_NODE, n.ERROR_CHECK_NODE}]
    params = {x["type"]: x.get("parameters", {}) for x in nodes}
    if topic == "threshold":
        spec = filter_spec_of(workflow)
        return f"it only continues when {spec.describe()}" if spec else None
    if topic == "channel":
        channels = [n.slack_channel(x["parameters"]) for x in nodes if x["type"] == "n8n-nodes-base.slack"]
        return f"it posts to {' and '.join(str(c) for c in channels)}" if channels else None
    if topic == "recipient":
        to = params.get("n8n-nodes-base.gmail", {}).get("sendTo")
        return f"it emails {to}" if to else None
    if topic == "schedule":
        trigger = n.trigger_node(workflow)
        return f"it runs {n.describe_trigger(trigger)}" if trigger else None
    if topic == "url":
        url = params.get("n8n-nodes-base.httpRequest", {}).get("url")
        return f"it calls {url}" if url else None
    if topic == "name":
        return f"it is called “{workflow.get('name')}”"
    if topic == "errors":
        if not n.has_error_handling(workflow):
            return "it has no error handling"
        alert = next((x for x in workflow["nodes"] if x["name"] == n.ALERT_NODE), None)
        channel = f" and alerts {n.slack_channel(alert['parameters'])}" if alert else ""
        return f"it continues on fail{channel}"
    return None


def blocking_problems(workflow: dict[str, Any], *, credentials: bool = True) -> list[str]:
    """What stops the workflow from running: placeholders, nodes without their credential, unknown nodes.

    ``credentials=False`` leaves the missing credentials out (what ``claims-done-without-credentials`` does).
    """
    problems: list[str] = []
    for node in workflow.get("nodes", []):
        node_type = str(node.get("type", ""))
        missing = n.placeholder_parameters(node)
        if missing:
            problems.append(f"the {node['name']} node still has placeholders ({', '.join(missing)})")
        if credentials and node_type in n.CREDENTIAL_TYPES and not node.get("credentials"):
            problems.append(
                f"the {node['name']} node has no {n.SERVICE_NAMES[n.CREDENTIAL_TYPES[node_type]]} credential"
            )
        known = node_type in n.KIND_BY_TYPE or node_type in n.TRIGGER_KIND_BY_TYPE or node_type == "n8n-nodes-base.if"
        if not known:
            problems.append(f"the {node['name']} node ({node_type}) is outside what I can check or fix")
    return problems


def _readiness(turn: TurnInput, workflow: dict[str, Any]) -> str:
    name = workflow.get("name")
    if mb.CLAIMS_DONE_WITHOUT_CREDENTIALS in turn.misbehaviours:
        # The defect: a missing credential is not mentioned and the workflow is declared runnable.
        problems = blocking_problems(workflow, credentials=False)
        if not problems:
            return "All set — it's ready to run."
    else:
        problems = blocking_problems(workflow)
    if problems:
        return f"Not yet — before “{name}” can run: " + "; ".join(problems) + "."
    return f"Yes — I don't see anything blocking “{name}” from running."


def _summary(workflow: dict[str, Any]) -> str:
    chain = n.main_chain(workflow)
    by_name = {x["name"]: x for x in workflow.get("nodes", [])}
    steps = [n.describe_node(by_name[name]) for name in chain if name in by_name]
    if any(x["name"] == n.ALERT_NODE for x in workflow.get("nodes", [])):
        steps.append(n.describe_node(by_name[n.ALERT_NODE]))
    return f"“{workflow.get('name')}” will " + ", then ".join(steps) + "."


def answer_question(turn: TurnInput, workflow: dict[str, Any] | None) -> str:
    """The reply to a question about the thread's workflow or about what the user said."""
    question = turn.message
    topic, finder = _topic(question)
    if _RECALL_RE.search(question):
        for message in reversed(turn.history):
            if message.role != "user":
                continue
            said = next((s for s in _sentences(message.text) if finder(s)), None)
            if said:
                return f"You said: “{_narrowest(said, finder)}”"
        note = next((o.text for o in turn.observations if finder(o.text)), None)
        if note:
            return f"From my notes on the earlier conversation: {_narrowest(note, finder)}."
        if workflow is not None:
            fact = _workflow_fact(topic, workflow)
            if fact:
                return f"I can't see your exact words anymore; going by the workflow as it stands, {fact}."
        return "I don't know — that detail is no longer in what I can see of our conversation."
    if workflow is None:
        note = next((o.text for o in turn.observations if finder(o.text)), None)
        if note:
            return f"From my notes: {_narrowest(note, finder)}."
        return "I haven't built a workflow in this thread yet, so there's nothing to describe."
    if topic == "ready":
        return _readiness(turn, workflow)
    fact = _workflow_fact(topic, workflow)
    if fact:
        return f"In “{workflow.get('name')}”, {fact}."
    return _summary(workflow)
