"""``threadcase regrade``: the stored conversations graded again with today's cases and judge, no instance."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.report.factory import result
from tests.results.helpers import cli, edit_case, golden_suite
from threadcase.case.fingerprint import case_hashes
from threadcase.case.loader import load_case_file
from threadcase.errors import ConfigError
from threadcase.harness.journal import JournalWriter, read_journal
from threadcase.harness.regrade import RegradeSettings
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report
from threadcase.report.derived import regrade_and_report
from threadcase.verdicts import CaseResult, ErrorInfo

TWO = ("folder-with-decoys", "edit-two-changes-one-message")


def _run(suite: Path, out: Path, **settings: Any) -> list[CaseResult]:
    anyio.run(run_and_report, RunSettings(suite=suite, output_dir=out, models=ModelSettings(), **settings))
    return read_journal(out)


def _refuse_http(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any HTTP client made fails the test: no instance, no model, nothing."""

    def refuse(self: httpx.AsyncClient, *args: object, **kwargs: object) -> None:
        raise AssertionError("re-grading opened an HTTP client")

    monkeypatch.setattr(httpx.AsyncClient, "__init__", refuse)


def _keyed(results: list[CaseResult]) -> dict[tuple[str, int], CaseResult]:
    return {(r.case_slug, r.iteration): r for r in results}


def test_an_added_check_is_graded_on_the_stored_conversation_and_nothing_else_moves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = golden_suite(tmp_path / "suite", *TWO)
    original = _run(suite, tmp_path / "run", iterations=2)
    assert all(r.status == "pass" for r in original)
    old_units = {v.unit for r in original if r.case_slug == TWO[0] for v in r.verdicts}
    # Two new checks on what the agent said: one it meets, one it breaks.
    edit_case(suite / f"{TWO[0]}.json", checks={"maxLines": 40, "mustEndWithQuestion": True})
    _refuse_http(monkeypatch)

    code, out, err = cli(["regrade", str(tmp_path / "run"), "--output-dir", str(tmp_path / "again")], capsys)

    assert code == 1, err
    regraded = read_journal(tmp_path / "again")
    assert len(regraded) == len(original)
    before, after = _keyed(original), _keyed(regraded)
    for key, new in after.items():
        old = before[key]
        added = [v for v in new.verdicts if v.unit not in {o.unit for o in old.verdicts}]
        kept = [v for v in new.verdicts if v not in added]
        assert kept == old.verdicts, key  # every verdict that was there, exactly as it was
        assert new.record == old.record  # the same conversation, nothing re-run
        if key[0] == TWO[0]:
            assert {v.unit: v.status for v in added} == {
                "check:maxLines": "pass",
                "check:mustEndWithQuestion": "fail",
            }, [v.model_dump() for v in added]
            assert old_units < {v.unit for v in new.verdicts}
        else:
            assert added == []
    # A new run, marked as a re-grade of the original.
    run_id = original[0].run_id
    assert {r.run_id for r in regraded} != {run_id}
    assert all(r.run_context is not None and r.run_context.regrade_of == run_id for r in regraded)
    assert f"re-grade of run {run_id}" in out
    summary = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
    assert summary["context"]["regrade_of"] == run_id
    assert f"re-grade of run {run_id}" in (tmp_path / "again" / "report.html").read_text(encoding="utf-8")


def _new_opening(case: dict[str, Any]) -> None:
    case["conversation"] = [{"role": "user", "text": "Build the weekly digest another way"}]


def _earlier_message(case: dict[str, Any]) -> None:
    case["seed"]["messages"][0]["text"] += " (and mind the time zone)"


def _bigger_budget(case: dict[str, Any]) -> None:
    case["messageBudget"] = 9


def _a_scenario(case: dict[str, Any]) -> None:
    case["executionScenarios"] = [{"name": "lists", "description": "", "dataSetup": "", "successCriteria": "Listed."}]


@pytest.mark.parametrize(
    ("slug", "change", "part"),
    [
        ("edit-two-changes-one-message", _new_opening, "conversation"),
        ("seeded-edit-attached", _earlier_message, "seed"),
        ("folder-with-decoys", _bigger_budget, "setup"),
        ("folder-with-decoys", _a_scenario, "scenarios"),
    ],
)
def test_a_case_whose_conversation_inputs_changed_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slug: str, change: Callable[[dict[str, Any]], None], part: str
) -> None:
    others = [s for s in ("folder-with-decoys", "build-single-prompt-slack") if s != slug]
    suite = golden_suite(tmp_path / "suite", slug, *others)
    _run(suite, tmp_path / "run")
    path = suite / f"{slug}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")

    code, _, err = cli(["regrade", str(tmp_path / "run"), "--output-dir", str(tmp_path / "again")], capsys)

    assert code == 0, err
    assert f"refused {slug}: {part} changed since run" in err
    assert {r.case_slug for r in read_journal(tmp_path / "again")} == set(others)


def test_when_every_case_is_refused_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = golden_suite(tmp_path / "suite", "folder-with-decoys")
    _run(suite, tmp_path / "run")
    (suite / "folder-with-decoys.json").rename(suite / "renamed.json")
    code, _, err = cli(["regrade", str(tmp_path / "run"), "--output-dir", str(tmp_path / "again")], capsys)
    assert code == 2
    assert "refused folder-with-decoys: no longer in the suite" in err
    assert not (tmp_path / "again" / "journal.jsonl").exists()


@pytest.mark.anyio
async def test_an_errored_case_iteration_is_carried_over_and_an_old_journal_is_refused(tmp_path: Path) -> None:
    suite = golden_suite(tmp_path / "suite", "folder-with-decoys", "build-single-prompt-slack")
    hashes = case_hashes(load_case_file(suite / "folder-with-decoys.json"))
    errored = result("folder-with-decoys", 0, (), error=ErrorInfo(type="InstanceError", message="HTTP 503"))
    errored.case_hashes = hashes
    old = result("build-single-prompt-slack", 0, ("pass",))  # a journal line from before digests
    with JournalWriter(tmp_path / "run" / "journal.jsonl") as journal:
        journal.append(errored)
        journal.append(old)
    settings = RegradeSettings(run=tmp_path / "run", suite=suite, output_dir=tmp_path / "again")
    summary, outcome = await regrade_and_report(settings)
    (carried,) = outcome.results
    assert carried.status == "errored"
    assert carried.verdicts == []
    assert carried.error == errored.error
    assert [r.slug for r in outcome.refused] == ["build-single-prompt-slack"]
    assert "predates case digests" in outcome.refused[0].reason
    assert summary.units.errored == 1
    with pytest.raises(ConfigError, match="already holds a run's journal"):
        await regrade_and_report(settings)


SCENARIO_CASE = {
    "description": "Form submissions go into the orders table.",
    "complexity": "simple",
    "tags": ["data-table"],
    "conversation": [{"role": "user", "text": "When a form is submitted, insert the row into the orders data table"}],
    "executionScenarios": [
        {
            "name": "stores an order",
            "description": "One form submission.",
            "dataSetup": 'The form receives {"order_ref": "Q-204"}.',
            "successCriteria": "The orders table holds a row with order_ref Q-204.",
            "seedDataTables": [
                {
                    "id": "orders-table-0002",
                    "name": "orders",
                    "columns": [{"name": "order_ref", "type": "string"}],
                    "rows": [{"order_ref": "Q-1"}],
                }
            ],
        }
    ],
    "checks": {"toolsCalled": ["build-workflow"]},
}


@pytest.mark.anyio
async def test_a_scenario_is_verified_again_on_the_execution_the_run_stored(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "orders.json").write_text(json.dumps(SCENARIO_CASE), encoding="utf-8")
    await run_and_report(RunSettings(suite=suite, output_dir=tmp_path / "run", models=ModelSettings()))
    (first,) = read_journal(tmp_path / "run")
    assert first.record is not None
    (stored,) = first.record.scenario_executions  # the journal keeps the mocked execution
    assert {v.unit: v.status for v in first.verdicts}["scenario:stores an order"] == "not_judged"  # no verifier then

    fake.queue({"reasoning": "The orders table received a row with id Q-204.", "pass": True, "failureCategory": None})
    judge = ModelSettings(api_key=SecretStr("test-key"), base_url=url, judge_model="fake-judge")
    settings = RegradeSettings(run=tmp_path / "run", output_dir=tmp_path / "again", models=judge, skip_calibration=True)
    _, outcome = await regrade_and_report(settings)

    (again,) = outcome.results
    verdicts = {v.unit: v for v in again.verdicts}
    assert verdicts["scenario:stores an order"].status == "pass"
    assert verdicts["scenario:stores an order"].reason.startswith("The orders table received")
    assert verdicts["check:toolsCalled#0"] == next(v for v in first.verdicts if v.unit == "check:toolsCalled#0")
    (prompt,) = fake.prompts()  # one call: the verifier, shown the stored execution
    assert f"Success: {stored.result.success}" in prompt
    assert stored.result.nodeResults
    assert all(f"### Node {name!r}" in prompt for name in stored.result.nodeResults)


@pytest.mark.anyio
async def test_a_scenario_without_a_stored_execution_is_not_judged_with_the_reason(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    _, url = fake_openai
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "orders.json").write_text(json.dumps(SCENARIO_CASE), encoding="utf-8")
    await run_and_report(RunSettings(suite=suite, output_dir=tmp_path / "run", models=ModelSettings()))
    (first,) = read_journal(tmp_path / "run")
    assert first.record is not None
    first.record.scenario_executions = []  # as a journal written before executions were kept
    with JournalWriter(tmp_path / "old" / "journal.jsonl") as journal:
        journal.append(first)
    judge = ModelSettings(api_key=SecretStr("test-key"), base_url=url, judge_model="fake-judge")
    settings = RegradeSettings(run=tmp_path / "old", output_dir=tmp_path / "again", models=judge, skip_calibration=True)
    _, outcome = await regrade_and_report(settings)
    verdict = next(v for v in outcome.results[0].verdicts if v.kind == "scenario")
    assert verdict.status == "not_judged"
    assert "holds no execution" in verdict.reason


def test_a_run_whose_suite_moved_needs_to_be_told_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = golden_suite(tmp_path / "suite", "folder-with-decoys")
    _run(suite, tmp_path / "run")
    suite.rename(tmp_path / "moved")
    code, _, err = cli(["regrade", str(tmp_path / "run"), "--output-dir", str(tmp_path / "again")], capsys)
    assert code == 2
    assert f"the run's suite {str(suite)!r} is not here" in err
    code, _, err = cli(
        ["regrade", str(tmp_path / "run"), "--suite", str(tmp_path / "moved"), "--output-dir", str(tmp_path / "again")],
        capsys,
    )
    assert code == 0, err
