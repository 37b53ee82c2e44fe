"""Load-time rules of the agent checks: seeded-skill checks name declared skills, no entry contradicts
another, and every entry is one unit with the grader's id."""

from __future__ import annotations

from typing import Any

from tests.test_schema import problems
from threadcase.case.loader import parse_case


def seeded(checks: dict[str, Any], *, agents: bool = True) -> dict[str, Any]:
    skills = {"alerts": {"name": "Alerts", "instructions": "Post to #ops."}, "billing": {"name": "Billing"}}
    agent = {
        "id": "agent-ops-helper-01",
        "config": {
            "name": "Ops Helper",
            "model": "",
            "instructions": "Help.",
            "skills": [{"type": "skill", "id": sid} for sid in skills],
        },
        "skills": skills,
    }
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": "Change the Alerts skill"}],
        "complexity": "simple",
        "tags": ["agents"],
        "checks": checks,
    }
    if agents:
        data["seed"] = {"mode": "inline", "agents": [agent]}
    return data


def test_seeded_skill_checks_must_name_a_declared_skill() -> None:
    found = problems(seeded({"agentSkillsUnchanged": ["billing", "biling"], "agentSkillsChanged": ["refunds"]}))
    assert found == [
        (
            "checks.agentSkillsUnchanged[1]",
            "'biling' is not a skill id of any seed agent (declared: 'alerts', 'billing'); "
            "list ids from seed.agents[].skills",
        ),
        (
            "checks.agentSkillsChanged[0]",
            "'refunds' is not a skill id of any seed agent (declared: 'alerts', 'billing'); "
            "list ids from seed.agents[].skills",
        ),
    ]


def test_seeded_skill_checks_without_seeded_agents_say_what_they_need() -> None:
    [(path, message)] = problems(seeded({"agentSkillsUnchanged": ["billing"]}, agents=False))
    assert path == "checks.agentSkillsUnchanged[0]"
    assert "(none declared); this check needs an inline seed whose agents declare skills" in message


def test_a_skill_cannot_be_both_changed_and_unchanged_nor_present_and_absent() -> None:
    found = problems(
        seeded(
            {
                "agentSkillsUnchanged": ["alerts"],
                "agentSkillsChanged": ["alerts"],
                "agentSkillsPresent": ["Billing"],
                "agentSkillsAbsent": ["Billing"],
            }
        )
    )
    assert (
        "checks.agentSkillsChanged[0]",
        "'alerts' is also in checks.agentSkillsUnchanged; it cannot be both",
    ) in found
    assert ("checks.agentSkillsAbsent[0]", "'Billing' is also in checks.agentSkillsPresent; it cannot be both") in found


def test_blank_entries_and_snake_case_keys_are_refused() -> None:
    assert any(
        p == "checks.agentSkillsPresent" and "blank" in m for p, m in problems(seeded({"agentSkillsPresent": [" "]}))
    )
    found = problems(seeded({"agentSkillContains": [{"skill": "alerts", "contains": ""}]}))
    assert any(p == "checks.agentSkillContains[0].contains" and "blank" in m for p, m in found)
    found = problems(seeded({"agentSkillContains": [{"skill": "alerts", "text": "x"}]}))
    assert any(p.startswith("checks.agentSkillContains[0]") for p, _ in found)
    assert any(
        p == "checks.agent_skills_unchanged" for p, _ in problems(seeded({"agent_skills_unchanged": ["alerts"]}))
    )


def test_agent_checks_are_units_with_the_graders_ids() -> None:
    checks = {
        "agentSkillsUnchanged": ["billing"],
        "agentSkillsChanged": ["alerts"],
        "agentSkillsPresent": ["Alerts", "billing"],
        "agentSkillsAbsent": ["refunds"],
        "agentInstructionsContain": ["operations"],
        "agentSkillContains": [{"skill": "alerts", "contains": "on-call"}],
    }
    case = parse_case(seeded(checks))
    assert case.checks is not None
    assert case.checks.unit_keys() == [
        "check:agentSkillsUnchanged#0",
        "check:agentSkillsChanged#0",
        "check:agentSkillsPresent#0",
        "check:agentSkillsPresent#1",
        "check:agentSkillsAbsent#0",
        "check:agentInstructionsContain#0",
        "check:agentSkillContains#0",
    ]
    assert case.unit_count == 7  # a case graded by agent checks alone is valid
    assert case.checks.agent_skill_contains[0].contains == "on-call"
