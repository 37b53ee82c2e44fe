"""Change requests against an existing workflow: parse one listed change, apply it to the JSON.

A clause ("change the channel to #sales", "2. run it every weekday at 8") becomes one or more
:class:`Change` objects; applying them to a copy of the workflow and saving once keeps every edit an
in-place ``build-workflow {workflowId, ...}``. Rename, move and delete are their own tools and are
applied after the content edit, in the order the user listed them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from threadcase.demo_instance.agent import nodes as n
from threadcase.demo_instance.agent.parse import (
    CHANNEL_RE,
    EMAIL_RE,
    URL_RE,
    ActionSpec,
    ErrorHandlingSpec,
    FilterSpec,
    TriggerSpec,
    invalid_schedule,
    parse_action_phrases,
    parse_error_handling,
    parse_filter,
    parse_trigger,
    webhook_path,
)
from threadcase.demo_instance.slack import write_parameters

__all__ = [
    "Change",
    "apply_change",
    "article",
    "clause_parts",
    "filter_spec_of",
    "impossible_schedule_reply",
    "named_workflow",
    "parse_change",
    "strip_workflow_reference",
    "unparsed_subclauses",
]

ChangeKind = Literal[
    "rename",
    "move",
    "delete",
    "remove_error_handling",
    "remove_step",
    "param",
    "trigger",
    "filter",
    "threshold",
    "error_handling",
    "add",
    "problem",
]
"""``problem``: a requested change that cannot be made; its summary is said back, nothing is applied."""


@dataclass
class Change:
    """One change the user asked for; ``summary`` is how the reply lists it."""

    kind: ChangeKind
    summary: str
    value: Any = None
    node: str | None = None
    action: ActionSpec | None = None
    params: dict[str, Any] = field(default_factory=dict)
    dropped: bool = False
    """Set only by the ``drops-change`` misbehaviour: listed in the reply, never applied."""


_STEP_WORDS: list[tuple[str, str]] = [
    (r"slack|message", "n8n-nodes-base.slack"),
    (r"gmail|e-?mail", "n8n-nodes-base.gmail"),
    (r"notion", "n8n-nodes-base.notion"),
    (r"github|issue", "n8n-nodes-base.github"),
    (r"http(?:\s+request)?|api(?:\s+call)?|request", "n8n-nodes-base.httpRequest"),
    (r"(?:google\s+)?sheets?|spreadsheet", "n8n-nodes-base.googleSheets"),
    (r"data\s*table", "n8n-nodes-base.dataTable"),
    (r"set|edit\s+fields|fields", "n8n-nodes-base.set"),
    (r"filter|if|condition|check", "n8n-nodes-base.if"),
]
# The name may not contain "the" itself, so "the report query in the Reports workflow" names "Reports".
_NAMED_WORKFLOW_RE = re.compile(
    r"\b(?:in\s+|on\s+|of\s+|to\s+)?the\s+[\"“']?((?:(?!the\b)[A-Za-z0-9][\w'&-]*\s+){0,5}?(?!the\b)"
    r"[A-Za-z0-9][\w'&-]*)[\"”']?\s+workflow\b",
    re.IGNORECASE,
)
_GENERIC_NAMES = {"this", "that", "same", "whole", "new", "existing", "current", "my", "your", "other", "last"}


def named_workflow(text: str) -> str | None:
    """``the Daily digest workflow`` -> ``Daily digest`` (None for "the workflow" / "this workflow")."""
    for match in _NAMED_WORKFLOW_RE.finditer(text):
        name = match.group(1).strip()
        if name.lower() not in _GENERIC_NAMES:
            return name
    return None


def strip_workflow_reference(text: str) -> str:
    """Remove "the X workflow" so its name ("Daily digest") is not read as a schedule."""
    return _NAMED_WORKFLOW_RE.sub(" it ", text)


def _trigger_type(workflow: dict[str, Any]) -> str | None:
    node = n.trigger_node(workflow)
    return str(node.get("type")) if node is not None else None


def _find(workflow: dict[str, Any], node_type: str) -> dict[str, Any] | None:
    candidates = [
        x for x in workflow["nodes"] if x["type"] == node_type and x["name"] not in {n.ALERT_NODE, n.ERROR_CHECK_NODE}
    ]
    return candidates[0] if candidates else None


_REMOVE_ERROR_HANDLING_RE = re.compile(
    r"\b(?:remove|drop|disable|turn\s+off|switch\s+off|get\s+rid\s+of|take\s+out|delete|skip|without|stop|"
    r"no\s+more|don'?t\s+(?:need|want)|do\s+not\s+(?:need|want))\b.*"
    r"\b(?:error\s+handling|continue\s+on\s+fail(?:ure)?|(?:failure\s+)?alert(?:s|ing)?)\b"
)
_ERROR_HANDLING_NOUN_RE = re.compile(r"\b(?:error\s+handling|continue\s+on\s+fail(?:ure)?|alerts|alerting)\b")
# "the pager alerts are too noisy, switch them off": the verb after the noun, with a pronoun.
_PRONOUN_OFF_RE = re.compile(
    r"\b(?:turn|switch|shut)\s+(?:them|it|those|these)\s+off\b|\b(?:get\s+rid\s+of|kill|mute|silence|drop|remove)\s+"
    r"(?:them|those|these)\b"
)


def parse_change(clause: str, workflow: dict[str, Any]) -> list[Change]:
    """The changes one clause asks for; [] = not understood (the caller says so)."""
    # "the Daily digest workflow" names the target, not a schedule; the caller resolved it already.
    text = re.sub(r"\s+", " ", strip_workflow_reference(clause)).strip().rstrip(".!")
    low = text.lower()
    split = _split_structural(text, workflow)
    if split is not None:
        return split

    rename = re.search(
        r"\brename\s+(?:it|this(?:\s+one)?|that(?:\s+one)?|(?:this|that|the)\s+workflow)?\s*(?:to|as)\s+"
        r"[\"“']?(.+?)[\"”']?$",
        text,
        re.I,
    )
    if rename:
        name = rename.group(1).strip().strip("\"“”'").strip()
        if not name:
            return [Change("problem", "a workflow name can't be empty, so I kept the current one")]
        return [Change("rename", f"renamed it to “{name}”", value=name)]
    move = re.search(
        r"\bmove\s+(?:it|this|that|the\s+workflow)?\s*(?:in)?to\s+(?:the\s+)?(?:folder\s+)?[\"“']?(.+?)[\"”']?"
        r"(?:\s+folder)?$",
        text,
        re.I,
    )
    if move:
        folder = move.group(1).strip().strip("\"“”'")
        return [Change("move", f"moved it into the {folder} folder", value=folder)]
    if _REMOVE_ERROR_HANDLING_RE.search(low) or (_ERROR_HANDLING_NOUN_RE.search(low) and _PRONOUN_OFF_RE.search(low)):
        return [Change("remove_error_handling", "removed the error handling")]
    removal = re.search(
        r"\b(?:remove|drop|delete|get\s+rid\s+of|take\s+out)\s+(?:the\s+)?(.+?)(?:\s+(?:step|node|action))?$", low
    )
    if removal:
        target = removal.group(1)
        if re.fullmatch(r"(?:it|this|this\s+workflow|the\s+workflow|workflow|everything)", target):
            return [Change("delete", "deleted the workflow")]
        for pattern, node_type in _STEP_WORDS:
            if re.search(rf"\b(?:{pattern})\b", target):
                node = _find(workflow, node_type)
                if node is None:
                    kind = n.KIND_BY_TYPE.get(node_type)
                    label = n.ACTION_TYPES[kind][1] if kind is not None else "filter"
                    return [Change("problem", f"there is no {label} step to remove")]
                return [Change("remove_step", f"removed the {node['name']} step", node=node["name"])]

    changes: list[Change] = []
    error_spec, body = parse_error_handling(text)
    if error_spec is not None:
        alert = f" with alerts to {error_spec.alert_channel}" if error_spec.alert_channel else ""
        changes.append(Change("error_handling", f"added error handling (continue on fail{alert})", value=error_spec))
    threshold = re.search(r"\bthreshold\b[^\d$]*\$?(-?\d[\d,]*(?:\.\d+)?)", body, re.I)
    flt = parse_filter(body)
    if flt is not None:
        changes.append(Change("filter", f"set the filter to {flt.describe()}", value=flt))
    elif threshold:
        value = float(threshold.group(1).replace(",", ""))
        shown = int(value) if value.is_integer() else value
        changes.append(Change("threshold", f"changed the threshold to {shown}", value=value))
    impossible = invalid_schedule(body)
    if impossible is not None:
        changes.append(Change("problem", f"{_impossible_schedule(impossible)}, so I left the trigger as it was"))
    trigger = None if impossible is not None else parse_trigger(body)
    if trigger is None and re.search(r"\bpath\b", body, re.I) and _trigger_type(workflow) == "n8n-nodes-base.webhook":
        # "use /orders-v2 as the path": the webhook's own path, said without the word "webhook".
        path = webhook_path(body)
        trigger = TriggerSpec(kind="webhook", path=path) if path else None
    explicit_days = re.search(
        r"\b(?:daily|every\s+day|each\s+day|morning|afternoon|evening|night|weekdays?|monday|tuesday|wednesday|"
        r"thursday|friday|saturday|sunday)s?\b",
        body,
        re.I,
    )
    if impossible is None and (
        trigger is None or (trigger.interval_field is None and trigger.kind == "schedule" and not explicit_days)
    ):
        # "run it at 7:30am" on a weekday schedule changes the time, not the days.
        trigger = _new_time(body, workflow) or trigger
    if trigger is not None:
        trigger = _keep_time(trigger, body, workflow)
        changes.append(Change("trigger", f"changed the trigger to run {trigger.describe()}", value=trigger))
    adding = bool(re.search(r"\b(?:add|also|plus|as\s+well|another|additionally|new\s+step|then\s+also)\b", low))
    replaced = _replaced_values(body)
    for action in parse_action_phrases(body):
        _skip_replaced(action, body, replaced)
        node_type = n.ACTION_TYPES[action.kind][0]
        existing = _find(workflow, node_type)
        if adding or existing is None:
            label = n.ACTION_TYPES[action.kind][1]
            changes.append(Change("add", f"added {article(label)} {label} step", action=action))
            continue
        changes.extend(_param_changes(action, existing))
    # A bare "#channel" / address / URL still names a value for the one matching node, also next to
    # another change ("change the channel to #ops and run it every hour"): a value another change
    # already uses (an added step's channel, the alert channel), or the old value the message says it
    # replaces ("#ops rather than #eng"), is not applied.
    changes.extend(_bare_value_changes(body, workflow, _used_values(changes) | replaced))
    return changes


_VALUE = r"(#[A-Za-z0-9][\w-]*|[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|https?://[^\s\"'<>)\]]+)"
_REPLACED_RE = re.compile(
    rf"\b(?:instead\s+of|rather\s+than|not|from|replacing|replace)\s+(?:the\s+)?{_VALUE}|{_VALUE}\s+(?:to|with|->|→)\s+[#\w]",
    re.IGNORECASE,
)


def _replaced_values(text: str) -> set[str]:
    """Values the message names as the old ones: "#a rather than #b", "from #b to #a", "swap #b with #a"."""
    found: set[str] = set()
    for match in _REPLACED_RE.finditer(text):
        value = match.group(1) or match.group(2)
        found.add(value.rstrip(".,;:!?"))
    return found


def _skip_replaced(action: ActionSpec, text: str, replaced: set[str]) -> None:
    """An action's channel, address or URL is the new value, never the one the message replaces."""
    candidates = {
        "channel": [f"#{c}" for c in CHANNEL_RE.findall(text)],
        "to": EMAIL_RE.findall(text),
        "url": [u.rstrip(".,;:!?") for u in URL_RE.findall(text)],
    }
    for key, values in candidates.items():
        if action.params.get(key) in replaced:
            action.params[key] = next((v for v in values if v not in replaced), None)


def _used_values(changes: list[Change]) -> set[str]:
    used: set[str] = set()
    for change in changes:
        used.update(str(v) for v in change.params.values() if isinstance(v, str))
        if change.action is not None:
            used.update(str(v) for v in change.action.params.values() if isinstance(v, str))
        if isinstance(change.value, ErrorHandlingSpec) and change.value.alert_channel:
            used.add(change.value.alert_channel)
    return used


# ``(?<!\s)``: a separator starts where its whitespace does (a long run of spaces was quadratic).
_SUBCLAUSE_SPLIT_RE = re.compile(r"[;!?\n]+|\.(?=\s|$)|,\s*|(?<!\s)\s+(?:and|then)\s+", re.IGNORECASE)
_QUOTED_RE = re.compile(r"\"[^\"]*\"|“[^”]*”")
_FILLER_RE = re.compile(
    r"^(?:(?:and|then|also|please|now|too|instead|as\s+well|thanks?(?:\s+you)?|thank\s+you|that'?s\s+(?:all|it)|"
    r"for\s+me|ok(?:ay)?|great|perfect|cool|(?:at\s+)?(?:the\s+)?same\s+time|as\s+(?:before|usual))\b[\s,.!]*)*$",
    re.IGNORECASE,
)


def unparsed_subclauses(clause: str, workflow: dict[str, Any]) -> list[str]:
    """Parts of a one-sentence change request that name no change of their own.

    "Change the channel to #ops and make it faster" applies the channel and reports "make it faster"
    instead of silently skipping it. Each part is parsed alone against the workflow; quoted text is
    never split; thanks/please/instead-style filler is not a part.
    """
    parts = _parts(clause)
    if len(parts) < 2:
        return []
    whole = parse_change(clause, workflow)
    # A part inside a name or folder the whole clause already took ("rename it to Sales and Marketing").
    taken = " ".join(str(c.value) for c in whole if c.kind in ("rename", "move")).lower()
    # A part of a removal said across the sentence ("the alerts are too noisy, switch them off").
    removal = any(c.kind == "remove_error_handling" for c in whole)
    return [
        part
        for part in parts
        if not (
            _FILLER_RE.match(part)
            or (taken and part.lower() in taken)
            or (removal and (_ERROR_HANDLING_NOUN_RE.search(part.lower()) or _PRONOUN_OFF_RE.search(part.lower())))
            or parse_change(part, workflow)
        )
    ]


def clause_parts(clause: str) -> list[str]:
    """The parts of one change request: ``clause`` split at , ; . ! ? "and" "then", never inside quotes."""
    return _parts(clause)


def _parts(clause: str) -> list[str]:
    """``clause`` split at , ; . ! ? "and" "then" — never inside quoted text."""
    quoted: list[str] = []

    def hide(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = _QUOTED_RE.sub(hide, clause)
    parts = [p.strip() for p in _SUBCLAUSE_SPLIT_RE.split(masked) if p.strip()]
    return [re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], part) for part in parts]


_STRUCTURAL_RE = re.compile(
    r"\b(?:rename|move|remove|drop|delete|get\s+rid\s+of|take\s+out|disable|turn\s+off)\b", re.IGNORECASE
)


def _split_structural(text: str, workflow: dict[str, Any]) -> list[Change] | None:
    """A rename / move / removal sharing a sentence with other changes, each parsed on its own.

    Those patterns take the rest of the sentence ("remove the Slack step and run it every hour" would
    drop the schedule), so the sentence is split around them — but only when every other part names a
    change alone; otherwise (``rename it to Sales and Marketing``) the sentence stays whole (None).
    """
    parts = _parts(text)
    if len(parts) < 2 or not any(_STRUCTURAL_RE.search(p) for p in parts):
        return None
    groups: list[str] = []
    for part in parts:
        if _FILLER_RE.match(part):
            continue
        if _STRUCTURAL_RE.search(part) or not groups or _STRUCTURAL_RE.search(groups[-1]):
            groups.append(part)
        else:
            groups[-1] += " and " + part
    parsed = [parse_change(group, workflow) for group in groups]
    if len(groups) < 2 or not all(parsed):
        return None
    return [change for changes in parsed for change in changes]


def article(label: str) -> str:
    """ "an Edit Fields step", "an HTTP Request step", "a Slack step"."""
    return "an" if label[:1] in "AEIOU" or label.startswith(("HTTP", "API")) else "a"


def _impossible_schedule(phrase: str) -> str:
    return f"“{phrase}” is not a schedule I can set (times run from 00:00 to 23:59, intervals from 1 up)"


def impossible_schedule_reply(text: str) -> str | None:
    """The refusal for a build whose schedule is impossible ("every day at 25:99"), else None."""
    phrase = invalid_schedule(text)
    if phrase is None:
        return None
    return f"{_impossible_schedule(phrase)}, so I haven't built anything. Tell me when it should run."


def _new_time(text: str, workflow: dict[str, Any]) -> TriggerSpec | None:
    """ "send it at 07:30 instead", "make it 8am" on a daily/weekly schedule: same days, new time."""
    match = re.search(
        r"\b(?:at|to)\s+(\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?|noon|midnight)\b"
        r"|(?<![\w:/.-])(\d{1,2}(?::\d{2})?\s*[ap]\.?m\.?|\d{1,2}:\d{2})(?![\w:])",
        text,
        re.IGNORECASE,
    )
    node = n.trigger_node(workflow)
    if match is None or node is None or node.get("type") != "n8n-nodes-base.scheduleTrigger":
        return None
    said = match.group(1) or match.group(2)
    if not re.search(r":|[ap]\.?m|noon|midnight", said, re.IGNORECASE):
        return None
    time = parse_trigger(f"run daily at {said}")
    rules = node.get("parameters", {}).get("rule", {}).get("interval", [{}])
    rule = rules[0] if rules else {}
    if time is None or rule.get("field") not in {"days", "weeks"}:
        return None
    days = rule.get("triggerAtDay") if rule.get("field") == "weeks" else None
    return TriggerSpec("schedule", days=days, hour=time.hour, minute=time.minute)


_TIME_OF_DAY_RE = re.compile(
    r"\bat\s+\d|\b(?:noon|midnight|morning|afternoon|evening|night|nightly|\d{1,2}\s*[ap]\.?m\b)", re.IGNORECASE
)


def _keep_time(trigger: TriggerSpec, text: str, workflow: dict[str, Any]) -> TriggerSpec:
    """ "make it weekdays only" changes the days, not the time the schedule already runs at."""
    if trigger.kind != "schedule" or trigger.interval_field is not None or _TIME_OF_DAY_RE.search(text):
        return trigger
    node = n.trigger_node(workflow)
    if node is None or node.get("type") != "n8n-nodes-base.scheduleTrigger":
        return trigger
    rules = node.get("parameters", {}).get("rule", {}).get("interval", [{}])
    rule = rules[0] if rules else {}
    if rule.get("field") not in {"days", "weeks"} or not isinstance(rule.get("triggerAtHour"), int):
        return trigger
    minute = rule.get("triggerAtMinute", 0)
    return TriggerSpec(
        "schedule", days=trigger.days, hour=rule["triggerAtHour"], minute=minute if isinstance(minute, int) else 0
    )


def _param_changes(action: ActionSpec, node: dict[str, Any]) -> list[Change]:
    p = action.params
    name = node["name"]
    if action.kind == "slack" and p.get("channel"):
        return [
            Change("param", f"changed the Slack channel to {p['channel']}", node=name, params={"channel": p["channel"]})
        ]
    if action.kind == "gmail" and p.get("to"):
        return [Change("param", f"changed the email recipient to {p['to']}", node=name, params={"sendTo": p["to"]})]
    if action.kind == "http" and p.get("url"):
        return [
            Change(
                "param", f"changed the URL to {p['url']}", node=name, params={"url": p["url"], "method": p["method"]}
            )
        ]
    if action.kind == "github" and p.get("repo"):
        owner, _, repository = str(p["repo"]).partition("/")
        return [
            Change(
                "param",
                f"changed the GitHub repository to {p['repo']}",
                node=name,
                params={"owner": owner, "repository": repository},
            )
        ]
    if action.kind == "sheets" and p.get("document"):
        return [
            Change(
                "param", f"changed the spreadsheet to {p['document']}", node=name, params={"documentId": p["document"]}
            )
        ]
    if action.kind == "notion" and p.get("title"):
        return [
            Change("param", f"changed the Notion page title to {p['title']}", node=name, params={"title": p["title"]})
        ]
    if action.kind == "set" and p.get("assignments"):
        fields = ", ".join(f"{k} = {v}" for k, v in p["assignments"])
        return [Change("param", f"set {fields}", node=name, params={"__assignments": p["assignments"]})]
    return []


def _bare_value_changes(body: str, workflow: dict[str, Any], used: set[str]) -> list[Change]:
    changes: list[Change] = []
    channel = next((f"#{m}" for m in CHANNEL_RE.findall(body) if f"#{m}" not in used), None)
    slack = _find(workflow, "n8n-nodes-base.slack")
    if channel and slack is not None:
        changes.append(
            Change("param", f"changed the Slack channel to {channel}", node=slack["name"], params={"channel": channel})
        )
    email = next((m for m in EMAIL_RE.findall(body) if m not in used), None)
    gmail = _find(workflow, "n8n-nodes-base.gmail")
    if email and gmail is not None:
        changes.append(
            Change("param", f"changed the email recipient to {email}", node=gmail["name"], params={"sendTo": email})
        )
    urls = [u.rstrip(".,;:!?") for u in URL_RE.findall(body)]
    url = next((u for u in urls if u not in used), None)
    http = _find(workflow, "n8n-nodes-base.httpRequest")
    if url and http is not None:
        changes.append(Change("param", f"changed the URL to {url}", node=http["name"], params={"url": url}))
    return changes


def apply_change(workflow: dict[str, Any], change: Change) -> str | None:
    """Apply a content change to ``workflow`` in place; returns a problem sentence when it could not."""
    if change.kind == "param" and change.node is not None:
        node = next(x for x in workflow["nodes"] if x["name"] == change.node)
        params = dict(change.params)
        assignments = params.pop("__assignments", None)
        if assignments is not None:
            current = node["parameters"].setdefault("assignments", {}).setdefault("assignments", [])
            for field_name, value in assignments:
                current[:] = [a for a in current if a.get("name") != field_name]
                current.append({"name": field_name, "value": value, "type": "string"})
        write_parameters(node, {k: v for k, v in params.items() if v is not None})
        return None
    if change.kind == "remove_step":
        if change.node is None:
            return change.summary
        n.remove_node(workflow, change.node)
        return None
    if change.kind == "trigger":
        n.replace_trigger(workflow, change.value)
        return None
    if change.kind == "filter":
        n.set_filter(workflow, change.value)
        return None
    if change.kind == "threshold":
        flt = next(
            (x for x in workflow["nodes"] if x["type"] == "n8n-nodes-base.if" and x["name"] != n.ERROR_CHECK_NODE), None
        )
        if flt is None:
            return "there is no filter with a threshold to change"
        conditions = flt["parameters"].get("conditions", {}).get("conditions", [])
        if not conditions:
            return "the filter has no condition to change"
        value = change.value
        conditions[0]["rightValue"] = int(value) if isinstance(value, float) and value.is_integer() else value
        return None
    if change.kind == "error_handling":
        spec: ErrorHandlingSpec = change.value
        n.set_error_handling(workflow, spec.alert_channel)
        return None
    if change.kind == "remove_error_handling":
        n.remove_error_handling(workflow)
        return None
    if change.kind == "add" and change.action is not None:
        n.add_action(workflow, change.action)
        return None
    return None


def filter_spec_of(workflow: dict[str, Any]) -> FilterSpec | None:
    """The filter the workflow currently applies, read back from its IF node."""
    flt = next(
        (x for x in workflow["nodes"] if x["type"] == "n8n-nodes-base.if" and x["name"] != n.ERROR_CHECK_NODE), None
    )
    if flt is None:
        return None
    conditions = flt["parameters"].get("conditions", {}).get("conditions", [])
    if not conditions:
        return None
    c = conditions[0]
    field_name = str(c.get("leftValue", "")).removeprefix("={{ $json.").removesuffix(" }}")
    value = c.get("rightValue")
    return FilterSpec(field_name, str(c.get("operator", {}).get("operation", "equals")), value)
