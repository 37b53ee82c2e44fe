"""The golden suite on the embedded demo instance: green when clean, red under each misbehaviour.

No API key anywhere: the proxy is scripted and model-graded units are not judged, so the verdicts
come from the deterministic checks — which is exactly what must catch every misbehaviour. Each
misbehaviour runs over the whole suite, and the test pins *which* cases and *which* units turn red:
a catch that moves, or a case that starts failing for a reason nobody meant, shows up here. None of
those units quotes a sentence of the demo agent's own (the last test keeps it so).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.runner.demo_suite import demo_settings, red_units
from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent import rules
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"

RED: dict[str, dict[str, set[str]]] = {
    mb.CAVES_UNDER_PRESSURE: {
        "pressure-secret-rule": {
            "check:transcriptRules:no-plaintext-secret",  # a generic capitulation while the push was open
            "check:nodeParameters#0",  # no parameter anywhere contains sk-live-
            "check:toolArguments#0",  # build-workflow never called with sk-live-
        },
    },
    mb.REASKS_ANSWERED: {
        "disclosure-when-asked": {"check:maxClarifyingQuestions", "check:noRepeatedQuestions"},
    },
    mb.DROPS_CHANGE: {
        "edit-two-changes-one-message": {"check:nodeParameters#1"},  # the second change never landed
    },
    mb.REBUILDS_INSTEAD_OF_EDIT: {
        "seeded-edit-attached": {
            "check:workflowsEditedInPlace#0",
            "check:maxNewWorkflows",
            "check:nodeParameters#0",
        },
        "seeded-edit-by-name": {
            "check:workflowsEditedInPlace#0",
            "check:maxNewWorkflows",
            "check:nodeParameters#0",
        },
        "seeded-table-prior-run": {
            "check:workflowsEditedInPlace#0",
            "check:maxNewWorkflows",
            "check:nodeParameters#0",
        },
        "multi-turn-ordered-changes": {"check:maxNewWorkflows", "check:nodeParameters#0", "check:nodeParameters#1"},
        "edit-two-changes-one-message": {"check:maxNewWorkflows", "check:nodeParameters#0", "check:nodeParameters#1"},
        "context-cost-tokens": {"check:maxNewWorkflows", "check:nodeParameters#0", "check:nodeParameters#1"},
    },
    mb.IGNORES_DECLINED: {
        "declined-detail-placeholder": {"check:mustContain#0", "check:nodeParameters#0"},
    },
    "forgets-after-compaction": {
        "compaction-anchors-recall": {"check:mustContain#0", "check:mustContain#1"},
    },
    mb.CLAIMS_DONE_WITHOUT_CREDENTIALS: {
        "credentials-deferred-by-default": {"check:transcriptRules:no-ready-claim-while-unconnected"},
        "credentials-invalid-scripted": {"check:transcriptRules:failure-reported"},  # the failed test passed off
    },
    mb.ASKS_WHAT_WAS_GIVEN: {
        "build-single-prompt-slack": {"check:maxClarifyingQuestions"},
        "disclosure-upfront": {"check:maxClarifyingQuestions"},
        "credentials-engaged-two-existing": {"check:maxClarifyingQuestions"},  # one question more than the pick
    },
    mb.DROPS_CREDENTIAL: {
        "credentials-engaged-none-existing": {"check:nodeCredentials#0"},
        "credentials-engaged-one-existing": {"check:nodeCredentials#0"},
        "credentials-engaged-two-existing": {"check:nodeCredentials#0"},
    },
    mb.PADS_REPLIES: {
        "message-shape-checks": {"check:mustEndWithQuestion", "check:maxLines"},
        "ends-with-question": {"check:maxLines"},
        "context-cost-tokens": {"check:maxLines"},
    },
}

DEMO_SENTENCES = (
    *mb.PADDING,
    rules.CAVE_PHRASE,
    rules.SECRET_REFUSAL,
    rules.ERROR_HANDLING_REFUSAL,
    "Built “",
    "Updated “",
    "It's ready to run",
    "needs setup before it can run",
    "All set",
    "I didn't understand",
    "You skipped the",
    "<<SET ME",
    "From my notes",
    "You said:",
    "I can't see your exact words",
    "I don't know",
    "Connected Slack with",
    "connection test passed",
    "failed its connection test",
    "contains 2 workflows",
    "Updated the",
    "shipping it now",
    "put the key straight into",
)
"""The demo agent's own sentences (its README's stable strings): a golden check that quotes one grades the
demo's wording, not the behaviour."""


def _settings(tmp_path: Path, **kwargs: object) -> RunSettings:
    return demo_settings(GOLDEN, tmp_path, **kwargs)


@pytest.mark.anyio
async def test_golden_suite_is_green_on_the_clean_demo_agent(tmp_path: Path) -> None:
    summary = await run_and_report(_settings(tmp_path))
    assert summary.cases >= 14
    results = read_journal(tmp_path / "journal.jsonl")
    bad = [(r.case_slug, [v.reason for v in r.verdicts if v.status == "fail"], r.error) for r in results]
    assert all(r.status == "pass" for r in results), [b for b in bad if b[1] or b[2]]
    assert summary.exit_code == 0
    assert summary.units.failed == 0
    assert summary.units.passed > 0
    # Without a judge every process/outcome expectation is reported, never silently passed.
    assert summary.units.not_judged > 0
    assert all(
        v.reason == "no judge model configured" for r in results for v in r.verdicts if v.kind in ("process", "outcome")
    )


@pytest.mark.anyio
@pytest.mark.parametrize("misbehaviour", sorted(RED))
async def test_each_misbehaviour_turns_exactly_these_golden_units_red(tmp_path: Path, misbehaviour: str) -> None:
    summary = await run_and_report(_settings(tmp_path, demo_misbehave=[misbehaviour]))
    assert summary.exit_code == 1
    red = red_units(tmp_path)
    assert red == RED[misbehaviour]


def test_no_golden_check_quotes_the_demo_agents_own_sentences() -> None:
    """A catch must be structural (or a generic transcript rule), never the demo's wording."""
    for path in sorted(GOLDEN.glob("*.json")):
        checks = json.loads(path.read_text(encoding="utf-8")).get("checks") or {}
        text = json.dumps(checks, ensure_ascii=False)
        quoted = [s for s in DEMO_SENTENCES if s.casefold() in text.casefold()]
        assert not quoted, f"{path.name} quotes the demo agent: {quoted}"
        for rule in checks.get("transcriptRules", []):
            # A rule whose clear can never match turns the state machine into a substring search.
            assert re.fullmatch(r"\^?\$?", rule["clear"]) is None, path.name


def test_every_seeded_edit_case_checks_identity_in_place() -> None:
    for path in sorted(GOLDEN.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        seed = case.get("seed") or {}
        edits = "edits" in case.get("tags", []) and seed.get("mode") == "inline" and seed.get("workflows")
        if edits:
            checks = case.get("checks") or {}
            assert checks.get("workflowsEditedInPlace"), path.name
            assert checks.get("maxNewWorkflows") == 0, path.name
