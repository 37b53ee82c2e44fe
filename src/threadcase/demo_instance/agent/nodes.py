"""Node and workflow construction, and in-place edits of a workflow's JSON.

Workflows are n8n-shaped dicts (``{name, nodes, connections}``), built as one linear "main chain"
(trigger -> [If] -> [Edit Fields] -> actions...) plus, with alerting error handling, a branch
``Check for errors`` -> ``Alert on failure`` hanging off the last action. Edits operate on the JSON
itself rather than on a re-parsed spec, so a seeded workflow the agent never built can be edited too.
The node ``type`` strings and ``parameters`` shapes are documented in ``demo_instance/README.md``
(the platform's mocked execution runs them).
"""

from __future__ import annotations

import copy
import itertools
import re
import uuid
from typing import Any

from threadcase.demo_instance.agent.parse import ActionSpec, BuildSpec, FilterSpec, TriggerSpec
from threadcase.demo_instance.slack import SLACK_TYPE, post_parameters, set_slack_channel, slack_channel

__all__ = [
    "ACTION_TYPES",
    "ALERT_NODE",
    "CREDENTIAL_TYPES",
    "ERROR_CHECK_NODE",
    "PLACEHOLDER",
    "add_action",
    "build_workflow",
    "describe_node",
    "has_error_handling",
    "main_chain",
    "make_action_node",
    "make_trigger_node",
    "placeholder_parameters",
    "remove_error_handling",
    "remove_node",
    "replace_trigger",
    "set_error_handling",
    "set_filter",
    "slack_channel",
    "summarize",
]

PLACEHOLDER = "<<SET ME: {what}>>"
"""How a skipped detail appears in a node parameter: visible, greppable, never a plausible value."""

ERROR_CHECK_NODE = "Check for errors"
ALERT_NODE = "Alert on failure"
FILTER_NODE = "If"
_NAMESPACE = uuid.UUID("5b1d7c0e-3f0a-4c1e-9b8e-1f6a2d7c9e00")

TRIGGER_TYPES = {
    "schedule": ("n8n-nodes-base.scheduleTrigger", "Schedule Trigger", 1.2),
    "webhook": ("n8n-nodes-base.webhook", "Webhook", 2),
    "form": ("n8n-nodes-base.formTrigger", "On form submission", 2.2),
    "manual": ("n8n-nodes-base.manualTrigger", "Manual Trigger", 1),
}
ACTION_TYPES: dict[str, tuple[str, str, float]] = {
    "slack": ("n8n-nodes-base.slack", "Slack", 2.2),
    "gmail": ("n8n-nodes-base.gmail", "Gmail", 2.1),
    "notion": ("n8n-nodes-base.notion", "Notion", 2.2),
    "github": ("n8n-nodes-base.github", "GitHub", 1),
    "http": ("n8n-nodes-base.httpRequest", "HTTP Request", 4.2),
    "sheets": ("n8n-nodes-base.googleSheets", "Google Sheets", 4.5),
    "datatable": ("n8n-nodes-base.dataTable", "Data Table", 1),
    "set": ("n8n-nodes-base.set", "Edit Fields", 3.4),
}
KIND_BY_TYPE = {node_type: kind for kind, (node_type, _, _) in ACTION_TYPES.items()}
TRIGGER_KIND_BY_TYPE = {node_type: kind for kind, (node_type, _, _) in TRIGGER_TYPES.items()}
CREDENTIAL_TYPES = {
    "n8n-nodes-base.slack": "slackApi",
    "n8n-nodes-base.gmail": "gmailOAuth2",
    "n8n-nodes-base.notion": "notionApi",
    "n8n-nodes-base.github": "githubApi",
    "n8n-nodes-base.googleSheets": "googleSheetsOAuth2Api",
}
SERVICE_NAMES = {
    "slackApi": "Slack",
    "gmailOAuth2": "Gmail",
    "notionApi": "Notion",
    "githubApi": "GitHub",
    "googleSheetsOAuth2Api": "Google Sheets",
}


def placeholder(what: str) -> str:
    """The marked placeholder for a detail the user skipped."""
    return PLACEHOLDER.format(what=what)


def is_placeholder(value: Any) -> bool:
    """A ``<<SET ME: …>>`` value left where the user skipped a detail."""
    return isinstance(value, str) and value.startswith("<<SET ME")


def placeholder_parameters(node: dict[str, Any]) -> list[str]:
    """The node's parameters still holding a placeholder; a Slack node's channel is ``channel`` in either
    shape (the placeholder sits in its locator's value)."""
    parameters = node.get("parameters") or {}
    slack = node.get("type") == SLACK_TYPE
    missing = [k for k, v in parameters.items() if is_placeholder(v) and not (slack and k == "channel")]
    if slack and is_placeholder(slack_channel(parameters)):
        missing.insert(0, "channel")
    return missing


def _node(name: str, node_type: str, version: float, parameters: dict[str, Any]) -> dict[str, Any]:
    # Deterministic ids keep the demo reproducible run to run.
    return {
        "id": str(uuid.uuid5(_NAMESPACE, name)),
        "name": name,
        "type": node_type,
        "typeVersion": version,
        "position": [0.0, 0.0],
        "parameters": parameters,
    }


def make_trigger_node(trigger: TriggerSpec, workflow_name: str) -> dict[str, Any]:
    """The trigger node for ``trigger`` (see the README for the parameter shapes)."""
    node_type, name, version = TRIGGER_TYPES[trigger.kind]
    params: dict[str, Any] = {}
    if trigger.kind == "schedule":
        rule: dict[str, Any]
        if trigger.interval_field == "minutes":
            rule = {"field": "minutes", "minutesInterval": trigger.interval}
        elif trigger.interval_field == "hours":
            rule = {"field": "hours", "hoursInterval": trigger.interval}
        elif trigger.days is None:
            rule = {
                "field": "days",
                "daysInterval": 1,
                "triggerAtHour": trigger.hour,
                "triggerAtMinute": trigger.minute,
            }
        else:
            rule = {
                "field": "weeks",
                "weeksInterval": 1,
                "triggerAtDay": list(trigger.days),
                "triggerAtHour": trigger.hour,
                "triggerAtMinute": trigger.minute,
            }
        params = {"rule": {"interval": [rule]}}
    elif trigger.kind == "webhook":
        params = {"httpMethod": "POST", "path": trigger.path or _slug(workflow_name)}
    elif trigger.kind == "form":
        params = {"formTitle": workflow_name, "formFields": {"values": [{"fieldLabel": "Message"}]}}
    return _node(name, node_type, version, params)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "webhook"


def _value(params: dict[str, Any], key: str, what: str) -> Any:
    value = params.get(key)
    return placeholder(what) if value is None else value


def make_action_node(action: ActionSpec, name: str, summary: str) -> dict[str, Any]:
    """An action node; a missing detail becomes a marked placeholder (the caller says so)."""
    node_type, _, version = ACTION_TYPES[action.kind]
    p = action.params
    params: dict[str, Any]
    if action.kind == "slack":
        params = post_parameters(
            _value(p, "channel", "Slack channel"),
            # The whole incoming item, so whatever the trigger carried (an order's id and total) is posted.
            p.get("text") or f"={summary}: {{{{ JSON.stringify($json) }}}}",
        )
    elif action.kind == "gmail":
        params = {
            "operation": "send",
            "sendTo": _value(p, "to", "recipient email"),
            "subject": p.get("subject") or summary,
            "message": "={{ JSON.stringify($json) }}",
        }
    elif action.kind == "notion":
        params = {"resource": "databasePage", "operation": "create", "title": p.get("title") or summary}
    elif action.kind == "github":
        repo = p.get("repo")
        owner, _, repository = repo.partition("/") if isinstance(repo, str) and "/" in repo else (None, "", None)
        params = {
            "resource": "issue",
            "operation": p.get("operation") or "create",
            "owner": owner or placeholder("GitHub owner"),
            "repository": repository or placeholder("GitHub repository"),
            "title": p.get("title") or summary,
        }
    elif action.kind == "http":
        params = {"method": p.get("method") or "GET", "url": _value(p, "url", "URL"), "options": {}}
    elif action.kind == "sheets":
        params = {"operation": "append", "documentId": _value(p, "document", "spreadsheet"), "sheetName": "Sheet1"}
    elif action.kind == "datatable":
        params = {
            "operation": p.get("operation") or "insert",
            "dataTableId": _value(p, "table_id", "data table"),
            "dataTableName": p.get("table") or placeholder("data table"),
        }
    else:
        params = {
            "mode": "manual",
            # Keep the incoming fields: later steps (filter, message text) still need them.
            "includeOtherFields": True,
            "assignments": {
                "assignments": [
                    {"name": field_name, "value": value, "type": "string"}
                    for field_name, value in p.get("assignments", [])
                ]
            },
        }
    return _node(name, node_type, version, params)


def filter_node(spec: FilterSpec) -> dict[str, Any]:
    """The IF node: output 0 = condition true (continues the chain), output 1 = false (unconnected)."""
    operand_type = "number" if isinstance(spec.value, float) else "string"
    value: float | int | str = spec.value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    params = {
        "conditions": {
            "combinator": "and",
            "conditions": [
                {
                    "leftValue": f"={{{{ $json.{spec.field} }}}}",
                    "rightValue": value,
                    "operator": {"type": operand_type, "operation": spec.operation},
                }
            ],
        }
    }
    return _node(FILTER_NODE, "n8n-nodes-base.if", 2.2, params)


def _error_check_node() -> dict[str, Any]:
    params = {
        "conditions": {
            "combinator": "and",
            "conditions": [
                {
                    "leftValue": "={{ $json.error }}",
                    "rightValue": "",
                    "operator": {"type": "string", "operation": "exists"},
                }
            ],
        }
    }
    return _node(ERROR_CHECK_NODE, "n8n-nodes-base.if", 2.2, params)


def _alert_node(channel: str) -> dict[str, Any]:
    params = post_parameters(channel, "=Workflow step failed: {{ $json.error.message ?? 'unknown error' }}")
    return _node(ALERT_NODE, SLACK_TYPE, 2.2, params)


# --- connections and the main chain -----------------------------------------------------------


def _link(connections: dict[str, Any], source: str, target: str, output: int = 0) -> None:
    outputs: list[list[dict[str, Any]]] = connections.setdefault(source, {}).setdefault("main", [])
    while len(outputs) <= output:
        outputs.append([])
    outputs[output] = [{"node": target, "type": "main", "index": 0}]


def _targets(connections: dict[str, Any], source: str, output: int = 0) -> list[str]:
    outputs = connections.get(source, {}).get("main", [])
    if len(outputs) <= output:
        return []
    return [link["node"] for link in outputs[output] or []]


def trigger_node(workflow: dict[str, Any]) -> dict[str, Any] | None:
    """The workflow's trigger node, if it has one."""
    for node in workflow.get("nodes", []):
        node_type = str(node.get("type", ""))
        if node_type in TRIGGER_KIND_BY_TYPE or node_type.lower().endswith("trigger") or "webhook" in node_type.lower():
            return dict(node)
    return None


def main_chain(workflow: dict[str, Any]) -> list[str]:
    """Node names from the trigger along output 0, stopping before the error-check branch."""
    trigger = trigger_node(workflow)
    if trigger is None:
        return [n["name"] for n in workflow.get("nodes", [])]
    chain = [trigger["name"]]
    connections = workflow.get("connections", {})
    while True:
        nxt = [t for t in _targets(connections, chain[-1]) if t not in chain and t != ERROR_CHECK_NODE]
        if not nxt:
            return chain
        chain.append(nxt[0])


def _relink_chain(workflow: dict[str, Any], chain: list[str]) -> None:
    """Rewrite the connections of ``chain`` (keeping the error branch hung off the last action)."""
    connections: dict[str, Any] = workflow.setdefault("connections", {})
    error_branch = ERROR_CHECK_NODE in {n["name"] for n in workflow["nodes"]}
    for name in chain:
        connections.pop(name, None)
    for source, target in itertools.pairwise(chain):
        _link(connections, source, target)
    if error_branch:
        _link(connections, chain[-1], ERROR_CHECK_NODE)
        _link(connections, ERROR_CHECK_NODE, ALERT_NODE)
    _layout(workflow, chain)


def _layout(workflow: dict[str, Any], chain: list[str]) -> None:
    positions = {name: [float(240 * i), 0.0] for i, name in enumerate(chain)}
    positions[ERROR_CHECK_NODE] = [float(240 * len(chain)), 200.0]
    positions[ALERT_NODE] = [float(240 * (len(chain) + 1)), 200.0]
    for node in workflow["nodes"]:
        if node["name"] in positions:
            node["position"] = positions[node["name"]]


def _unique_name(workflow: dict[str, Any], base: str) -> str:
    names = {n["name"] for n in workflow.get("nodes", [])}
    if base not in names:
        return base
    i = 1
    while f"{base}{i}" in names:
        i += 1
    return f"{base}{i}"


def build_workflow(spec: BuildSpec, name: str, trigger: TriggerSpec) -> dict[str, Any]:
    """A fresh workflow ``{name, nodes, connections}`` from a (complete) build spec."""
    workflow: dict[str, Any] = {"name": name, "nodes": [make_trigger_node(trigger, name)], "connections": {}}
    steps = spec.set_steps + spec.action_steps
    # The filter goes after the actions the user mentioned before it (the data it tests comes from them).
    filter_at = len(spec.set_steps) + min(spec.filter_after, len(spec.action_steps)) if spec.filter_after else 0
    for index, action in enumerate(steps):
        if spec.filter is not None and index == filter_at:
            workflow["nodes"].append(filter_node(spec.filter))
        add_action(workflow, action, relink=False)
    if spec.filter is not None and filter_at >= len(steps):
        workflow["nodes"].append(filter_node(spec.filter))
    _relink_chain(workflow, [n["name"] for n in workflow["nodes"]])
    if spec.error_handling is not None:
        set_error_handling(workflow, spec.error_handling.alert_channel)
    return workflow


def add_action(workflow: dict[str, Any], action: ActionSpec, *, relink: bool = True) -> str:
    """Append an action at the end of the main chain (a Set step goes before the first action)."""
    base = ACTION_TYPES[action.kind][1]
    name = _unique_name(workflow, base)
    node = make_action_node(action, name, workflow.get("name", "Workflow"))
    if has_error_handling(workflow) and action.kind != "set":
        node["onError"] = "continueRegularOutput"
    chain = main_chain(workflow) if relink else []
    workflow["nodes"].append(node)
    if relink:
        if action.kind == "set":
            first_action = next(
                (i for i, n in enumerate(chain) if _node_by_name(workflow, n)["type"] in CREDENTIAL_TYPES), len(chain)
            )
            chain.insert(max(first_action, 1), name)
        else:
            chain.append(name)
        _relink_chain(workflow, chain)
    return name


def _node_by_name(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in workflow["nodes"] if n["name"] == name)


def remove_node(workflow: dict[str, Any], name: str) -> None:
    """Remove a node from the main chain and reconnect its neighbours."""
    chain = main_chain(workflow)
    workflow["nodes"] = [n for n in workflow["nodes"] if n["name"] != name]
    workflow.get("connections", {}).pop(name, None)
    for source in list(workflow.get("connections", {})):
        for output in workflow["connections"][source].get("main", []):
            output[:] = [link for link in output or [] if link["node"] != name]
    _relink_chain(workflow, [n for n in chain if n != name])


def replace_trigger(workflow: dict[str, Any], trigger: TriggerSpec) -> None:
    """Swap the trigger node (keeps everything downstream)."""
    chain = main_chain(workflow)
    old = trigger_node(workflow)
    new = make_trigger_node(trigger, workflow.get("name", "Workflow"))
    if old is not None:
        workflow["nodes"] = [n for n in workflow["nodes"] if n["name"] != old["name"]]
        workflow.get("connections", {}).pop(old["name"], None)
        chain = [n for n in chain if n != old["name"]]
    new["name"] = _unique_name(workflow, new["name"])
    workflow["nodes"].insert(0, new)
    _relink_chain(workflow, [new["name"], *chain])


def set_filter(workflow: dict[str, Any], spec: FilterSpec) -> bool:
    """Add the IF filter after the trigger, or replace its condition; True when one existed."""
    existing = next(
        (n for n in workflow["nodes"] if n["type"] == "n8n-nodes-base.if" and n["name"] != ERROR_CHECK_NODE), None
    )
    new = filter_node(spec)
    if existing is not None:
        existing["parameters"] = new["parameters"]
        return True
    chain = main_chain(workflow)
    new["name"] = _unique_name(workflow, FILTER_NODE)
    workflow["nodes"].append(new)
    chain.insert(1, new["name"])
    _relink_chain(workflow, chain)
    return False


def has_error_handling(workflow: dict[str, Any]) -> bool:
    """Any action node continues on failure (error handling is on)."""
    return any(n.get("onError") in {"continueRegularOutput", "continueErrorOutput"} for n in workflow.get("nodes", []))


def set_error_handling(workflow: dict[str, Any], alert_channel: str | None) -> None:
    """Continue on fail on every action node; with a channel, add the alert branch."""
    for node in workflow["nodes"]:
        if node["type"] in KIND_BY_TYPE and node["type"] != "n8n-nodes-base.set" and node["name"] != ALERT_NODE:
            node["onError"] = "continueRegularOutput"
    if alert_channel is not None:
        names = {n["name"] for n in workflow["nodes"]}
        if ERROR_CHECK_NODE not in names:
            workflow["nodes"].append(_error_check_node())
        if ALERT_NODE in names:
            set_slack_channel(_node_by_name(workflow, ALERT_NODE)["parameters"], alert_channel)
        else:
            workflow["nodes"].append(_alert_node(alert_channel))
    _relink_chain(workflow, main_chain(workflow))


def remove_error_handling(workflow: dict[str, Any]) -> None:
    """Turn error handling off: no continue-on-fail, no check or alert nodes."""
    chain = main_chain(workflow)
    for node in workflow["nodes"]:
        node.pop("onError", None)
    workflow["nodes"] = [n for n in workflow["nodes"] if n["name"] not in {ERROR_CHECK_NODE, ALERT_NODE}]
    for name in (ERROR_CHECK_NODE, ALERT_NODE):
        workflow.get("connections", {}).pop(name, None)
    _relink_chain(workflow, chain)


def describe_node(node: dict[str, Any]) -> str:
    """One line about a node, for plans and answers."""
    p = node.get("parameters", {})
    node_type = node.get("type", "")
    if node["name"] == ALERT_NODE:
        return f"alert {slack_channel(p)} in Slack when a step fails"
    if node["name"] == ERROR_CHECK_NODE:
        return "check each result for an error"
    kind = KIND_BY_TYPE.get(node_type)
    if kind == "slack":
        return f"post a message to {slack_channel(p)} in Slack"
    if kind == "gmail":
        return f"send an email to {p.get('sendTo')} with Gmail"
    if kind == "notion":
        return f"create a Notion page titled {p.get('title')!r}"
    if kind == "github":
        if p.get("operation") == "getAll":
            return f"read the open GitHub issues of {p.get('owner')}/{p.get('repository')}"
        return f"open a GitHub issue in {p.get('owner')}/{p.get('repository')}"
    if kind == "http":
        return f"{p.get('method', 'GET')} {p.get('url')}"
    if kind == "sheets":
        return f"append a row to the {p.get('documentId')} spreadsheet"
    if kind == "datatable":
        verb = "read rows from" if p.get("operation") == "get" else "insert a row into"
        return f"{verb} the {p.get('dataTableName')} data table"
    if kind == "set":
        fields = ", ".join(f"{a['name']} = {a['value']}" for a in p.get("assignments", {}).get("assignments", []))
        return f"set fields ({fields})" if fields else "set fields"
    if node_type == "n8n-nodes-base.if":
        conditions = p.get("conditions", {}).get("conditions", [])
        if conditions:
            c = conditions[0]
            field_name = str(c.get("leftValue", "")).removeprefix("={{ $json.").removesuffix(" }}")
            op = FilterSpec(field_name, c.get("operator", {}).get("operation", "?"), c.get("rightValue")).describe()
            return f"continue only if {op}"
        return "filter items"
    trigger_kind = TRIGGER_KIND_BY_TYPE.get(node_type)
    if trigger_kind is not None:
        return f"start {describe_trigger(node)}"
    return f"{node['name']} ({node_type})"


def describe_trigger(node: dict[str, Any]) -> str:
    """Describe a trigger node back in words ("every day at 09:00")."""
    kind = TRIGGER_KIND_BY_TYPE.get(node.get("type", ""))
    p = node.get("parameters", {})
    if kind == "webhook":
        return TriggerSpec("webhook", path=p.get("path")).describe()
    if kind in {"form", "manual"}:
        return TriggerSpec(kind).describe()  # type: ignore[arg-type]
    if kind == "schedule":
        rules = p.get("rule", {}).get("interval", [{}])
        rule = rules[0] if rules else {}
        field_name = rule.get("field")
        if field_name == "minutes":
            return TriggerSpec("schedule", interval_field="minutes", interval=rule.get("minutesInterval", 1)).describe()
        if field_name == "hours":
            return TriggerSpec("schedule", interval_field="hours", interval=rule.get("hoursInterval", 1)).describe()
        days = rule.get("triggerAtDay") if field_name == "weeks" else None
        return TriggerSpec(
            "schedule", days=days, hour=rule.get("triggerAtHour", 0), minute=rule.get("triggerAtMinute", 0)
        ).describe()
    return "on its trigger"


def summarize(workflow: dict[str, Any]) -> str:
    """``it runs every day at 09:00 and will post a message to #sales in Slack, then ...``."""
    by_name = {x["name"]: x for x in workflow.get("nodes", [])}
    chain = [by_name[name] for name in main_chain(workflow) if name in by_name]
    trigger = trigger_node(workflow)
    steps = [describe_node(x) for x in chain if trigger is None or x["name"] != trigger["name"]]
    if ALERT_NODE in by_name:
        steps.append(describe_node(by_name[ALERT_NODE]))
    runs = f"it runs {describe_trigger(trigger)}" if trigger is not None else "it has no trigger"
    return f"{runs} and will " + ", then ".join(steps) if steps else runs


def clone(workflow: dict[str, Any]) -> dict[str, Any]:
    """A deep copy with only the fields ``build-workflow`` accepts."""
    return {
        "name": workflow.get("name", "Workflow"),
        "nodes": copy.deepcopy(workflow.get("nodes", [])),
        "connections": copy.deepcopy(workflow.get("connections", {})),
    }
