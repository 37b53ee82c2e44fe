"""Calibration: kappa arithmetic, set loading errors, agreement against the fake judge, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import SecretStr

from tests.fakes.openai_server import FakeOpenAI
from threadcase.cli import cli
from threadcase.errors import ConfigError
from threadcase.grading.calibration import (
    DEFAULT_SET,
    calibrate,
    calibrate_file,
    cohen_kappa,
    load_calibration_set,
)
from threadcase.models import ModelSettings

REPO = Path(__file__).resolve().parents[2]


def _item(i: int, human: str) -> dict[str, str]:
    return {"id": f"item-{i}", "transcript": f"### Turn 1\nUser: hi {i}", "expectation": "greets", "human": human}


def _write(tmp_path: Path, items: list[dict[str, str]]) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in items) + "\n", encoding="utf-8")
    return path


def _models(url: str) -> ModelSettings:
    return ModelSettings(api_key=SecretStr("k"), base_url=url, judge_model="fake-judge", timeout_seconds=5)


def _verdict(ok: bool) -> dict[str, object]:
    return {"results": [{"index": 0, "reason": "turn 1 says hi", "pass": ok}]}


def test_cohen_kappa() -> None:
    assert cohen_kappa([(True, True), (False, False)]) == 1.0
    # 8 of 10 agree; each rater says pass 5 times: chance 0.5 -> kappa 0.6
    pairs = [(True, True)] * 4 + [(False, False)] * 4 + [(True, False), (False, True)]
    assert cohen_kappa(pairs) == pytest.approx(0.6)
    assert cohen_kappa([(True, True)] * 5) == 1.0  # one label for everything, all agree
    assert cohen_kappa([(True, False)] * 3) == pytest.approx(0.0)


def test_load_errors_name_file_line_and_field(tmp_path: Path) -> None:
    bad = _item(1, "maybe")
    path = _write(tmp_path, [_item(0, "pass"), bad])
    with pytest.raises(ConfigError, match=r"set\.jsonl:2: human: .*'maybe'"):
        load_calibration_set(path)
    with pytest.raises(ConfigError, match=r":2: id: duplicate item id 'item-0'"):
        load_calibration_set(_write(tmp_path, [_item(0, "pass"), _item(0, "fail")]))
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    with pytest.raises(ConfigError, match=r"broken\.jsonl:1: not a JSON object"):
        load_calibration_set(tmp_path / "broken.jsonl")
    with pytest.raises(ConfigError, match="cannot read"):
        load_calibration_set(tmp_path / "missing.jsonl")


@pytest.mark.anyio
async def test_agreement_kappa_and_threshold(fake_openai: tuple[FakeOpenAI, str], tmp_path: Path) -> None:
    fake, url = fake_openai
    humans = ["pass", "pass", "pass", "fail", "fail"]
    items = load_calibration_set(_write(tmp_path, [_item(i, h) for i, h in enumerate(humans)]))
    # The judge disagrees on item 3 and says nothing usable (twice) on item 4.
    answers = {0: _verdict(True), 1: _verdict(True), 2: _verdict(True), 3: _verdict(True)}
    for i in range(4):
        fake.queue(answers[i])
    fake.queue("garbage", "garbage")
    result = await calibrate(items, models=_models(url), threshold=0.5, concurrency=1)
    assert result.n == 5
    assert result.agreement == pytest.approx(0.6)
    assert result.unjudged == 1
    assert result.passed
    assert result.kappa == pytest.approx(cohen_kappa([(True, True)] * 3 + [(False, True), (False, True)]))
    assert [o.id for o in result.items if not o.agrees] == ["item-3", "item-4"]
    prompt = fake.prompts()[0]
    assert "## Conversation transcript\n### Turn 1\nUser: hi 0" in prompt
    assert "## Expectations\n0. greets" in prompt
    strict = await calibrate(items[:1], models=_models(url), threshold=0.9)  # queue is empty now: 500s
    assert not strict.passed
    # Regression: the reason hid that the judge never answered; 0.00 read as a judge that disagrees.
    assert strict.gate_reason == (
        "judge uncalibrated: agreement 0.00 < 0.90 (1 of 1 items unjudged: the judge did not answer)"
    )


@pytest.mark.anyio
async def test_calibrating_without_a_judge_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no judge model configured"):
        await calibrate_file(_write(tmp_path, [_item(0, "pass")]), models=ModelSettings())


def test_cli_prints_agreement_and_exits_by_threshold(
    fake_openai: tuple[FakeOpenAI, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, url = fake_openai
    path = _write(tmp_path, [_item(0, "pass"), _item(1, "fail")])
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("THREADCASE_JUDGE_MODEL", "fake-judge")
    fake.queue(_verdict(True), _verdict(False))
    ok = CliRunner().invoke(cli, ["calibrate", "--set", str(path), "--concurrency", "1"])
    assert ok.exit_code == 0, ok.output
    assert "agreement 1.00, Cohen's kappa 1.00, threshold 0.90" in ok.output
    fake.queue(_verdict(True), _verdict(True))
    low = CliRunner().invoke(cli, ["calibrate", "--set", str(path), "--concurrency", "1", "--json"])
    assert low.exit_code == 1
    assert json.loads(low.output)["agreement"] == 0.5


def test_shipped_demo_set_loads_with_both_labels() -> None:
    items = load_calibration_set(REPO / DEFAULT_SET)
    assert len(items) >= 10
    assert {i.human for i in items} == {"pass", "fail"}
