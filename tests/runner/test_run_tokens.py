"""Credential tokens: read from the environment once per run and handed to every case's seeder."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.runner.one_case import one_case_lane, write_thanks_cases
from threadcase.credentials.seeder import CredentialSeeder, token_environment
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.harness import pipeline
from threadcase.harness.conversation import Budgets
from threadcase.harness.pipeline import PipelineConfig, WorkItem, run_case
from threadcase.harness.runner import RunSettings
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

TOKEN = "EVAL_SLACK_ACCESS_TOKEN"


SLACK_CASE = {"credentials": [{"type": "slackApi"}]}


def test_token_environment_keeps_only_the_templates_variables() -> None:
    source = {TOKEN: "token-1", "EVAL_NOTION_API_KEY": "", "PATH": "/bin", "EVAL_UNKNOWN": "x"}
    assert token_environment(source) == {TOKEN: "token-1", "EVAL_NOTION_API_KEY": ""}


@pytest.mark.anyio
async def test_a_case_seeder_uses_the_runs_tokens_not_the_environment_of_the_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN, "token-set-after-the-run-started")
    config = PipelineConfig(
        run_id=uuid.uuid4().hex[:12], models=ModelSettings(), budgets=Budgets(), environ={TOKEN: "token-at-run-start"}
    )
    sent: list[dict[str, object]] = []
    demo = DemoSettings()
    async with (
        demo_server(demo) as url,
        InstanceClient(url, email=demo.email, password=demo.password.get_secret_value()) as client,
    ):
        create = client.create_credential

        async def spy(**kwargs: Any) -> Any:
            sent.append(kwargs["data"])
            return await create(**kwargs)

        monkeypatch.setattr(client, "create_credential", spy)
        loaded, lane, pool = await one_case_lane(tmp_path, url, client, case_fields=SLACK_CASE)
        result = await run_case(WorkItem(loaded, 0), lane, config, pool)
    assert result.error is None
    assert sent == [{"accessToken": "token-at-run-start"}]


@pytest.mark.anyio
async def test_run_suite_reads_the_tokens_from_the_process_environment_at_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN, "token-from-the-environment")
    handed: list[Mapping[str, str] | None] = []

    def seeder(client: InstanceClient, *, environ: Mapping[str, str] | None = None) -> CredentialSeeder:
        handed.append(environ)
        return CredentialSeeder(client, environ=environ)

    monkeypatch.setattr(pipeline, "CredentialSeeder", seeder)
    suite = write_thanks_cases(tmp_path / "suite", 1, turns=1, **SLACK_CASE)
    summary = await run_and_report(RunSettings(suite=suite, output_dir=tmp_path / "out", models=ModelSettings()))
    assert summary.exit_code == 0
    assert handed == [token_environment()]
    assert handed[0] is not None
    assert handed[0][TOKEN] == "token-from-the-environment"
