"""The seed-removed control: the same case with its seed dropped, and what of it needs the seed.

Seed 003's advice to case authors — run a seeded case once with the seed removed, and if it still
passes, the seed proves nothing — done by the tool (``threadcase control``). :func:`without_seed`
returns a valid case with no seed, or says that the case cannot run without it. Whatever only makes
sense with the seed is taken out and named, never left to crash or to fail for the wrong reason:

- ``conversation[0].attach`` (it hands over a seeded workflow or agent): the opening turn is sent
  without the hand-off; an opening that *is* only the hand-off (no text) needs the seed;
- checks that name a seeded workflow or a seeded agent's skill (``workflowsEditedInPlace``,
  ``workflowsUnchanged``, ``agentSkillsUnchanged``, ``agentSkillsChanged``, and ``nodeParameters`` /
  ``nodeCredentials`` scoped to a seeded workflow by its id or name): their units need the seed;
- a replay seed: the live turn is the trace's own last user message, so the case needs the seed.

Unit ids do not move: a family taken out is taken out whole (the schema lets every entry of those
families name only the seed), and a scoped entry is kept in place with its verdict not counted.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from threadcase.case.loader import parse_case
from threadcase.case.schema import Case, InlineSeed
from threadcase.errors import CaseSchemaError

__all__ = ["SeedRemoval", "unit_ids", "without_seed"]


@dataclasses.dataclass(frozen=True)
class SeedRemoval:
    """A case with its seed dropped: the case to run, or why none can run."""

    case: Case | None
    """The case without its seed; None when nothing of it can run without the seed (see ``reason``)."""
    reason: str | None = None
    """Why the whole case needs the seed (``case`` is None)."""
    needs_seed: dict[str, str] = dataclasses.field(default_factory=dict)
    """Unit (as in the case as written) -> why it needs the seed; such units are not run, or not counted."""
    dropped: list[str] = dataclasses.field(default_factory=list)
    """What was taken out, as JSON paths of the case file (``seed``, ``conversation[0].attach``, ...)."""


_NAMED_SEED_WORKFLOWS = (
    ("workflowsEditedInPlace", "check:workflowsEditedInPlace"),
    ("workflowsUnchanged", "check:workflowsUnchanged"),
)
_NAMED_SEED_SKILLS = (
    ("agentSkillsUnchanged", "check:agentSkillsUnchanged"),
    ("agentSkillsChanged", "check:agentSkillsChanged"),
)
_SCOPED_TO_A_WORKFLOW = (("nodeParameters", "check:nodeParameters"), ("nodeCredentials", "check:nodeCredentials"))


def without_seed(case: Case, *, slug: str = "<case>") -> SeedRemoval | None:
    """``case`` with its seed dropped (see the module docstring); None for a case that has no seed."""
    if case.seed is None:
        return None
    if not isinstance(case.seed, InlineSeed):
        return SeedRemoval(
            case=None,
            reason="a replay case's live turn is its trace's last user message: without the trace there is none",
        )
    seed = case.seed
    document: dict[str, Any] = case.model_dump(mode="json", by_alias=True, exclude_unset=True)
    document.pop("seed", None)
    dropped = ["seed"]
    opening = document.get("conversation", [{}])[0]
    if "attach" in opening:
        if not str(opening.get("text", "")).strip():
            return SeedRemoval(
                case=None, reason="the opening turn is only the hand-off of a seeded workflow or agent (no text)"
            )
        del opening["attach"]
        dropped.append("conversation[0].attach")

    needs_seed: dict[str, str] = {}
    checks: dict[str, Any] = document.get("checks") or {}
    workflow_ids = {w.id for w in seed.workflows}
    workflow_names = {w.name.casefold(): w.id for w in seed.workflows}
    for families, what in (
        (_NAMED_SEED_WORKFLOWS, "the seeded workflow"),
        (_NAMED_SEED_SKILLS, "the seeded agent's skill"),
    ):
        for key, unit in families:
            refs = checks.pop(key, None) or []
            if refs:
                dropped.append(f"checks.{key}")
            for index, ref in enumerate(refs):
                needs_seed[f"{unit}#{index}"] = f"checks.{key}[{index}] names {what} {ref!r}"
    for key, unit in _SCOPED_TO_A_WORKFLOW:
        for index, entry in enumerate(checks.get(key) or []):
            scope = entry.get("workflow")
            if isinstance(scope, str) and (scope in workflow_ids or scope.casefold() in workflow_names):
                # Kept, so the other entries keep their numbers; its verdict is not counted.
                needs_seed[f"{unit}#{index}"] = f"checks.{key}[{index}] reads the seeded workflow {scope!r}"
    if "checks" in document and not checks:
        del document["checks"]

    if all(unit in needs_seed for unit in unit_ids(case)):
        return SeedRemoval(case=None, reason="every unit reads what the seed restored", needs_seed=needs_seed)
    try:
        stripped = parse_case(document, file=f"{slug} (seed removed)", slug=slug)
    except CaseSchemaError as exc:
        first = exc.problems[0]
        where = f"{first.path}: " if first.path else ""
        return SeedRemoval(case=None, reason=f"without the seed the case is not valid ({where}{first.message})")
    return SeedRemoval(case=stripped, needs_seed=needs_seed, dropped=dropped)


def unit_ids(case: Case) -> list[str]:
    """Every unit id of ``case``, families in a fixed order (checks keep their own order within a family)."""
    units = [f"process#{i}" for i in range(len(case.process_expectations))]
    units += [f"outcome#{i}" for i in range(len(case.outcome_expectations))]
    units += [f"scenario:{s.name}" for s in case.execution_scenarios]
    units += case.checks.unit_keys() if case.checks is not None else []
    return units
