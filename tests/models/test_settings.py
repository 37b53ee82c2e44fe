"""Model settings a user can set, per role: model, timeout, attempts, temperature (default 0), seed,
max_tokens — sent with every request, recorded in the journal and the report header; a timeout says
which role, which model, after how long, and which setting raises it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conversation.helpers import drive, echo_agent, make_case
from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import case, clean_record
from tests.models.answers import DONE, echo, follow_up
from tests.runner.test_run_demo import GOLDEN
from threadcase.cli import main
from threadcase.cli import run as run_cli
from threadcase.errors import ConfigError
from threadcase.grading.judge import judge_expectations
from threadcase.harness.journal import read_journal
from threadcase.models import ModelSettings, RoleOverrides

ONE = case(processExpectations=["asks which channel before building"])


def test_each_role_takes_its_own_setting_over_the_one_for_every_role() -> None:
    env = {
        "THREADCASE_JUDGE_MODEL": "grader",
        "THREADCASE_PROXY_MODEL": "player",
        "THREADCASE_MODEL_TIMEOUT_SECONDS": "150",
        "THREADCASE_JUDGE_TIMEOUT_SECONDS": "300",
        "THREADCASE_MODEL_ATTEMPTS": "3",
        "THREADCASE_MODEL_SEED": "7",
        "THREADCASE_PROXY_TEMPERATURE": "0.7",
        "THREADCASE_VERIFIER_MAX_TOKENS": "900",
    }
    models = ModelSettings.from_env(env)
    judge, proxy, verifier = (models.role(r) for r in ("judge", "proxy", "verifier"))
    assert judge is not None
    assert proxy is not None
    assert verifier is not None
    assert (judge.model, judge.timeout_seconds, judge.attempts, judge.temperature, judge.seed) == (
        "grader",
        300,
        3,
        0,
        7,
    )
    assert (proxy.model, proxy.timeout_seconds, proxy.temperature, proxy.max_tokens) == ("player", 150, 0.7, None)
    assert (verifier.model, verifier.max_tokens, verifier.timeout_seconds) == ("grader", 900, 150)
    # A flag (the override) wins over its environment twin.
    flagged = ModelSettings.from_env(env, **{"judge.timeout_seconds": 45.0, "verifier_model": "checker"})
    assert [(r.role, r.model, r.timeout_seconds) for r in flagged.roles()][1:] == [
        ("judge", "grader", 45),
        ("verifier", "checker", 150),
    ]
    # No model, no role; the verifier follows the judge.
    assert ModelSettings().roles() == []


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"THREADCASE_JUDGE_TIMEOUT_SECONDS": "soon"}, "THREADCASE_JUDGE_TIMEOUT_SECONDS: 'soon' is not a number"),
        ({"THREADCASE_MODEL_TEMPERATURE": "5"}, "--model-temperature (THREADCASE_MODEL_TEMPERATURE)"),
        ({"THREADCASE_PROXY_ATTEMPTS": "0"}, "--proxy-attempts (THREADCASE_PROXY_ATTEMPTS)"),
        ({"THREADCASE_MODEL_SEED": "1.5"}, "THREADCASE_MODEL_SEED: '1.5' is not an integer"),
        ({"THREADCASE_RECORD_MODELS": "a", "THREADCASE_REPLAY_MODELS": "."}, "exclude each other"),
        ({"THREADCASE_REPLAY_MODELS": "no/such/answers"}, "is not a directory of recorded answers"),
    ],
)
def test_a_bad_model_setting_is_one_line_naming_its_flag_or_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ModelSettings.from_env(env)
    assert named in str(caught.value)


@pytest.mark.anyio
async def test_every_request_carries_the_roles_sampling_settings(fake_openai: tuple[FakeOpenAI, str]) -> None:
    """Regression: no temperature was sent, so verdicts hung on each server's default (llama.cpp: 0.8)."""
    fake, url = fake_openai
    fake.responder = echo
    models = ModelSettings(
        api_key=SecretStr("k"),
        base_url=url,
        judge_model="fake-judge",
        proxy_model="fake-proxy",
        judge=RoleOverrides(seed=11, max_tokens=512),
    )
    await judge_expectations(ONE, clean_record(), models=models)
    await drive(make_case(["Build a flow", "Rename it"]), agent=echo_agent, models=models)
    judge_request, proxy_request = fake.requests[0], fake.requests[1]
    assert (judge_request["temperature"], judge_request["seed"], judge_request["max_tokens"]) == (0, 11, 512)
    assert proxy_request["model"] == "fake-proxy"
    assert proxy_request["temperature"] == 0
    assert "seed" not in proxy_request
    assert "max_tokens" not in proxy_request
    server_default = ModelSettings(api_key=SecretStr("k"), base_url=url, judge_model="j", temperature=None)
    await judge_expectations(ONE, clean_record(), models=server_default)
    assert "temperature" not in fake.requests[-1]


@pytest.mark.anyio
async def test_a_timeout_names_role_model_duration_and_the_setting(fake_openai: tuple[FakeOpenAI, str]) -> None:
    """Regression: the timeout was fixed at 120 s and its error said only "no answer from the model API"."""
    fake, url = fake_openai
    fake.delay_seconds = 1.0
    fake.responder = echo
    models = ModelSettings(
        api_key=SecretStr("k"),
        base_url=url,
        judge_model="slow-judge",
        proxy_model="slow-player",
        max_attempts=1,
        judge=RoleOverrides(timeout_seconds=0.3),
        proxy=RoleOverrides(timeout_seconds=0.25),
    )
    judged = await judge_expectations(ONE, clean_record(), models=models)
    verdict = next(v for v in judged.verdicts if v.unit == "process#0")
    assert verdict.status == "not_judged"
    assert "judge model 'slow-judge' gave no answer within 0.3 s" in verdict.reason
    assert "--judge-timeout-seconds (THREADCASE_JUDGE_TIMEOUT_SECONDS)" in verdict.reason
    out = await drive(make_case(["Build a flow", "Rename it"]), agent=echo_agent, models=models)
    assert any(
        "user proxy model 'slow-player' gave no answer within 0.25 s" in w and "--proxy-timeout-seconds" in w
        for w in out.record.warnings
    ), out.record.warnings


@pytest.fixture
def not_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_cli, "prepare_process", lambda: None)


@pytest.mark.usefixtures("not_prepared")
def test_cli_flags_reach_the_requests_journal_summary_and_report(
    tmp_path: Path,
    fake_openai: tuple[FakeOpenAI, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, url = fake_openai
    fake.responder = echo
    fake.usage = {"prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 300}
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-printed")
    monkeypatch.setenv("THREADCASE_JUDGE_SEED", "3")  # an environment twin beside the flags
    out_dir = tmp_path / "out"
    argv = [
        "run",
        "--suite",
        str(GOLDEN),
        "--filter",
        "build-single-prompt-slack",
        "--judge-model",
        "fake-judge",
        "--judge-timeout-seconds",
        "33",
        "--model-attempts",
        "4",
        "--judge-max-tokens",
        "2048",
        "--skip-calibration",
        "--no-progress",
        "--output-dir",
        str(out_dir),
    ]
    with pytest.raises(SystemExit):
        main(argv)
    printed = capsys.readouterr().out
    assert "sk-test-never-printed" not in printed
    judge_requests = [r for r in fake.requests if r["response_format"]["json_schema"]["name"] == "expectation_verdicts"]
    assert judge_requests
    assert {(r["temperature"], r["seed"], r["max_tokens"]) for r in judge_requests} == {(0, 3, 2048)}
    line = "model: judge fake-judge (timeout 33 s, 4 attempts, temperature 0, seed 3, max_tokens 2048)"
    assert line in printed
    (result,) = read_journal(out_dir / "journal.jsonl")
    assert [(m.role, m.model, m.timeout_seconds, m.attempts, m.seed) for m in result.models] == [
        ("judge", "fake-judge", 33, 4, 3),
        ("verifier", "fake-judge", 120, 4, None),
    ]
    summary: dict[str, Any] = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["models"][0]["timeout_seconds"] == 33
    html = (out_dir / "report.html").read_text(encoding="utf-8")
    assert "model: judge fake-judge (timeout 33 s" in html


@pytest.mark.anyio
async def test_a_malformed_answer_is_tried_again_within_the_roles_attempts(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue("Sure! Here is my decision: send a message.", follow_up("Please call it Friday report."), DONE)
    models = ModelSettings(
        api_key=SecretStr("k"), base_url=url, proxy_model="fake-proxy", proxy=RoleOverrides(attempts=2)
    )
    out = await drive(make_case(["Build a flow", "Call it Friday report"]), agent=echo_agent, models=models)
    assert out.user_texts == ["Build a flow", "Please call it Friday report."]
    stats = out.record.proxy_stats
    assert (stats["model-calls"], stats.get("fallback-no-decision", 0)) == (3, 0)
    one_attempt = models.model_copy(update={"proxy": RoleOverrides(attempts=1)})
    fake.queue("{not json", DONE)
    out = await drive(make_case(["Build a flow", "Call it Friday report"]), agent=echo_agent, models=one_attempt)
    assert out.record.proxy_stats["fallback-no-decision"] == 1
    assert any("malformed answer" in w for w in out.record.warnings)
