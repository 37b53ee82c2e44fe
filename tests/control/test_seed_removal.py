"""Dropping a case's seed: a valid case without it, or "needs the seed" — never a crash."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from threadcase.case.loader import load_suite, parse_case
from threadcase.case.seed_removal import unit_ids, without_seed

ROOT = Path(__file__).resolve().parents[2]
SUITES = [ROOT / "cases" / "golden", ROOT / "tests" / "cases" / "behaviour", ROOT / "tests" / "cases" / "valid"]

WORKFLOW: dict[str, Any] = {
    "id": "wf-ledger-close-09",
    "name": "Ledger close reminder",
    "nodes": [
        {
            "name": "Slack",
            "type": "n8n-nodes-base.slack",
            "typeVersion": 2.2,
            "position": [0, 0],
            "parameters": {"channel": "#finance-close", "text": "Close the ledger"},
        }
    ],
    "connections": {},
}


def _case(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "complexity": "simple",
        "tags": ["t"],
        "seed": {"mode": "inline", "workflows": [copy.deepcopy(WORKFLOW)]},
        "conversation": [{"role": "user", "text": "Send the close reminder to #finance-leads instead"}],
        "checks": {"maxNewWorkflows": 0},
    }
    document.update(overrides)
    return document


def test_a_case_without_a_seed_has_nothing_to_remove() -> None:
    case = parse_case(
        {
            "complexity": "simple",
            "tags": [],
            "conversation": [{"role": "user", "text": "hi"}],
            "checks": {"maxLines": 3},
        }
    )
    assert without_seed(case) is None


def test_the_seed_and_the_hand_off_go_and_the_checks_that_name_the_seed_need_it() -> None:
    case = parse_case(
        _case(
            conversation=[
                {"role": "user", "text": "Move this to #finance-leads", "attach": {"workflow": "wf-ledger-close-09"}}
            ],
            checks={
                "workflowsEditedInPlace": ["wf-ledger-close-09"],
                "nodeParameters": [
                    {"node": "Slack", "path": "channel", "contains": "#"},
                    {
                        "workflow": "Ledger close reminder",
                        "node": "Slack",
                        "path": "channel",
                        "equals": "#finance-leads",
                    },
                ],
                "maxNewWorkflows": 0,
            },
            processExpectations=["The agent edits the workflow it was handed"],
        )
    )
    removal = without_seed(case, slug="ledger")
    assert removal is not None
    assert removal.case is not None
    assert removal.case.seed is None
    assert removal.case.conversation[0].attach is None
    assert removal.case.conversation[0].text == "Move this to #finance-leads"
    assert removal.dropped == ["seed", "conversation[0].attach", "checks.workflowsEditedInPlace"]
    assert set(removal.needs_seed) == {"check:workflowsEditedInPlace#0", "check:nodeParameters#1"}
    assert "Ledger close reminder" in removal.needs_seed["check:nodeParameters#1"]
    # The units that are left keep their ids: nothing moved.
    assert set(unit_ids(removal.case)) == set(unit_ids(case)) - {"check:workflowsEditedInPlace#0"}


def test_an_opening_that_is_only_the_hand_off_needs_the_seed() -> None:
    case = parse_case(_case(conversation=[{"role": "user", "text": "", "attach": {"workflow": "wf-ledger-close-09"}}]))
    removal = without_seed(case)
    assert removal is not None
    assert removal.case is None
    assert removal.reason is not None
    assert "only the hand-off" in removal.reason


def test_a_case_whose_every_unit_reads_the_seed_needs_it() -> None:
    case = parse_case(_case(checks={"workflowsUnchanged": ["Ledger close reminder"]}))
    removal = without_seed(case)
    assert removal is not None
    assert removal.case is None
    assert removal.reason == "every unit reads what the seed restored"
    assert set(removal.needs_seed) == {"check:workflowsUnchanged#0"}


def test_a_replay_case_needs_its_trace() -> None:
    case = parse_case(
        {
            "complexity": "simple",
            "tags": [],
            "datasets": ["seeded"],
            "seed": {"mode": "replay", "threadId": "t-1"},
            "checks": {"maxLines": 4},
        }
    )
    removal = without_seed(case)
    assert removal is not None
    assert removal.case is None
    assert removal.reason is not None
    assert "trace" in removal.reason


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: p.name)
def test_every_seeded_case_we_ship_drops_its_seed_cleanly(suite: Path) -> None:
    for loaded in load_suite([suite]):
        removal = without_seed(loaded.case, slug=loaded.slug)
        if removal is None:
            continue
        assert removal.case is not None or removal.reason, loaded.slug
        if removal.case is not None:
            assert removal.case.seed is None
            assert not set(removal.needs_seed) - set(unit_ids(loaded.case)), loaded.slug
