"""Checks on what the conversation left on the instance: node types, parameters, credentials, identity.

The workflows inspected are the ones the live conversation saved and did not delete
(``record.artifacts.workflows``, last saved last), then every seeded workflow as the conversation
left it, saved or not (``record.seed.workflows[].final``). A check may name one workflow: a seeded
one by its seed id or seed name (the per-run id and name are the harness's business), a built one
by its name.

Identity checks compare a seeded workflow as it was restored with the same id after the conversation
(both read back from the instance): "edited in place" means that id changed, not that some workflow
with that name now looks right. New workflows are those a live tool call created (an id in a write
tool's result and nowhere in its arguments, :func:`threadcase.records.created_ids`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from threadcase.case import schema
from threadcase.grading.check_util import (
    MISSING,
    canonical,
    dig,
    leaves,
    not_judged,
    nothing_there,
    quote,
    text_of,
    value_matches,
    verdict,
)
from threadcase.records import RunRecord, SeededWorkflow, created_ids, is_read_only_tool
from threadcase.verdicts import UnitVerdict
from threadcase.wire import Workflow, WorkflowNode

__all__ = [
    "identity_checks",
    "new_workflows",
    "node_credentials",
    "node_parameters",
    "node_types",
    "saved_anything",
    "workflow_difference",
]


@dataclass(frozen=True)
class _Scope:
    """The workflows a check looks at, or why there are none to look at."""

    workflows: list[tuple[str, Workflow]]
    """(how the reason names it, the workflow) in order."""
    missing: str | None = None
    """Why the named workflow is not there (a failure: it was never built, or it was deleted)."""
    unseen: str | None = None
    """Why the named workflow could not be seen (not judged: a restore or read failure)."""


def _seeded_label(seeded: SeededWorkflow) -> str:
    return f"seeded workflow {seeded.seed_name!r}"


def _all_workflows(record: RunRecord) -> list[tuple[str, Workflow]]:
    built = [(f"workflow {wf.name!r}", wf) for wf in record.artifacts.workflows]
    ids = {wf.id for _, wf in built}
    seeded = [(_seeded_label(s), s.final) for s in record.seed.workflows if s.final is not None and s.id not in ids]
    return built + seeded


def _scope(record: RunRecord, ref: str | None) -> _Scope:
    if ref is None:
        return _Scope(_all_workflows(record))
    seeded = record.seed.seeded_workflow(ref)
    if seeded is not None:
        if seeded.deleted:
            return _Scope([], missing=f"{_seeded_label(seeded)} was deleted during the conversation")
        if seeded.final is None:
            return _Scope([], unseen=f"{_seeded_label(seeded)} {seeded.final_error or 'was not read back'}")
        return _Scope([(_seeded_label(seeded), seeded.final)])
    named = [(f"workflow {wf.name!r}", wf) for wf in record.artifacts.workflows if wf.name.casefold() == ref.casefold()]
    if named:
        return _Scope(named)
    saved = ", ".join(repr(wf.name) for wf in record.artifacts.workflows) or "none"
    return _Scope(
        [], missing=f"no workflow named {ref!r} was saved (saved: {saved}) and no seed workflow has that id or name"
    )


def _type_matches(node_type: str, wanted: str) -> bool:
    if node_type == wanted:
        return True
    # "slack" names n8n-nodes-base.slack; a dotted name must match exactly.
    return "." not in wanted and node_type.rsplit(".", 1)[-1].casefold() == wanted.casefold()


def _select(scope: _Scope, node: str | None) -> list[tuple[str, WorkflowNode]]:
    """The nodes a check reads: by name when some node has that name, else by type; every node without one."""
    nodes = [(where, n) for where, wf in scope.workflows for n in wf.nodes]
    if node is None:
        return nodes
    by_name = [(where, n) for where, n in nodes if n.name == node]
    return by_name or [(where, n) for where, n in nodes if _type_matches(n.type, node)]


def _where(node: WorkflowNode, where: str) -> str:
    return f"node {node.name!r} in {where}"


# --- node types -------------------------------------------------------------------------------


def node_types(record: RunRecord, present: list[str], absent: list[str]) -> Iterator[UnitVerdict]:
    """``nodeTypesPresent`` / ``nodeTypesAbsent`` over the workflows the live conversation saved."""
    nodes = [(wf.name, node) for wf in record.artifacts.workflows for node in wf.nodes]
    built = len(record.artifacts.workflows)
    for key, wanted_list, want_present in (("nodeTypesPresent", present, True), ("nodeTypesAbsent", absent, False)):
        for i, wanted in enumerate(wanted_list):
            unit = f"check:{key}#{i}"
            label = f"a {wanted} node is {'present' if want_present else 'absent'} in the built workflows"
            if not built:
                if want_present:
                    yield verdict(unit, label, False, "no workflow was built")
                else:
                    yield not_judged(unit, label, "no workflow was built, so there was nothing to inspect")
                continue
            hits = [(wf, n) for wf, n in nodes if _type_matches(n.type, wanted)]
            if hits:
                wf, n = hits[0]
                reason = f"node {n.name!r} ({n.type}) in workflow {wf!r}"
            else:
                reason = f"none of the {len(nodes)} nodes in {built} built workflow(s) has type {wanted}"
            yield verdict(unit, label, bool(hits) == want_present, reason)


# --- node parameters --------------------------------------------------------------------------


def _parameter_label(check: schema.NodeParameterCheck) -> str:
    who = f"node {check.node!r}" if check.node is not None else "every node"
    if check.workflow is not None:
        who += f" of workflow {check.workflow!r}"
    what = check.path or "any parameter"
    if check.has_equals:
        test = f"{what} = {check.equals!r}"
    elif check.contains is not None:
        test = f"{what} containing {check.contains!r}"
    elif check.matches is not None:
        test = f"{what} matching /{check.matches}/"
    else:
        test = f"a parameter {what}"
    if check.absent:
        return f"no {who.removeprefix('every ')} has {test}" if check.node is None else f"{who} has no {test}"
    quantifier = {"first": "", "any": " (at least one)", "all": " (all of them)"}[check.quantifier]
    return f"{who}{quantifier} has {test}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def _hit(node: WorkflowNode, check: schema.NodeParameterCheck) -> tuple[bool, str]:
    """Whether the node satisfies the check, and the evidence in a few words."""
    pattern = re.compile(check.matches) if check.matches is not None else None
    if check.path is not None:
        actual = dig(node.parameters, check.path)
        if actual is MISSING:
            return False, f"has no parameter {check.path}"
        if check.has_equals:
            ok = actual == check.equals
        elif check.contains is not None or pattern is not None:
            ok = value_matches(actual, contains=check.contains, pattern=pattern)
        else:
            ok = True  # absent: true with a path and no matcher: the parameter exists
        return ok, f"has {check.path} = {_shown(actual)}"
    for path, value in leaves(node.parameters):
        if value_matches(value, contains=check.contains, pattern=pattern):
            return True, f"has {path} = {_shown(value)}"
    return False, f"has no parameter {'containing ' + repr(check.contains) if check.contains else 'matching'}"


def node_parameters(record: RunRecord, checks: list[schema.NodeParameterCheck]) -> Iterator[UnitVerdict]:
    """``nodeParameters``: each entry over the workflows and nodes it selects."""
    for i, check in enumerate(checks):
        unit = f"check:nodeParameters#{i}"
        label = _parameter_label(check)
        scope = _scope(record, check.workflow)
        if scope.unseen is not None:
            yield not_judged(unit, label, scope.unseen, "framework_issue")
            continue
        if scope.missing is not None or not scope.workflows:
            why = scope.missing or "no workflow was built"
            yield nothing_there(unit, label, why, absent=check.absent, so="so there was nothing to inspect")
            continue
        selected = _select(scope, check.node)
        if not selected:
            why = f"no node is named or typed {check.node!r} in {len(scope.workflows)} workflow(s)"
            yield nothing_there(unit, label, why, absent=check.absent, so="so none could have it")
            continue
        results = [(where, node, *_hit(node, check)) for where, node in selected]
        yield _quantified(unit, label, check.quantifier, check.absent, results, noun="node")


def _quantified(
    unit: str,
    label: str,
    quantifier: str,
    absent: bool,
    results: list[tuple[str, WorkflowNode, bool, str]],
    *,
    noun: str,
) -> UnitVerdict:
    """Pass or fail over the selected nodes: the first, any, all, or (``absent``) none satisfies."""
    hits = [(where, node, evidence) for where, node, ok, evidence in results if ok]
    misses = [(where, node, evidence) for where, node, ok, evidence in results if not ok]
    count = f"{len(results)} selected {noun}{'s' if len(results) != 1 else ''}"
    if absent:
        if hits:
            where, node, evidence = hits[0]
            return verdict(unit, label, False, f"{_where(node, where)} {evidence}")
        return verdict(unit, label, True, f"none of the {count} has it")
    if quantifier == "first":
        where, node, ok, evidence = results[0]
        return verdict(unit, label, ok, f"{_where(node, where)} {evidence}")
    if quantifier == "any":
        if hits:
            where, node, evidence = hits[0]
            return verdict(unit, label, True, f"{_where(node, where)} {evidence}")
        where, node, evidence = misses[0]
        return verdict(unit, label, False, f"none of the {count} has it; {_where(node, where)} {evidence}")
    if misses:
        where, node, evidence = misses[0]
        return verdict(unit, label, False, f"{_where(node, where)} {evidence} ({len(misses)} of the {count} miss it)")
    return verdict(unit, label, True, f"all {count} have it; e.g. {_where(hits[0][1], hits[0][0])} {hits[0][2]}")


# --- credentials ------------------------------------------------------------------------------


def node_credentials(record: RunRecord, checks: list[schema.NodeCredentialCheck]) -> Iterator[UnitVerdict]:
    """``nodeCredentials``: the named credential is attached to the selected nodes."""
    for i, check in enumerate(checks):
        unit = f"check:nodeCredentials#{i}"
        where_wf = f" of workflow {check.workflow!r}" if check.workflow is not None else ""
        label = f"node {check.node!r}{where_wf} uses the credential {check.credential!r}"
        scope = _scope(record, check.workflow)
        if scope.unseen is not None:
            yield not_judged(unit, label, scope.unseen, "framework_issue")
            continue
        if scope.missing is not None or not scope.workflows:
            yield verdict(unit, label, False, scope.missing or "no workflow was built")
            continue
        selected = _select(scope, check.node)
        if not selected:
            why = f"no node is named or typed {check.node!r} in {len(scope.workflows)} workflow(s)"
            yield verdict(unit, label, False, why)
            continue
        results = []
        for where, node in selected:
            attached = {str(kind): str((ref or {}).get("name", "")) for kind, ref in (node.credentials or {}).items()}
            ok = check.credential in attached.values()
            listed = ", ".join(f"{name!r} ({kind})" for kind, name in attached.items()) or "no credential"
            results.append((where, node, ok, f"has {listed}"))
        yield _quantified(unit, label, check.match, False, results, noun="node")


# --- identity ---------------------------------------------------------------------------------


def _node_shape(node: WorkflowNode) -> dict[str, Any]:
    credentials = {kind: (ref or {}).get("name") for kind, ref in (node.credentials or {}).items()}
    return {
        "type": node.type,
        "typeVersion": node.typeVersion,
        "parameters": node.parameters,
        "credentials": credentials,
        "onError": node.onError,
    }


def _first_leaf_difference(before: Any, after: Any, prefix: str = "") -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in after:
                return f"{path} was removed (it was {quote(text_of(before[key]), 60)})"
            if key not in before:
                return f"{path} was added: {quote(text_of(after[key]), 60)}"
            if canonical(before[key]) != canonical(after[key]):
                return _first_leaf_difference(before[key], after[key], path)
    return f"{prefix or 'it'} was {quote(text_of(before), 60)}, now {quote(text_of(after), 60)}"


def workflow_difference(before: Workflow, after: Workflow) -> str | None:
    """The first way ``after`` differs from ``before`` (name, nodes, connections, activation, folder), or None.

    Node ids and canvas positions are not compared: a builder that rewrites its layout, or regenerates
    node ids while saving under the same workflow id, has still edited that workflow and no other.
    """
    if before.name != after.name:
        return f"it was renamed from {before.name!r} to {after.name!r}"
    old = {n.name: n for n in before.nodes}
    new = {n.name: n for n in after.nodes}
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    if added:
        return f"node {added[0]!r} ({new[added[0]].type}) was added"
    if removed:
        return f"node {removed[0]!r} ({old[removed[0]].type}) was removed"
    for name, node in old.items():
        shape_before, shape_after = _node_shape(node), _node_shape(new[name])
        if canonical(shape_before) != canonical(shape_after):
            return f"node {name!r}: {_first_leaf_difference(shape_before, shape_after)}"
    if canonical(before.connections) != canonical(after.connections):
        return "its connections changed"
    if before.active != after.active:
        return "it was activated" if after.active else "it was deactivated"
    if before.parentFolderId != after.parentFolderId:
        return "it was moved to another folder"
    return None


def saved_anything(record: RunRecord) -> bool:
    """A live tool call that writes (not a read) succeeded: the agent changed something on the instance."""
    return any(
        call.error is None and not is_read_only_tool(call.tool_name)
        for turn in record.live_turns
        for call in turn.tool_calls
    )


def new_workflows(record: RunRecord) -> list[tuple[str, str]]:
    """``(id, name)`` of every workflow a live tool call created (deleted ones included), in id order."""
    calls = [(c.tool_name, c.args, c.result) for t in record.live_turns for c in t.tool_calls if c.error is None]
    seeded = {s.id for s in record.seed.workflows} | set(record.seed.id_map.values())
    names = {wf.id: wf.name for wf in record.artifacts.workflows}
    for _, args, result in calls:
        wid = result.get("workflowId") if isinstance(result, dict) else None
        body = args.get("workflow") if isinstance(args, dict) else None
        if wid and isinstance(body, dict) and body.get("name"):
            names.setdefault(str(wid), str(body["name"]))
    created = sorted(created_ids(calls)["workflow"] - seeded)
    return [(wid, names.get(wid, "?")) for wid in created]


def _listed(workflows: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name!r} (id {wid})" for wid, name in workflows)


def _identity(record: RunRecord, unit: str, label: str, ref: str, want_changed: bool) -> UnitVerdict:
    seeded = record.seed.seeded_workflow(ref)
    if seeded is None:
        return not_judged(unit, label, f"no seed workflow {ref!r} was restored in this run", "framework_issue")
    if seeded.restored is None:
        why = seeded.restore_error or "was not read back after the restore"
        return not_judged(unit, label, f"{_seeded_label(seeded)} {why}", "framework_issue")
    if seeded.deleted:
        return verdict(unit, label, False, f"{_seeded_label(seeded)} (per-run id {seeded.id}) was deleted")
    if seeded.final is None:
        why = seeded.final_error or "was not read back after the conversation"
        return not_judged(unit, label, f"{_seeded_label(seeded)} {why}", "framework_issue")
    if not want_changed and not saved_anything(record):
        why = "the agent saved nothing, so it could not have changed it"
        return not_judged(unit, label, why)
    difference = workflow_difference(seeded.restored, seeded.final)
    which = f"{_seeded_label(seeded)} (per-run id {seeded.id})"
    if difference is not None:
        return verdict(unit, label, want_changed, f"{which} changed in place: {difference}")
    reason = f"{which} is exactly as restored"
    created = new_workflows(record)
    if want_changed and created:
        reason += f"; the conversation created {len(created)} new workflow(s) instead: {_listed(created)}"
    return verdict(unit, label, not want_changed, reason)


def identity_checks(record: RunRecord, checks: schema.Checks) -> Iterator[UnitVerdict]:
    """``workflowsEditedInPlace``, ``workflowsUnchanged`` and ``maxNewWorkflows``."""
    for i, ref in enumerate(checks.workflows_edited_in_place):
        label = f"the seeded workflow {ref!r} is edited in place (same id, changed)"
        yield _identity(record, f"check:workflowsEditedInPlace#{i}", label, ref, True)
    for i, ref in enumerate(checks.workflows_unchanged):
        label = f"the seeded workflow {ref!r} is left unchanged"
        yield _identity(record, f"check:workflowsUnchanged#{i}", label, ref, False)
    if checks.max_new_workflows is not None:
        limit = checks.max_new_workflows
        unit = "check:maxNewWorkflows"
        label = "no new workflow is created" if limit == 0 else f"at most {limit} new workflow(s) are created"
        if not saved_anything(record):
            yield not_judged(unit, label, "the agent saved nothing, so it could not have created a workflow")
            return
        created = new_workflows(record)
        if len(created) <= limit:
            listed = f": {_listed(created)}" if created else ""
            yield verdict(unit, label, True, f"the conversation created {len(created)} workflow(s){listed}")
        else:
            yield verdict(unit, label, False, f"the conversation created {len(created)} workflows: {_listed(created)}")
