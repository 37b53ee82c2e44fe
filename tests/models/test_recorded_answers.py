"""Recorded model answers: ``--record-models DIR`` stores every judge, user-proxy and verifier answer
under its request's hash; ``--replay-models DIR`` re-runs the suite from them without a model — the
same verdicts, no request made — and a request it has no answer for fails naming role and case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import case, clean_record
from tests.models.answers import echo, schema_name
from tests.runner.test_run_demo import GOLDEN
from threadcase.grading.calibration import calibrate_file
from threadcase.grading.judge import judge_expectations
from threadcase.harness.runner import RunSettings
from threadcase.llm import request_key
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

pytestmark = pytest.mark.anyio

CASES = ("multi-turn-ordered-changes", "declined-detail-placeholder", "folder-with-decoys")
DEAD = "http://127.0.0.1:9/v1"
"""Nothing listens there: a replay that called the live model would fail loudly."""
TOKEN = "xoxb-1111111111-2222222222-recordedsecret"


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    for slug in CASES:
        shutil.copy(GOLDEN / f"{slug}.json", suite / f"{slug}.json")
    return suite


def _models(base_url: str, **dirs: Path) -> ModelSettings:
    return ModelSettings(
        api_key=SecretStr("sk-recording-key-never-stored"),
        base_url=base_url,
        proxy_model="fake-proxy",
        judge_model="fake-judge",
        **dirs,
    )


async def _run(suite: Path, out: Path, models: ModelSettings) -> dict[str, Any]:
    summary = await run_and_report(RunSettings(suite=suite, output_dir=out, models=models, skip_calibration=True))
    lines = (out / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    results = {r["case_slug"]: r for r in map(json.loads, lines)}
    return {"summary": summary, "results": results}


def _verdicts(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(v["unit"], v["status"], v["reason"]) for v in result["verdicts"]]


async def test_a_recorded_suite_replays_with_no_model_and_the_same_verdicts(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, url = fake_openai
    monkeypatch.setenv("EVAL_SLACK_ACCESS_TOKEN", TOKEN)

    def answering(body: dict[str, Any]) -> Any:
        answer = echo(body)
        if schema_name(body) == "expectation_verdicts":
            answer["results"][0]["reason"] += f" (the transcript shows {TOKEN})"
        return answer

    fake.responder = answering
    answers = tmp_path / "answers"
    suite = _suite(tmp_path)
    recorded = await _run(suite, tmp_path / "recorded", _models(url, record_dir=answers))
    calls = len(fake.requests)
    roles = {json.loads(p.read_text(encoding="utf-8"))["role"] for p in answers.glob("*.json")}
    assert roles == {"proxy", "judge"}
    assert len(list(answers.glob("*.json"))) == calls  # one answer per distinct request
    stored = "".join(p.read_text(encoding="utf-8") for p in answers.glob("*.json"))
    assert TOKEN not in stored  # redacted like every other output
    assert "[redacted]" in stored
    assert "sk-recording-key-never-stored" not in stored

    replayed = await _run(suite, tmp_path / "replayed", _models(DEAD, replay_dir=answers))
    assert len(fake.requests) == calls  # the live model was never called
    for slug in CASES:
        before, after = recorded["results"][slug], replayed["results"][slug]
        assert after["error"] is None, after["error"]
        assert [(u, s) for u, s, _ in _verdicts(after)] == [(u, s) for u, s, _ in _verdicts(before)]
        # The judge's answers come back as recorded (their secret redacted).
        judged = [r for u, s, r in _verdicts(after) if u.startswith(("process#", "outcome#"))]
        assert judged
        assert all("is met in the transcript" in r for r in judged)
        assert {m["answers"] for m in after["models"]} == {"replayed"}
        assert after["model_usage"]["judge"]["input_tokens"] == before["model_usage"]["judge"]["input_tokens"]
    assert replayed["summary"].exit_code == recorded["summary"].exit_code

    # A changed expectation is a different request: the judge's units say so, naming role and case.
    edited = json.loads((suite / "multi-turn-ordered-changes.json").read_text(encoding="utf-8"))
    edited["processExpectations"][0] += " (reworded)"
    (suite / "multi-turn-ordered-changes.json").write_text(json.dumps(edited), encoding="utf-8")
    missed = await _run(suite, tmp_path / "missed", _models(DEAD, replay_dir=answers))
    reasons = {r for u, s, r in _verdicts(missed["results"]["multi-turn-ordered-changes"]) if s == "not_judged"}
    assert any(
        "no recorded answer for the judge call of case 'multi-turn-ordered-changes' iteration 0" in r
        and "the request changed" in r
        for r in reasons
    ), reasons
    assert missed["summary"].exit_code != 0  # never green
    assert len(fake.requests) == calls


async def test_a_user_proxy_miss_ends_the_case_naming_role_and_case(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, _ = fake_openai
    fake.responder = echo
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(GOLDEN / "multi-turn-ordered-changes.json", suite / "multi-turn-ordered-changes.json")
    empty = tmp_path / "nothing-recorded"
    empty.mkdir()
    missed = await _run(suite, tmp_path / "out", _models(DEAD, replay_dir=empty))
    result = missed["results"]["multi-turn-ordered-changes"]
    assert result["status"] == "errored"
    assert result["error"]["type"] == "RecordedAnswerMissing"
    assert (
        "no recorded answer for the user proxy call of case 'multi-turn-ordered-changes' iteration 0"
        in (result["error"]["message"])
    )
    assert "nothing is recorded for the user proxy" in result["error"]["message"]
    assert fake.requests == []


async def test_calibration_replays_and_a_miss_counts_as_unjudged(
    tmp_path: Path, fake_openai: tuple[FakeOpenAI, str]
) -> None:
    fake, url = fake_openai
    fake.responder = echo
    answers = tmp_path / "answers"
    calibration = GOLDEN.parent / "calibration" / "demo.jsonl"
    live = await calibrate_file(calibration, models=_models(url, record_dir=answers))
    replay = await calibrate_file(calibration, models=_models(DEAD, replay_dir=answers))
    assert (replay.agreement, replay.kappa, replay.unjudged) == (live.agreement, live.kappa, 0)
    one = next(answers.glob("*.json"))
    one.unlink()
    partial = await calibrate_file(calibration, models=_models(DEAD, replay_dir=answers))
    assert partial.unjudged == 1
    (miss,) = [i for i in partial.items if i.judge is None]
    assert "no recorded answer for the judge call of calibration item" in miss.reason


async def test_per_run_identifiers_do_not_change_the_request_hash(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.responder = echo
    one = clean_record(thread_id="6f1c2a9e-4b7d-4e1f-9a3c-2d5e8f7a1b0c")
    other = clean_record(thread_id="0a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d")
    for record, workflow_id, version in (
        (one, "aB3dE5fG7hJ9kL1m", "cAlVCCTkrjsA"),
        (other, "Zx8Yw7Vu6Ts5Rq4P", "dvEBGq"),
    ):
        record.artifacts.workflows[0].id = workflow_id
        # Ids of letters only, and timestamps, in what a tool answered.
        stamp = "2026-12-02T06:45:25.880Z" if record is one else "2026-12-03T11:02:09.001Z"
        record.turns[1].tool_calls[0].result = {"workflowId": workflow_id, "versionId": version * 2, "updatedAt": stamp}
    the_case = case()
    models = _models(url)
    await judge_expectations(the_case, one, models=models)
    await judge_expectations(the_case, other, models=models)
    first, second = fake.requests
    assert first != second  # the ids differ in what was sent...
    assert request_key("judge", first) == request_key("judge", second)  # ...not in what was asked
    changed = json.loads(json.dumps(second))
    changed["messages"][0]["content"] += " Be strict."
    assert request_key("judge", changed) != request_key("judge", first)
