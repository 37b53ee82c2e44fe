"""Mocked execution (``execute-with-llm-mock``): walk a workflow from its trigger, deterministically.

The demo's stand-in for n8n's LLM-mocked execution. The walk starts at the trigger and follows
``connections`` (``main`` outputs); a node runs once per batch of items it receives, a node that
receives no items does not run (as in n8n). Node vocabulary:

- **triggers** (``scheduleTrigger``, ``webhook``, ``formTrigger``, ``manualTrigger``, any type
  containing "trigger"): *pinned*; their items come from the hints (key ``trigger``, the node's name
  or type) or a default (webhook ``{body, headers, query}``, form ``{Message}``, schedule
  ``{timestamp}``, manual ``{}``);
- **Set / Edit Fields** (``n8n-nodes-base.set``): *real*; ``assignments.assignments[{name, value}]``
  (or v2 ``values.{string,number,boolean}[{name, value}]``), values may be expressions; only the
  assigned fields are kept unless ``includeOtherFields`` is true;
- **IF** (``n8n-nodes-base.if``): *real*; ``conditions.conditions[{leftValue, rightValue, operator:
  {type, operation}}]`` with ``combinator`` and|or, or the simple ``{field, operation, value}`` (also
  as a list under ``conditions``); operations ``gt gte lt lte equals notEquals contains notContains
  startsWith endsWith exists notExists isEmpty isNotEmpty true false``; output 0 = true, 1 = false;
- **Data Table** (``n8n-nodes-base.dataTable``): *real* on the stored rows; ``operation`` insert
  (writes each item's known columns) or get/read (emits every row); table by ``dataTableId`` or
  ``dataTableName``;
- **actions** (Slack, Gmail, Notion, GitHub, HTTP Request, Google Sheets, and any other type):
  *mocked*; each item records an intercepted request ``{url, method, nodeType, requestBody,
  mockResponse}`` and outputs the mock response. The response comes from JSON in ``scenarioHints``
  keyed by node name (preferred), node type or short type (``{"Slack": {"ok": true}}``), else a
  per-type default. A hinted list answers item by item when the node received several items; an
  array answer is split into one item per element (a one-item call to an API returning records). A
  response with ``"ok": false`` or an ``_evalMockError`` key makes the node fail with that error.

Expressions: ``={{ $json.a.b }}``, ``{{ $json.x ?? 'fallback' }}`` and ``{{ JSON.stringify($json) }}``
inside ``=``-prefixed strings. Credentials are never checked, as on n8n 2.41: its mocked execution
synthesizes a mock credential for a node with none (or one it cannot find) and intercepts every call, so
``mockedCredentials`` stays empty. ``onError: continueRegularOutput`` turns a node's
error into an item ``{error: {message}}`` on its regular output; ``continueErrorOutput`` sends it to
output 1; otherwise the execution stops there with ``success: false``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import deque
from typing import Any

from threadcase.demo_instance.events import epoch_ms, utc_now
from threadcase.demo_instance.slack import slack_channel
from threadcase.demo_instance.storage import Store
from threadcase.wire import ExecuteWithMockRequest

__all__ = ["CREDENTIAL_TYPES", "execute_with_mock", "hints_from_text", "resolve"]

CREDENTIAL_TYPES = {
    "n8n-nodes-base.slack": "slackApi",
    "n8n-nodes-base.gmail": "gmailOAuth2",
    "n8n-nodes-base.notion": "notionApi",
    "n8n-nodes-base.github": "githubApi",
    "n8n-nodes-base.googleSheets": "googleSheetsOAuth2Api",
}
_MAX_STEPS = 1_000
Item = dict[str, Any]


class NodeError(Exception):
    """A node failed during mocked execution; recorded on that node's result."""


# --- hints and expressions --------------------------------------------------------------------


def hints_from_text(text: str | None) -> dict[str, Any]:
    """Every JSON object found in ``scenarioHints`` (the whole text, or embedded ``{...}`` blocks), merged."""
    if not text:
        return {}
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return whole
    merged: dict[str, Any] = {}
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            merged.update(value)
        index = text.find("{", end)
    return merged


def _lookup(item: Item, path: str) -> Any:
    value: Any = item
    for part in re.findall(r"[^.\[\]]+", path):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _eval(expr: str, item: Item) -> Any:
    for alternative in (a.strip() for a in expr.split("??")):
        if alternative.startswith("JSON.stringify(") and alternative.endswith(")"):
            inner = _eval(alternative[len("JSON.stringify(") : -1], item)
            return json.dumps(inner, separators=(",", ":"))
        if alternative == "$json":
            return item
        if alternative.startswith("$json."):
            value = _lookup(item, alternative[len("$json.") :])
            if value is not None:
                return value
            continue
        literal = re.fullmatch(r"""(['"`])(.*)\1""", alternative, re.DOTALL)
        if literal:
            return literal.group(2)
        try:
            return json.loads(alternative)
        except json.JSONDecodeError:
            continue
    return None


def resolve(value: Any, item: Item) -> Any:
    """A parameter with its ``={{ ... }}`` expressions evaluated against ``item``."""
    if isinstance(value, dict):
        return {k: resolve(v, item) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, item) for v in value]
    if not isinstance(value, str) or not value.startswith("="):
        return value
    template = value[1:]
    whole = re.fullmatch(r"\s*\{\{(.*?)\}\}\s*", template, re.DOTALL)
    if whole:
        return _eval(whole.group(1), item)

    def one(match: re.Match[str]) -> str:
        result = _eval(match.group(1), item)
        if result is None:
            return ""
        return result if isinstance(result, str) else json.dumps(result)

    return re.sub(r"\{\{(.*?)\}\}", one, template, flags=re.DOTALL)


# --- node kinds -------------------------------------------------------------------------------


def _is_trigger(node: dict[str, Any]) -> bool:
    node_type = str(node.get("type", "")).lower()
    return "trigger" in node_type or node_type.endswith(".webhook")


def _short(node_type: str) -> str:
    return node_type.rsplit(".", 1)[-1]


def _hint_for(hints: dict[str, Any], node: dict[str, Any], *extra: str) -> Any:
    node_type = str(node.get("type", ""))
    keys = [str(node["name"]), node_type, _short(node_type), *extra]
    lowered = {k.lower(): v for k, v in hints.items()}
    for key in keys:
        if key in hints:
            return hints[key]
        if key.lower() in lowered:
            return lowered[key.lower()]
    return None


def _trigger_items(node: dict[str, Any], hints: dict[str, Any]) -> list[Item]:
    hinted = _hint_for(hints, node, "trigger", "triggerContent")
    if isinstance(hinted, list):
        return [i if isinstance(i, dict) else {"value": i} for i in hinted]
    if isinstance(hinted, dict):
        return [hinted]
    short = _short(str(node.get("type", ""))).lower()
    if short == "webhook":
        return [{"body": {}, "headers": {"content-type": "application/json"}, "query": {}}]
    if short == "formtrigger":
        return [{"Message": "Hello from the form", "submittedAt": utc_now()}]
    if short == "scheduletrigger":
        return [{"timestamp": utc_now()}]
    return [{}]


def _compare(left: Any, operation: str, right: Any) -> bool:
    def number(value: Any) -> float | None:
        if isinstance(value, bool):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            return None

    op = operation.lower()
    if op in ("exists", "isnotempty", "notempty"):
        return left not in (None, "", [], {})
    if op in ("notexists", "isempty", "empty"):
        return left in (None, "", [], {})
    if op == "true":
        return left is True or str(left).lower() == "true"
    if op == "false":
        return left is False or str(left).lower() == "false"
    if op in ("gt", "gte", "lt", "lte", "larger", "smaller", "largerequal", "smallerequal"):
        a, b = number(left), number(right)
        if a is None or b is None:
            return False
        return {
            "gt": a > b,
            "larger": a > b,
            "gte": a >= b,
            "largerequal": a >= b,
            "lt": a < b,
            "smaller": a < b,
            "lte": a <= b,
            "smallerequal": a <= b,
        }[op]
    if op in ("equals", "equal", "notequals", "notequal"):
        a, b = number(left), number(right)
        same = a == b if a is not None and b is not None else str(left) == str(right)
        return same if op.startswith("equal") else not same
    text, needle = "" if left is None else str(left), "" if right is None else str(right)
    if op == "contains":
        return needle.lower() in text.lower()
    if op == "notcontains":
        return needle.lower() not in text.lower()
    if op == "startswith":
        return text.startswith(needle)
    if op == "endswith":
        return text.endswith(needle)
    raise NodeError(f"unsupported IF operation {operation!r}")


def _conditions(params: dict[str, Any]) -> tuple[list[tuple[Any, str, Any]], str]:
    """(leftValue-or-field, operation, rightValue) triples and the combinator, from either shape."""
    raw = params.get("conditions", params)
    combinator = "and"
    if isinstance(raw, dict) and "conditions" in raw:
        combinator = str(raw.get("combinator", "and")).lower()
        raw = raw["conditions"]
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise NodeError("IF node has no conditions")
    triples: list[tuple[Any, str, Any]] = []
    for cond in raw:
        if not isinstance(cond, dict):
            raise NodeError(f"IF condition must be an object, got {cond!r}")
        if "field" in cond:
            triples.append(
                (f"={{{{ $json.{cond['field']} }}}}", str(cond.get("operation", "equals")), cond.get("value"))
            )
        else:
            operator = cond.get("operator") or {}
            operation = operator.get("operation", "equals") if isinstance(operator, dict) else str(operator)
            triples.append((cond.get("leftValue"), str(operation), cond.get("rightValue")))
    return triples, combinator


def _run_if(node: dict[str, Any], items: list[Item]) -> list[list[Item]]:
    triples, combinator = _conditions(node.get("parameters") or {})
    true_items: list[Item] = []
    false_items: list[Item] = []
    for item in items:
        results = [_compare(resolve(left, item), op, resolve(right, item)) for left, op, right in triples]
        (true_items if (all(results) if combinator == "and" else any(results)) else false_items).append(item)
    return [true_items, false_items]


def _run_set(node: dict[str, Any], items: list[Item]) -> list[list[Item]]:
    params = node.get("parameters") or {}
    pairs: list[tuple[str, Any]] = []
    assignments = (params.get("assignments") or {}).get("assignments")
    if isinstance(assignments, list):
        pairs = [(str(a.get("name")), a.get("value")) for a in assignments if isinstance(a, dict)]
    else:
        for group in (params.get("values") or {}).values():
            pairs += [(str(a.get("name")), a.get("value")) for a in group or [] if isinstance(a, dict)]
    keep = bool(params.get("includeOtherFields") or params.get("keepOnlySet") is False)
    out = []
    for item in items:
        new: Item = dict(item) if keep else {}
        for name, value in pairs:
            new[name] = resolve(value, item)
        out.append(new)
    return [out]


# --- the walk ---------------------------------------------------------------------------------


class _Execution:
    def __init__(self, store: Store, workflow: dict[str, Any], hints: dict[str, Any]) -> None:
        self.store = store
        self.workflow = workflow
        self.hints = hints
        self.results: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []

    def _result(self, node: dict[str, Any], mode: str) -> dict[str, Any]:
        return self.results.setdefault(
            node["name"],
            {
                "outputs": [],
                "outputCount": 0,
                "executionMode": mode,
                "interceptedRequests": [],
                "iterationCount": 0,
                "startTime": epoch_ms(),
            },
        )

    def _request(self, node: dict[str, Any], params: dict[str, Any]) -> tuple[str, str, Any]:
        short = _short(str(node.get("type", ""))).lower()
        if short == "slack":
            return (
                "https://slack.com/api/chat.postMessage",
                "POST",
                {"channel": slack_channel(params), "text": params.get("text")},
            )
        if short == "gmail":
            body = {"to": params.get("sendTo"), "subject": params.get("subject"), "message": params.get("message")}
            return "https://gmail.googleapis.com/gmail/v1/users/me/messages/send", "POST", body
        if short == "notion":
            return "https://api.notion.com/v1/pages", "POST", {"title": params.get("title")}
        if short == "github":
            url = f"https://api.github.com/repos/{params.get('owner')}/{params.get('repository')}/issues"
            if str(params.get("operation", "create")).lower() in ("getall", "get"):
                return url, "GET", None
            return url, "POST", {"title": params.get("title"), "body": params.get("body")}
        if short == "httprequest":
            method = str(params.get("method") or "GET").upper()
            return str(params.get("url") or ""), method, params.get("body") or params.get("jsonBody")
        if short == "googlesheets":
            doc = params.get("documentId")
            url = f"https://sheets.googleapis.com/v4/spreadsheets/{doc}/values/{params.get('sheetName')}:append"
            return url, "POST", params.get("columns") or params
        return f"https://mock.invalid/{short}", "POST", params

    @staticmethod
    def _default_response(node: dict[str, Any], params: dict[str, Any], body: Any) -> Any:
        short = _short(str(node.get("type", ""))).lower()
        if short == "slack":
            return {
                "ok": True,
                "channel": slack_channel(params),
                "ts": "1700000000.000100",
                "message": {"text": params.get("text")},
            }
        if short == "gmail":
            return {"id": "18c0mockmessage", "threadId": "18c0mockthread", "labelIds": ["SENT"]}
        if short == "notion":
            return {"object": "page", "id": "0f1e2d3c-mock-page", "url": "https://www.notion.so/mock-page"}
        if short == "github":
            if str(params.get("operation", "create")).lower() in ("getall", "get"):
                return [{"number": 1, "title": "Mock issue", "state": "open"}]
            return {"number": 1, "html_url": "https://github.com/mock/repo/issues/1", "title": params.get("title")}
        if short == "googlesheets":
            return {"updates": {"updatedRows": 1}}
        return {"ok": True, "status": 200, "echo": body}

    def _run_action(self, node: dict[str, Any], items: list[Item]) -> list[list[Item]]:
        # No credential check: n8n 2.41's mocked execution synthesizes a mock credential for a node with
        # none or with one it cannot find, and every outbound call is intercepted anyway (observed with
        # `scripts/n8n-local`: a Slack node without credentials runs, `mockedCredentials: []`).
        result = self._result(node, "mocked")
        hinted = _hint_for(self.hints, node)
        out: list[Item] = []
        for index, item in enumerate(items):
            params = resolve(node.get("parameters") or {}, item)
            url, method, body = self._request(node, params)
            if isinstance(hinted, list) and len(items) > 1:
                response = hinted[min(index, len(hinted) - 1)] if hinted else {}
            elif hinted is not None:
                response = hinted
            else:
                response = self._default_response(node, params, body)
            result["interceptedRequests"].append(
                {
                    "url": url,
                    "method": method,
                    "nodeType": node.get("type", ""),
                    "requestBody": body,
                    "mockResponse": response,
                }
            )
            if isinstance(response, dict) and ("_evalMockError" in response or response.get("ok") is False):
                raise NodeError(
                    str(response.get("_evalMockError") or response.get("error") or "the service answered ok: false")
                )
            if isinstance(response, list):  # an array answer becomes one item per element, as in n8n
                out.extend(r if isinstance(r, dict) else {"data": r} for r in response)
            else:
                out.append(response if isinstance(response, dict) else {"data": response})
        return [out]

    def _table(self, node: dict[str, Any]) -> dict[str, Any]:
        params = node.get("parameters") or {}
        table_id = params.get("dataTableId")
        if isinstance(table_id, dict):  # n8n resource locator {mode, value}
            table_id = table_id.get("value")
        table = self.store.get("data_tables", str(table_id)) if table_id else None
        if table is None or table.get("projectId") != self.workflow.get("projectId"):
            name = params.get("dataTableName")
            table = next(
                (t for t in self.store.list("data_tables", str(self.workflow.get("projectId"))) if t["name"] == name),
                None,
            )
        if table is None:
            raise NodeError(f"data table {table_id or params.get('dataTableName')!r} not found")
        return table

    def _run_table(self, node: dict[str, Any], items: list[Item]) -> list[list[Item]]:
        table = self._table(node)
        operation = str((node.get("parameters") or {}).get("operation") or "insert").lower()
        rows = self.store.list("table_rows", table["id"])
        if operation in ("get", "read", "getall", "rows"):
            return [[dict(r) for r in rows]]
        if operation not in ("insert", "upsert", "append"):
            raise NodeError(f"unsupported data table operation {operation!r}")
        columns = [c["name"] for c in table.get("columns", [])]
        inserted: list[Item] = []
        with self.store.tx():
            for item in items:
                position = len(rows) + len(inserted)
                row = {"id": position + 1, **{c: item.get(c) for c in columns}}
                self.store.insert("table_rows", f"{position:07d}", row, scope=table["id"])
                inserted.append(row)
        return [inserted]

    def _execute_node(self, node: dict[str, Any], items: list[Item]) -> list[list[Item]]:
        node_type = str(node.get("type", ""))
        if node_type == "n8n-nodes-base.if":
            self._result(node, "real")
            return _run_if(node, items)
        if node_type == "n8n-nodes-base.set":
            self._result(node, "real")
            return _run_set(node, items)
        if node_type == "n8n-nodes-base.dataTable":
            self._result(node, "real")
            return self._run_table(node, items)
        if node_type in ("n8n-nodes-base.noOp", "n8n-nodes-base.merge", "n8n-nodes-base.stickyNote"):
            self._result(node, "real")
            return [items]
        return self._run_action(node, items)

    def run(self) -> bool:
        nodes = {n["name"]: n for n in self.workflow.get("nodes", []) if isinstance(n, dict) and "name" in n}
        connections = self.workflow.get("connections") or {}
        trigger = next((n for n in nodes.values() if _is_trigger(n)), None)
        if trigger is None:
            self.errors.append("The workflow has no trigger node to start from")
            return False
        trigger_items = _trigger_items(trigger, self.hints)
        queue: deque[tuple[str, list[Item]]] = deque()
        self._emit(trigger, [trigger_items], self._result(trigger, "pinned"), connections, queue)
        steps = 0
        while queue:
            steps += 1
            if steps > _MAX_STEPS:
                self.errors.append(f"Execution stopped after {_MAX_STEPS} node runs (a loop in the connections?)")
                return False
            name, items = queue.popleft()
            node = nodes.get(name)
            if node is None or node.get("disabled"):
                continue
            try:
                try:
                    outputs = self._execute_node(node, items)
                except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
                    # A malformed node (e.g. parameters that are not an object) fails like a node, not the server.
                    raise NodeError(f"misconfigured: {type(exc).__name__}: {exc}") from exc
            except NodeError as exc:
                message = str(exc)
                result = self._result(node, "mocked")
                result["error"] = message
                mode = node.get("onError")
                failed = [{**item, "error": {"message": message}} for item in items]
                if mode == "continueRegularOutput":
                    outputs = [failed]
                elif mode == "continueErrorOutput":
                    outputs = [[], failed]
                else:
                    self.errors.append(f'Node "{name}": {message}')
                    result["iterationCount"] += 1
                    return False
            self._emit(node, outputs, self._result(node, "real"), connections, queue)
        return not self.errors

    @staticmethod
    def _emit(
        node: dict[str, Any],
        outputs: list[list[Item]],
        result: dict[str, Any],
        connections: dict[str, Any],
        queue: deque[tuple[str, list[Item]]],
    ) -> None:
        result["iterationCount"] += 1
        while len(result["outputs"]) < len(outputs):
            result["outputs"].append([])
        for index, items in enumerate(outputs):
            result["outputs"][index].extend(items)
        result["outputCount"] = sum(len(branch) for branch in result["outputs"])
        main = (connections.get(node["name"]) or {}).get("main") or []
        for index, items in enumerate(outputs):
            if not items or index >= len(main):
                continue
            for link in main[index] or []:
                if isinstance(link, dict) and "node" in link:
                    queue.append((str(link["node"]), [dict(i) for i in items]))


def _n8n_node_result(result: dict[str, Any]) -> dict[str, Any]:
    """A node's result as n8n answers it: ``outputs: {main: [[{json, pairedItem}, ...]]}``; a node's
    error is only in the execution's ``errors`` (``Node "X": ...``)."""
    out = {k: v for k, v in result.items() if k not in ("outputs", "error")}
    out["outputs"] = {
        "main": [
            [{"json": item, "pairedItem": {"item": index}} for index, item in enumerate(branch)]
            for branch in result["outputs"]
        ]
    }
    return out


def execute_with_mock(
    store: Store,
    workflow: dict[str, Any],
    request: ExecuteWithMockRequest,
) -> dict[str, Any]:
    """Run ``workflow`` with mocked outside calls; the n8n-shaped ``ExecutionResult`` as a dict."""
    hints = hints_from_text(request.scenarioHints)
    execution = _Execution(store, workflow, hints)
    success = execution.run()
    warnings = []
    if request.scenarioHints and not hints:
        warnings.append("scenarioHints carried no JSON object; default mock responses were used")
    return {
        "executionId": f"mock-{uuid.uuid4().hex[:12]}",
        "success": success,
        "nodeResults": {name: _n8n_node_result(result) for name, result in execution.results.items()},
        "errors": execution.errors,
        "hints": {
            "globalContext": request.scenarioHints or "",
            "triggerContent": next(
                (
                    r["outputs"][0]
                    for r in execution.results.values()
                    if r["executionMode"] == "pinned" and r["outputs"]
                ),
                [],
            ),
            "nodeHints": dict(hints),
            "warnings": warnings,
            "bypassPinData": {},
        },
        "mockedCredentials": [],
        "rewrittenCredentials": [],
    }
