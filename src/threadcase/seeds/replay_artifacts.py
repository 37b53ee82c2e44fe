"""The artifacts a replayed conversation left behind: workflows and data tables, by tool call.

:class:`ArtifactLedger` replays the artifact-changing tool calls of the turns before the live one,
in call order, and ends with what the agent had built: the latest successful build per workflow
(``build-workflow``, ``patch-workflow``, ``submit-workflow``, with the workflow as JSON), renamed by
``rename-workflow``, removed for good by ``delete-workflow`` or ``workflows`` with action
``delete``; the data tables of any tool output carrying ``table: {id, name, columns}`` (schema
only), removed by a data-table delete. It also notes the artifacts the conversation only inspected,
which replay never restores. :func:`fit_limits` makes the result restorable (seed rules, limits).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from threadcase.case.schema import Column, SeedDataTable, SeedWorkflow
from threadcase.seeds.replay_redact import is_table_tool, tool_key

__all__ = ["MAX_MESSAGES", "MAX_TABLES", "MAX_WORKFLOWS", "ArtifactLedger", "fit_limits"]

_BUILD_TOOLS = frozenset({"build-workflow", "patch-workflow", "submit-workflow"})
_WORKFLOW_INSPECT_TOOLS = frozenset({"get-workflow", "get-as-code", "list-workflows", "workflows"})
_ColumnType = Literal["string", "number", "boolean", "date"]
_TABLE_COLUMN_TYPES: dict[str, _ColumnType] = {
    "string": "string",
    "number": "number",
    "boolean": "boolean",
    "date": "date",
}
# The restore endpoint's limits (n8n's, mirrored by threadcase.wire.RestoreThreadRequest).
MAX_MESSAGES = 1000
MAX_WORKFLOWS = 50
MAX_TABLES = 20


class ArtifactLedger:
    """Replays the artifact-changing tool calls in order: the state the agent left before the live turn."""

    def __init__(self) -> None:
        self.workflows: dict[str, SeedWorkflow] = {}
        self.tables: dict[str, SeedDataTable] = {}
        self.built: set[str] = set()
        self.deleted: set[str] = set()
        self.created_tables: set[str] = set()
        self.seen_workflows: set[str] = set()
        self.seen_tables: set[str] = set()
        self.code_only_builds = 0
        self.code_only: set[str] = set()
        """Workflow ids whose latest build carried no workflow JSON (a later JSON build or a delete clears it)."""
        self.anonymous_code_only = 0
        """Code-only builds that named no workflow id at all."""
        self.coerced_columns = 0
        self.unrestorable: dict[str, str] = {}

    def apply(self, name: str, inputs: dict[str, Any], outputs: dict[str, Any] | None, error: str | None) -> None:
        """Apply one tool call (in call order); failed calls change nothing."""
        if error is not None:
            return
        tool = tool_key(name)
        outputs = outputs or {}
        if tool in _BUILD_TOOLS:
            self._build(inputs, outputs)
        elif tool == "rename-workflow":
            wid = _str(outputs.get("workflowId")) or _str(inputs.get("workflowId"))
            new_name = _str(outputs.get("name")) or _str(inputs.get("name"))
            if wid in self.workflows and new_name:
                self.workflows[wid] = self.workflows[wid].model_copy(update={"name": new_name})
            elif wid:
                self.seen_workflows.add(wid)
        elif tool == "delete-workflow" or (tool == "workflows" and _action(inputs) == "delete"):
            wid = _str(inputs.get("workflowId")) or _str(inputs.get("id")) or _str(outputs.get("workflowId"))
            if wid:
                self.workflows.pop(wid, None)
                self.unrestorable.pop(f"workflow {wid}", None)
                self.code_only.discard(wid)
                self.deleted.add(wid)
        elif tool in _WORKFLOW_INSPECT_TOOLS:
            self._note_seen_workflows(inputs, outputs)
        if is_table_tool(tool):
            self._tables(tool, inputs, outputs)
        table = outputs.get("table")
        if isinstance(table, dict):
            self._table(table)

    def _build(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        body = next(
            (
                cand
                for cand in (outputs.get("workflow"), inputs.get("workflow"), outputs, inputs)
                if isinstance(cand, dict) and isinstance(cand.get("nodes"), list)
            ),
            None,
        )
        wid = (
            _str(outputs.get("workflowId"))
            or (_str(outputs["workflow"].get("id")) if isinstance(outputs.get("workflow"), dict) else None)
            or _str(outputs.get("id"))
            or _str(inputs.get("workflowId"))
        )
        if body is None or not wid:
            self.code_only_builds += 1
            if wid:
                # An older JSON build would misrepresent what the agent left, so it is dropped too.
                self.code_only.add(wid)
                self.workflows.pop(wid, None)
                self.built.add(wid)
                self.deleted.discard(wid)
            else:
                self.anonymous_code_only += 1
            return
        self.code_only.discard(wid)
        previous = self.workflows.get(wid)
        name = _str(body.get("name")) or _str(inputs.get("name")) or (previous.name if previous else f"Workflow {wid}")
        raw_connections = body.get("connections")
        connections: dict[str, Any] = raw_connections if isinstance(raw_connections, dict) else {}
        self.built.add(wid)
        self.deleted.discard(wid)
        try:
            self.workflows[wid] = SeedWorkflow(
                id=wid,
                name=name,
                nodes=[n for n in body["nodes"] if isinstance(n, dict)],
                connections=connections,
            )
        except ValidationError as exc:
            # An older build would misrepresent what the agent left, so the workflow is dropped.
            self.workflows.pop(wid, None)
            self.unrestorable[f"workflow {wid}"] = _validation_reason(exc)

    def _note_seen_workflows(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        for value in (inputs.get("workflowId"), inputs.get("id")):
            if (wid := _str(value)) is not None:
                self.seen_workflows.add(wid)
        listed = outputs.get("workflows")
        if isinstance(listed, list):
            self.seen_workflows.update(w for item in listed if isinstance(item, dict) and (w := _str(item.get("id"))))
        if isinstance(outputs.get("workflow"), dict) and (w := _str(outputs["workflow"].get("id"))):
            self.seen_workflows.add(w)

    def _tables(self, tool: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        if tool.startswith("delete") or _action(inputs) == "delete":
            tid = _str(inputs.get("tableId")) or _str(inputs.get("dataTableId")) or _str(inputs.get("id"))
            if tid:
                self.tables.pop(tid, None)
                self.unrestorable.pop(f"data table {tid}", None)
            return
        listed = outputs.get("dataTables")
        if isinstance(listed, list):
            self.seen_tables.update(t for item in listed if isinstance(item, dict) and (t := _str(item.get("id"))))
        for value in (inputs.get("tableId"), inputs.get("dataTableId")):
            if (tid := _str(value)) is not None:
                self.seen_tables.add(tid)

    def _table(self, table: dict[str, Any]) -> None:
        tid, name = _str(table.get("id")), _str(table.get("name"))
        raw_columns = table.get("columns")
        if not tid or not name or not isinstance(raw_columns, list):
            return
        columns: list[Column] = []
        names: set[str] = set()
        for col in raw_columns:
            if not isinstance(col, dict) or not (col_name := _str(col.get("name"))) or col_name in names:
                continue
            col_type = _TABLE_COLUMN_TYPES.get(str(col.get("type")))
            if col_type is None:
                self.coerced_columns += 1
                col_type = "string"
            try:
                columns.append(Column(name=col_name, type=col_type))
            except ValidationError:
                continue  # a blank column name: nothing a table could be created with
            names.add(col_name)
        self.created_tables.add(tid)
        try:
            self.tables[tid] = SeedDataTable(id=tid, name=name, columns=columns)
        except ValidationError as exc:
            self.tables.pop(tid, None)
            self.unrestorable[f"data table {tid}"] = _validation_reason(exc)

    def unrecovered(self) -> list[str]:
        """Why each agent-built workflow that should exist is missing from the restore, one line each.

        A workflow whose latest build carried only workflow-SDK source, or failed the seed rules,
        cannot be recreated here; a replay without it is not the thread the user saw.
        """
        out = [f"workflow {wid}: its latest build carried no workflow JSON" for wid in sorted(self.code_only)]
        if self.anonymous_code_only:
            out.append(f"{self.anonymous_code_only} build(s) named no workflow id and carried no workflow JSON")
        out += [
            f"{what}: {reason}"
            for what, reason in self.unrestorable.items()
            if what.startswith("workflow ") and what[9:] not in self.workflows
        ]
        return out

    def recovered(self) -> int:
        """Workflows recovered from some build (restored now, or deleted later)."""
        return len(self.built - self.code_only)

    def warnings(self) -> list[str]:
        out: list[str] = []
        if self.code_only_builds:
            out.append(
                f"{self.code_only_builds} workflow build(s) carried no workflow JSON (only workflow-SDK source); "
                "those builds were not restored"
            )
        if self.coerced_columns:
            out.append(f"{self.coerced_columns} data-table column(s) had an unknown type; restored as string")
        for what, reason in self.unrestorable.items():
            if what.startswith("workflow ") and what[9:] in self.workflows:
                continue
            out.append(f"{what} cannot be restored ({reason}); left out")
        foreign_wf = sorted(self.seen_workflows - self.built - self.deleted)
        foreign_tables = sorted(self.seen_tables - self.created_tables)
        if foreign_wf or foreign_tables:
            parts = []
            if foreign_wf:
                parts.append(f"{len(foreign_wf)} workflow(s) ({_ids(foreign_wf)})")
            if foreign_tables:
                parts.append(f"{len(foreign_tables)} data table(s) ({_ids(foreign_tables)})")
            out.append(
                "the conversation inspected pre-existing " + " and ".join(parts) + " that the agent did not build; "
                "only agent-built artifacts are restored"
            )
        return out


def _validation_reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f", +{len(ids) - 5} more" if len(ids) > 5 else "")


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _action(inputs: dict[str, Any]) -> str | None:
    for key in ("action", "operation"):
        value = inputs.get(key)
        if isinstance(value, str):
            return value.lower()
    return None


def fit_limits(
    artifacts: ArtifactLedger, messages: list[dict[str, Any]], warnings: list[str]
) -> tuple[list[SeedWorkflow], list[SeedDataTable]]:
    """Make the result restorable as an inline seed: unique workflow names, and the restore limits
    (the oldest messages and artifacts give way, with a warning). ``messages`` is trimmed in place."""
    workflows = list(artifacts.workflows.values())
    if len(workflows) > MAX_WORKFLOWS:
        warnings.append(f"{len(workflows)} agent-built workflows; only the {MAX_WORKFLOWS} built last are restored")
        workflows = workflows[-MAX_WORKFLOWS:]
    seen: set[str] = set()
    renamed = 0
    for index, wf in enumerate(workflows):
        name, n = wf.name, 1
        while name in seen:
            n += 1
            name = f"{wf.name[: 255 - 6]} ({n})"
        if name != wf.name:
            renamed += 1
            workflows[index] = wf.model_copy(update={"name": name})
        seen.add(name)
    if renamed:
        warnings.append(f"{renamed} workflow(s) shared a name with another and got a ' (n)' suffix")
    tables = list(artifacts.tables.values())
    if len(tables) > MAX_TABLES:
        warnings.append(f"{len(tables)} agent-created data tables; only the {MAX_TABLES} created last are restored")
        tables = tables[-MAX_TABLES:]
    if len(messages) > MAX_MESSAGES:
        dropped = len(messages) - MAX_MESSAGES
        dropped += dropped % 2  # whole turns: a user message and its answer
        warnings.append(
            f"{len(messages)} prior messages exceed the restore limit of {MAX_MESSAGES}; "
            f"the oldest {dropped // 2} turn(s) are not restored"
        )
        del messages[:dropped]
    return workflows, tables
