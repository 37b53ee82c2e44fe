"""Agent checks on hand-built records: each passes on a clean seeded edit and fails (quoting the evidence)
on a broken one; with no agent read back they are not judged, never passed."""

from __future__ import annotations

import copy
from typing import Any

from tests.grading.records import case
from threadcase.case import schema
from threadcase.grading.checks import run_checks
from threadcase.records import AgentArtifact, Artifacts, RunRecord, SeedOutcome, ToolCallRecord, Turn
from threadcase.verdicts import UnitVerdict

SEED_ID = "agent-ops-helper-01"
RUN_ID = "run-agent-7f3a"
SKILLS: dict[str, dict[str, Any]] = {
    "alerts": {"name": "Alerts", "description": "Use for incident alerts.", "instructions": "Post incidents to #ops."},
    "billing": {
        "name": "Billing",
        "description": "Use for invoices.",
        "instructions": "Billing stays exactly as written.",
    },
    "handover": {
        "name": "Handover",
        "description": "Use at shift change.",
        "instructions": "Summarise open incidents.",
    },
}
CONFIG: dict[str, Any] = {
    "name": "Ops Helper",
    "model": "anthropic/claude-sonnet-4-5",
    "instructions": "Help the operations team.",
    "skills": [{"type": "skill", "id": sid} for sid in SKILLS],
    "tools": [],
}
CHECKS: dict[str, Any] = {
    "agentSkillsUnchanged": ["billing", "handover"],
    "agentSkillsChanged": ["alerts"],
    "agentSkillsPresent": ["alerts", "Handover"],
    "agentSkillsAbsent": ["refunds"],
    "agentInstructionsContain": ["operations team"],
    "agentSkillContains": [{"skill": "alerts", "contains": "on-call engineer"}],
}


def seeded_case(checks: dict[str, Any] | None = None, *, attach: bool = True) -> schema.Case:
    opening: dict[str, Any] = {"role": "user", "text": "Change the Alerts skill to page the on-call engineer"}
    if attach:
        opening["attach"] = {"agent": SEED_ID}
    return case(
        conversation=[opening],
        seed={"mode": "inline", "agents": [{"id": SEED_ID, "config": CONFIG, "skills": SKILLS}]},
        checks=CHECKS if checks is None else checks,
    )


def edited_agent() -> AgentArtifact:
    skills = copy.deepcopy(SKILLS)
    skills["alerts"]["instructions"] = "Page the on-call engineer for P1 incidents."
    return AgentArtifact(id=RUN_ID, config=copy.deepcopy(CONFIG), skills=skills)


def record(*agents: AgentArtifact, calls: list[ToolCallRecord] | None = None) -> RunRecord:
    turns = [
        Turn(index=0, role="user", text="[attached agent: Ops Helper]\nChange the Alerts skill"),
        Turn(index=1, role="assistant", text="Updated the Alerts skill.", tool_calls=calls or []),
    ]
    return RunRecord(
        case_slug="seeded-agent",
        thread_id="t-1",
        mode="single-prompt",
        turns=turns,
        artifacts=Artifacts(agents=list(agents)),
        seed=SeedOutcome(mode="inline", id_map={SEED_ID: RUN_ID}),
    )


def grade(rec: RunRecord, checks: dict[str, Any] | None = None, *, attach: bool = True) -> dict[str, UnitVerdict]:
    return {v.unit: v for v in run_checks(seeded_case(checks, attach=attach), rec)}


def test_a_clean_in_place_edit_passes_every_agent_check_with_evidence() -> None:
    verdicts = grade(record(edited_agent()))
    checks = seeded_case().checks
    assert checks is not None
    assert list(verdicts) == checks.unit_keys()
    assert {u: v.status for u, v in verdicts.items() if v.status != "pass"} == {}
    assert "identical to the seed" in verdicts["check:agentSkillsUnchanged#0"].reason
    changed = verdicts["check:agentSkillsChanged#0"].reason
    assert "instructions was 'Post incidents to #ops.', now 'Page the on-call engineer for P1 incidents.'" in changed
    assert "Page the on-call engineer" in changed
    assert "Handover" in verdicts["check:agentSkillsPresent#1"].reason
    assert "attached agent 'Ops Helper'" in verdicts["check:agentInstructionsContain#0"].reason


def test_an_untouched_skill_that_changed_fails_naming_the_field_and_the_difference() -> None:
    agent = edited_agent()
    agent.skills["billing"]["instructions"] = "Billing stays roughly as written."
    verdict = grade(record(agent))["check:agentSkillsUnchanged#0"]
    assert verdict.status == "fail"
    assert verdict.attribution == "builder_issue"
    assert "skill 'billing' of agent 'Ops Helper' changed: instructions was" in verdict.reason
    assert "exactly as written" in verdict.reason
    assert "roughly as written" in verdict.reason


def test_a_whitespace_only_change_or_an_added_field_is_a_change() -> None:
    agent = edited_agent()
    agent.skills["billing"]["instructions"] += " "
    agent.skills["handover"]["references"] = ["runbook"]
    verdicts = grade(record(agent))
    assert verdicts["check:agentSkillsUnchanged#0"].status == "fail"
    assert (
        "was …'ling stays exactly as written.', now …'ling stays exactly as written. '"
        in verdicts["check:agentSkillsUnchanged#0"].reason
    )
    assert verdicts["check:agentSkillsUnchanged#1"].status == "fail"
    assert "references was added" in verdicts["check:agentSkillsUnchanged#1"].reason


def test_a_removed_or_unlisted_skill_fails_unchanged_and_present() -> None:
    agent = edited_agent()
    del agent.skills["billing"]
    agent.config["skills"] = [s for s in agent.config["skills"] if s["id"] != "handover"]
    verdicts = grade(record(agent), {**CHECKS, "agentSkillsPresent": ["handover"]})
    assert verdicts["check:agentSkillsUnchanged#0"].status == "fail"
    assert "was removed from agent 'Ops Helper': it has no body" in verdicts["check:agentSkillsUnchanged#0"].reason
    assert "no longer lists it in config.skills" in verdicts["check:agentSkillsUnchanged#1"].reason
    present = verdicts["check:agentSkillsPresent#0"]
    assert present.status == "fail"
    assert "its skills: alerts (Alerts)" in present.reason


def test_an_edit_that_never_landed_fails_changed_and_skill_contains() -> None:
    untouched = AgentArtifact(id=RUN_ID, config=copy.deepcopy(CONFIG), skills=copy.deepcopy(SKILLS))
    verdicts = grade(record(untouched))
    assert verdicts["check:agentSkillsUnchanged#0"].status == "pass"
    changed = verdicts["check:agentSkillsChanged#0"]
    assert changed.status == "fail"
    assert "still exactly as seeded" in changed.reason
    contains = verdicts["check:agentSkillContains#0"]
    assert contains.status == "fail"
    assert "Post incidents to #ops." in contains.reason


def test_absent_and_instructions_fail_on_a_broken_agent() -> None:
    agent = edited_agent()
    agent.config["instructions"] = "Help everyone."
    agent.config["skills"].append({"type": "skill", "id": "refunds"})
    agent.skills["refunds"] = {"name": "Refunds", "instructions": "Refund anything."}
    verdicts = grade(record(agent), {**CHECKS, "agentSkillsAbsent": ["REFUNDS"]})
    assert verdicts["check:agentSkillsAbsent#0"].status == "fail"
    assert "has skill refunds (Refunds)" in verdicts["check:agentSkillsAbsent#0"].reason
    instructions = verdicts["check:agentInstructionsContain#0"]
    assert instructions.status == "fail"
    assert '"Help everyone."' in instructions.reason


def test_no_agent_read_back_is_not_judged_never_passed() -> None:
    for attach in (True, False):
        verdicts = grade(record(), attach=attach)
        assert {v.status for v in verdicts.values()} == {"not_judged"}, attach
        assert all(v.reason for v in verdicts.values())
    assert "was not read back" in grade(record())["check:agentSkillsPresent#0"].reason
    assert "neither built, edited nor read one" in grade(record(), attach=False)["check:agentSkillsPresent#0"].reason
    assert "was not read back" in grade(record())["check:agentSkillsUnchanged#0"].reason


def test_a_seed_that_was_not_restored_is_a_framework_issue() -> None:
    rec = record(edited_agent())
    rec.seed = SeedOutcome(mode="inline", restored=False, error="restore answered 500")
    verdict = grade(rec)["check:agentSkillsUnchanged#0"]
    assert verdict.status == "not_judged"
    assert verdict.attribution == "framework_issue"


def test_a_rebuilt_agent_does_not_count_as_the_attached_one() -> None:
    """Rebuilding instead of editing: the attached seed agent is untouched, a new agent holds the change."""
    seeded = AgentArtifact(id=RUN_ID, config=copy.deepcopy(CONFIG), skills=copy.deepcopy(SKILLS))
    rebuilt = edited_agent().model_copy(update={"id": "new-agent-1"})
    verdicts = grade(record(seeded, rebuilt))
    assert verdicts["check:agentSkillsChanged#0"].status == "fail"
    assert verdicts["check:agentSkillContains#0"].status == "fail"


def test_without_attach_the_final_agent_is_the_one_build_agent_saved_last() -> None:
    other = AgentArtifact(id="other-agent", config={"name": "Other", "instructions": "x"}, skills={})
    saved = ToolCallRecord(tool_call_id="c1", tool_name="build-agent", args={"agentId": RUN_ID}, result={"ok": True})
    read = ToolCallRecord(tool_call_id="c2", tool_name="get-agent", args={"agentId": "other-agent"}, result={})
    verdicts = grade(record(edited_agent(), other, calls=[saved, read]), attach=False)
    assert verdicts["check:agentSkillsPresent#0"].status == "pass"
    assert "saved last" in verdicts["check:agentSkillsPresent#0"].reason
    # With no build-agent call, the last agent read back is the final one.
    verdicts = grade(record(edited_agent(), other, calls=[read]), attach=False)
    assert verdicts["check:agentSkillsPresent#0"].status == "fail"
    assert "agent 'Other' has no skill" in verdicts["check:agentSkillsPresent#0"].reason


def test_a_seeded_skill_check_on_a_case_without_that_seed_skill_is_not_judged() -> None:
    """The loader refuses it; a case assembled around the loader must still never pass for free."""
    bare = case(checks={"mustContain": ["x"]})
    checks = schema.Checks.model_validate({"agentSkillsUnchanged": ["billing"]})
    verdicts = run_checks(bare.model_copy(update={"checks": checks}), record(edited_agent()))
    assert [v.status for v in verdicts] == ["not_judged"]
    assert "no seed agent declares the skill 'billing'" in verdicts[0].reason
