"""A second batch of behaviour cases, written in words the demo was never tuned on (``tests/cases/behaviour``).

Seeded edits, rules under pressure and several changes in one message, phrased the way a team writes
them: prose instead of lists, insistence without "just do it", a workflow named in passing. Every case
is green on the clean demo agent and red under the misbehaviour it exists for, through structural
checks (identity in place, parameters, tool arguments) or a generic transcript rule — never through
the demo's own sentences.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.demo_suite import demo_settings, red_units
from threadcase.demo_instance.agent import misbehave as mb
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.report import run_and_report

SUITE = Path(__file__).resolve().parents[1] / "cases" / "behaviour"

_IDENTITY = {"check:workflowsEditedInPlace#0", "check:maxNewWorkflows"}

# The misbehaviour each family exists for -> for each of its cases, exactly the units that turn red.
RED: dict[str, dict[str, set[str]]] = {
    mb.REBUILDS_INSTEAD_OF_EDIT: {
        "seeded-webhook-channel-attached": {*_IDENTITY, "check:nodeParameters#0"},
        "seeded-threshold-by-name-with-decoy": {*_IDENTITY, "check:nodeParameters#0"},
        "seeded-add-email-step-attached": {*_IDENTITY, "check:nodeParameters#0"},
        "seeded-schedule-by-name": {*_IDENTITY, "check:nodeParameters#0"},
        "seeded-rename-attached": _IDENTITY,
    },
    mb.CAVES_UNDER_PRESSURE: {
        "pressure-slack-token-demo-deadline": {
            "check:transcriptRules:no-slack-token-in-node",
            "check:nodeParameters#0",
            "check:toolArguments#0",
        },
        "pressure-password-in-url": {
            "check:transcriptRules:no-password-in-url",
            "check:nodeParameters#0",
            "check:toolArguments#0",
        },
        "pressure-vendor-key-header": {
            "check:transcriptRules:no-key-in-header",
            "check:nodeParameters#0",
            "check:toolArguments#0",
        },
        "pressure-required-alerts-noisy": {
            "check:transcriptRules:required-error-handling-kept",
            "check:nodeParameters#0",
            "check:nodeTypesPresent#0",
        },
    },
    mb.DROPS_CHANGE: {
        "changes-prose-channel-and-time": {"check:nodeParameters#0"},
        "changes-commas-three-in-a-row": {"check:nodeParameters#3"},
        "changes-dashed-list-with-rename": {"check:nodeParameters#1"},
        "changes-same-time-other-day": {"check:nodeParameters#2"},
    },
}


def _settings(tmp_path: Path, **kwargs: object) -> RunSettings:
    return demo_settings(SUITE, tmp_path, **kwargs)


def test_every_case_belongs_to_one_family() -> None:
    slugs = {path.stem for path in SUITE.glob("*.json")}
    families = [set(cases) for cases in RED.values()]
    assert set().union(*families) == slugs
    assert sum(len(f) for f in families) == len(slugs)


@pytest.mark.anyio
async def test_the_batch_is_green_on_the_clean_demo_agent(tmp_path: Path) -> None:
    summary = await run_and_report(_settings(tmp_path))
    results = read_journal(tmp_path / "journal.jsonl")
    failing = {r.case_slug: [v.reason for v in r.verdicts if v.status == "fail"] for r in results}
    assert all(r.status == "pass" for r in results), {k: v for k, v in failing.items() if v}
    assert summary.exit_code == 0
    # Each check was exercised: nothing the families rely on is quietly not judged.
    unexercised = [
        (r.case_slug, v.unit, v.reason)
        for r in results
        for v in r.verdicts
        if v.kind == "check" and v.status == "not_judged"
    ]
    assert unexercised == []


@pytest.mark.anyio
@pytest.mark.parametrize("misbehaviour", sorted(RED))
async def test_each_family_turns_red_under_its_misbehaviour(tmp_path: Path, misbehaviour: str) -> None:
    await run_and_report(_settings(tmp_path, demo_misbehave=[misbehaviour]))
    red = red_units(tmp_path)
    family = RED[misbehaviour]
    assert {slug: red.get(slug, set()) for slug in family} == family
