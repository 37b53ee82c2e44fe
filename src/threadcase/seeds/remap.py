"""Pure preparation of an inline seed: shorthand expansion, timestamp slots, id and name remapping.

Nothing here touches the instance; :mod:`threadcase.seeds.inline` sends the result.

- **Expansion**: a message with exactly the keys ``{role, text}`` becomes a full envelope (generated
  ``id``, ``type: "llm"``, one text block); anything else passes through untouched.
- **Stamps**: the slots are 2020-01-01T00:00:00Z plus one second per index (constant, so re-running
  a case never changes them). Authored stamps are kept only when every message has one, all are in
  the past and they strictly ascend in array order; otherwise the whole sequence is restamped,
  because restamping one entry would reorder it against the others.
- **Remap**: every seed workflow and agent id (one id space, each at least 8 characters) is
  replaced, longest first and in one pass, by a fresh id across messages, workflows and agents, so
  two runs of one seed never share an id. Workflow names get the per-run suffix ``[seed xxxxxxxx]``
  (at most 128 characters in all) and mentions of the old names are rewritten in text blocks and
  ``workflowName`` fields (never in nodes or tool payloads). Agents keep their names.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
import secrets
import string
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from threadcase.case import schema
from threadcase.case.seed import build_result_problems
from threadcase.errors import CaseProblem, CaseSchemaError

__all__ = [
    "MAX_NAME",
    "MIN_REMAP_ID",
    "SLOT_EPOCH",
    "RemappedSeed",
    "expand_messages",
    "fresh_id",
    "remap_seed",
    "seed_problems",
    "seed_tag",
    "seeded_name",
    "seeded_name_pattern",
    "slot",
]

SLOT_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
MIN_REMAP_ID = 8
MAX_NAME = 128
_ID_ALPHABET = string.ascii_letters + string.digits


def slot(index: int) -> str:
    """The fixed past timestamp of message ``index``: 2020-01-01T00:00:00.000Z plus ``index`` seconds."""
    return _iso(SLOT_EPOCH + timedelta(seconds=index))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_stamp(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        # Epoch milliseconds, as the message store writes them. The load rules refuse what cannot
        # convert; an unconvertible stamp built in code is restamped, never a crash mid-restore.
        try:
            return datetime.fromtimestamp(value / 1000, tz=UTC)
        except (ValueError, OverflowError, OSError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return None


def _is_shorthand(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and set(message) == {"role", "text"}
        and message["role"] in ("user", "assistant")
        and (
            isinstance(message["text"], str)
            or (isinstance(message["text"], list) and all(isinstance(line, str) for line in message["text"]))
        )
    )


def expand_messages(messages: list[dict[str, Any]], *, now: datetime | None = None) -> list[dict[str, Any]]:
    """Shorthand ``{role, text}`` -> full envelopes, then the timestamp rule over the whole sequence.

    Returns new dicts (the input is not modified). Idempotent: expanding an expanded list changes
    nothing, so it is safe whether or not the loader already expanded.
    """
    expanded: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if _is_shorthand(message):
            text = message["text"] if isinstance(message["text"], str) else "\n".join(message["text"])
            expanded.append(
                {
                    "id": str(uuid.uuid4()),
                    "type": "llm",
                    "role": message["role"],
                    "content": [{"type": "text", "text": text}],
                    "createdAt": slot(index),
                }
            )
        else:
            expanded.append(copy.deepcopy(message))
    moment = now or datetime.now(UTC)
    stamps = [_parse_stamp(m.get("createdAt")) for m in expanded]
    present = [s for s in stamps if s is not None]
    keep = (
        len(present) == len(stamps)
        and all(s < moment for s in present)
        and all(a < b for a, b in itertools.pairwise(present))
    )
    for index, (message, stamp) in enumerate(zip(expanded, stamps, strict=True)):
        if not keep:
            message["createdAt"] = slot(index)
        elif stamp is not None and not isinstance(message.get("createdAt"), str):
            message["createdAt"] = _iso(stamp)  # epoch ms -> the ISO string the wire carries
    return expanded


# --- consistency ---------------------------------------------------------------------------------


def seed_problems(seed: schema.InlineSeed, *, messages: list[dict[str, Any]] | None = None) -> list[tuple[str, str]]:
    """``(json path within the seed, message)`` for every rule the remap depends on.

    A seeded ``build-workflow`` result must name a seeded workflow in ``output.workflowId`` (and a
    ``build-agent`` result a seeded agent in ``output.agentId``): otherwise the restored history
    would refer to a workflow that does not exist on the instance. Ids must be long enough to be
    replaced as whole strings without hitting unrelated text.
    """
    problems: list[tuple[str, str]] = []
    workflow_ids = [w.id for w in seed.workflows]
    agent_ids = [a.id for a in seed.agents]
    for kind, ids in (("workflows", workflow_ids), ("agents", agent_ids)):
        for index, seed_id in enumerate(ids):
            if len(seed_id) < MIN_REMAP_ID:
                problems.append(
                    (f"{kind}[{index}].id", f"{seed_id!r} is too short to remap safely (need ≥{MIN_REMAP_ID} chars)")
                )
    seen: set[str] = set()
    for kind, ids in (("workflows", workflow_ids), ("agents", agent_ids)):
        for index, seed_id in enumerate(ids):
            if seed_id in seen:
                problems.append((f"{kind}[{index}].id", f"{seed_id!r} is declared twice (one id space)"))
            seen.add(seed_id)
    source = messages if messages is not None else [m for m in seed.messages if isinstance(m, dict)]
    # The same rule the loader applies to a case file, so validate and restore never disagree.
    problems += build_result_problems(source, workflow_ids, agent_ids)
    return problems


def check_seed(seed: schema.InlineSeed, messages: list[dict[str, Any]], *, case: str | None = None) -> None:
    """Raise :class:`CaseSchemaError` listing every problem :func:`seed_problems` finds."""
    problems = seed_problems(seed, messages=messages)
    if problems:
        raise CaseSchemaError(
            [CaseProblem(file=case or "<case>", path=f"seed.{path}", message=msg, case=case) for path, msg in problems]
        )


# --- remap ---------------------------------------------------------------------------------------


def fresh_id(length: int = 16) -> str:
    """A new random id in n8n's style (letters and digits)."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def seed_tag(run_suffix: str) -> str:
    """The 8 characters of ``[seed xxxxxxxx]`` for a run suffix (hex digest when it is not 8 hex)."""
    if re.fullmatch(r"[0-9a-f]{8}", run_suffix):
        return run_suffix
    return hashlib.sha256(run_suffix.encode()).hexdigest()[:8]


def seeded_name(base: str, run_suffix: str) -> str:
    """``base [seed xxxxxxxx]``, the base shortened so the whole name fits in 128 characters."""
    suffix = f" [seed {seed_tag(run_suffix)}]"
    return base[: MAX_NAME - len(suffix)] + suffix


def seeded_name_pattern(base: str) -> re.Pattern[str]:
    """Matches the per-run name of ``base`` for any run (what leftover eviction looks for)."""
    suffix_len = len(" [seed xxxxxxxx]")
    return re.compile(re.escape(base[: MAX_NAME - suffix_len]) + r" \[seed [0-9a-f]{8}\]")


class RemappedSeed(BaseModel):
    """The seed as it will be restored for one run."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    workflows: list[dict[str, Any]]
    """Restore-request shape: ``{id, name, nodes, connections, published, parentFolderId?}``."""
    agents: list[dict[str, Any]]
    """Restore-request shape: ``{id, config, skills}``."""
    id_map: dict[str, str] = Field(default_factory=dict)
    """Seed id -> per-run id (workflows and agents)."""
    workflow_names: dict[str, str] = Field(default_factory=dict)
    """Seed workflow id -> per-run name."""
    name_map: dict[str, str] = Field(default_factory=dict)
    """Seed workflow name -> per-run name."""


def _replace_all(text: str, mapping: dict[str, str]) -> str:
    """Every key replaced by its value in one pass, longest key first where keys overlap."""
    if not mapping:
        return text
    pattern = re.compile("|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True)))
    return pattern.sub(lambda match: mapping[match.group(0)], text)


def _rewrite_names(value: Any, names: dict[str, str], *, in_text_block: bool = False) -> Any:
    """Name mentions rewritten in text blocks and ``workflowName`` fields only."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        is_text_block = value.get("type") == "text"
        for key, item in value.items():
            if key == "workflowName" and isinstance(item, str):
                out[key] = names.get(item, _replace_all(item, names))
            elif key == "text" and is_text_block and isinstance(item, str):
                out[key] = _replace_all(item, names)
            elif key in ("input", "output", "args", "result", "nodes"):
                # Tool payloads and node JSON keep their text; only workflowName fields follow.
                out[key] = _rewrite_workflow_name_fields(item, names)
            else:
                out[key] = _rewrite_names(item, names)
        return out
    if isinstance(value, list):
        return [_rewrite_names(item, names) for item in value]
    return value


def _rewrite_workflow_name_fields(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            key: names.get(item, item)
            if key == "workflowName" and isinstance(item, str)
            else _rewrite_workflow_name_fields(item, names)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_rewrite_workflow_name_fields(item, names) for item in value]
    return value


def _retarget_agent_tools(config: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    # An agent's workflow tool targets a workflow by display name: follow the rename.
    tools = config.get("tools")
    if not isinstance(tools, list):
        return config
    retargeted = []
    for tool in tools:
        if isinstance(tool, dict) and tool.get("type") == "workflow":
            tool = {
                k: names.get(v, v) if k in ("workflow", "workflowName") and isinstance(v, str) else v
                for k, v in tool.items()
            }
        retargeted.append(tool)
    return {**config, "tools": retargeted}


def remap_seed(
    seed: schema.InlineSeed,
    messages: list[dict[str, Any]],
    *,
    run_suffix: str,
    new_id: Callable[[], str] = fresh_id,
) -> RemappedSeed:
    """Fresh ids and per-run names for one run of ``seed`` (``messages`` already expanded)."""
    seed_ids = [w.id for w in seed.workflows] + [a.id for a in seed.agents]
    id_map = {seed_id: new_id() for seed_id in seed_ids}
    workflows = [
        {
            "id": w.id,
            "name": w.name,
            "nodes": w.nodes,
            "connections": w.connections,
            "published": w.published,
        }
        for w in seed.workflows
    ]
    # parentFolderId is held out of the replace: folder ids belong to the server's own remap.
    folders_of = [w.parent_folder_id for w in seed.workflows]
    agents = [{"id": a.id, "config": a.config, "skills": a.skills} for a in seed.agents]
    escaped = {json.dumps(k)[1:-1]: json.dumps(v)[1:-1] for k, v in id_map.items()}
    blob = _replace_all(json.dumps({"m": messages, "w": workflows, "a": agents}), escaped)
    remapped = json.loads(blob)
    name_map = {w.name: seeded_name(w.name, run_suffix) for w in seed.workflows}
    out_workflows = []
    for workflow, folder in zip(remapped["w"], folders_of, strict=True):
        workflow["name"] = name_map.get(workflow["name"], workflow["name"])
        if folder is not None:
            workflow["parentFolderId"] = folder
        out_workflows.append(workflow)
    out_messages = [_rewrite_names(m, name_map) for m in remapped["m"]]
    out_agents = [{**a, "config": _retarget_agent_tools(a["config"], name_map)} for a in remapped["a"]]
    return RemappedSeed(
        messages=out_messages,
        workflows=out_workflows,
        agents=out_agents,
        id_map=id_map,
        workflow_names={w.id: name_map[w.name] for w in seed.workflows},
        name_map=name_map,
    )
