"""The runner calibrates a configured judge once, before any case, and gates its verdicts on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from threadcase.errors import ConfigError
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"
CASE = GOLDEN / "build-single-prompt-slack.json"


def _verdict(passed: bool) -> dict[str, object]:
    return {"results": [{"index": 0, "reason": "quoted evidence", "pass": passed}]}


def _settings(tmp_path: Path, base_url: str, **kwargs: object) -> RunSettings:
    labelled = tmp_path / "calibration.jsonl"
    items = [
        {"id": f"item-{i}", "transcript": "### Turn 1\nUser: hi\nAssistant: hello", "expectation": "greets"}
        for i in range(2)
    ]
    labelled.write_text("".join(json.dumps({**item, "human": "pass"}) + "\n" for item in items), encoding="utf-8")
    models = ModelSettings(api_key=SecretStr("test-key"), base_url=base_url, judge_model="fake-judge")
    return RunSettings.model_validate(
        {"suite": CASE, "output_dir": tmp_path / "out", "models": models, "calibration_set": labelled, **kwargs}
    )


@pytest.mark.anyio
async def test_a_judge_that_disagrees_with_the_labels_grades_nothing(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    fake.queue(_verdict(False), _verdict(False))
    summary = await run_and_report(_settings(tmp_path, url))
    assert len(fake.requests) == 2  # the two calibration items; the case's judge call was never made
    journal = [json.loads(line) for line in (tmp_path / "out" / "journal.jsonl").read_text().splitlines()]
    verdicts = {v["unit"]: v for v in journal[0]["verdicts"]}
    assert verdicts["outcome#0"]["status"] == "not_judged"
    assert verdicts["outcome#0"]["reason"] == "judge uncalibrated: agreement 0.00 < 0.90"
    assert journal[0]["judge"]["calibrated"] is False
    # Deterministic checks do not depend on the judge and still grade.
    assert all(v["status"] == "pass" for k, v in verdicts.items() if k.startswith("check:"))
    assert summary.units.failed == 0


@pytest.mark.anyio
async def test_a_calibrated_judge_grades_the_case(tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(_verdict(True), _verdict(True), _verdict(True))
    await run_and_report(_settings(tmp_path, url))
    assert fake.pending == 0
    journal = [json.loads(line) for line in (tmp_path / "out" / "journal.jsonl").read_text().splitlines()]
    verdicts = {v["unit"]: v for v in journal[0]["verdicts"]}
    assert verdicts["outcome#0"]["status"] == "pass"
    assert journal[0]["judge"]["calibration_agreement"] == 1.0


@pytest.mark.anyio
async def test_a_missing_calibration_set_stops_the_run_before_anything_runs(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    with pytest.raises(ConfigError, match="--skip-calibration"):
        await run_and_report(_settings(tmp_path, url, calibration_set=tmp_path / "missing.jsonl"))
    assert fake.requests == []
    fake.queue(_verdict(True))
    await run_and_report(_settings(tmp_path, url, calibration_set=tmp_path / "missing.jsonl", skip_calibration=True))
    assert len(fake.requests) == 1
