"""The golden seeded agent edit on the real demo instance: the agent checks pass on the clean demo agent
and catch an agent that rebuilds instead of editing, or claims an edit it never saved."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.conversation.helpers import drive
from threadcase.case.loader import load_case_file
from threadcase.demo_instance import DemoSettings
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.grading import grade_case
from threadcase.models import ModelSettings
from threadcase.verdicts import UnitVerdict

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden" / "seeded-agent-skill-edit.json"
AGENT_UNITS = ("agentSkillsUnchanged", "agentSkillsChanged", "agentSkillsPresent", "agentSkillContains")


async def _checks(agent: Any = None, misbehave: frozenset[str] = frozenset()) -> dict[str, UnitVerdict]:
    case = load_case_file(GOLDEN).case
    out = await drive(case, agent=agent, settings=DemoSettings(misbehave=misbehave))
    grading = await grade_case(case, out.record, client=None, models=ModelSettings())
    return {v.unit: v for v in grading.verdicts if v.kind == "check"}


def _checks_by_kind(checks: dict[str, UnitVerdict]) -> dict[str, UnitVerdict]:
    return {u: v for u, v in checks.items() if u.split(":")[1].split("#")[0] in AGENT_UNITS}


def _attached(turn: TurnInput) -> str:
    return next(str(a["id"]) for a in turn.attachments if a.get("type") == "agent")


async def rebuilding_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Reads the attached agent, then saves the edited copy as a brand-new agent (no ``agentId``)."""
    current = await ctx.call_tool("get-agent", {"agentId": _attached(turn)})
    skills = copy.deepcopy(current["skills"])
    skills["alerts"]["instructions"] = "Page the on-call engineer for P1 incidents."
    await ctx.call_tool("build-agent", {"config": current["config"], "skills": skills})
    await ctx.say("Updated the Alerts skill; the other skills are unchanged.")


async def claiming_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Reads the attached agent and says it updated it, but never saves."""
    await ctx.call_tool("get-agent", {"agentId": _attached(turn)})
    await ctx.say("Updated the Alerts skill; the other skills are unchanged.")


async def test_the_golden_agent_edit_passes_every_agent_check_on_the_clean_demo_agent() -> None:
    checks = _checks_by_kind(await _checks())
    assert checks, "the golden case declares agent checks"
    assert {u: v.status for u, v in checks.items() if v.status != "pass"} == {}
    assert "on-call engineer" in checks["check:agentSkillsChanged#0"].reason


async def test_the_rebuild_misbehaviour_leaves_agent_edits_alone() -> None:
    """rebuilds-instead-of-edit is a workflow defect in the demo agent; agent skill edits stay in place."""
    checks = _checks_by_kind(await _checks(misbehave=frozenset({"rebuilds-instead-of-edit"})))
    assert {v.status for v in checks.values()} == {"pass"}


async def test_rebuilding_instead_of_editing_the_agent_fails() -> None:
    checks = await _checks(rebuilding_agent)
    assert checks["check:agentSkillsUnchanged#0"].status == "pass"  # the seeded agent was left alone...
    assert checks["check:agentSkillsChanged#0"].status == "fail"  # ...so the asked-for edit never reached it
    assert "still exactly as seeded" in checks["check:agentSkillsChanged#0"].reason
    assert checks["check:agentSkillContains#0"].status == "fail"


async def test_claiming_an_edit_that_was_never_saved_fails() -> None:
    """Needs the collection fix: the agent only read the seeded agent, so it is read back all the same."""
    checks = await _checks(claiming_agent)
    assert checks["check:agentSkillsChanged#0"].status == "fail"
    assert checks["check:agentSkillsUnchanged#0"].status == "pass"
