"""A run's start: the suite loads while the lanes log in, and a bad suite still wins over a bad instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from threadcase.case import loader
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.errors import CaseProblem, CaseSchemaError
from threadcase.harness.runner import RunSettings
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

CASE = {
    "complexity": "simple",
    "tags": ["startup"],
    "conversation": [{"role": "user", "text": "Thanks!"}],
    "checks": {"mustContain": ["You're welcome"]},
}


def _suite(directory: Path, count: int) -> Path:
    directory.mkdir()
    for index in range(count):
        (directory / f"case-{index:03d}.json").write_text(json.dumps(CASE), encoding="utf-8")
    return directory


@pytest.mark.anyio
async def test_a_bad_case_file_wins_over_an_unreachable_instance(tmp_path: Path) -> None:
    """Both are wrong; the case file is the user's input, so its error (exit 2) is the one reported,
    and the output directory is not created for a run that never started."""
    suite = _suite(tmp_path / "suite", 3)
    (suite / "broken.json").write_text("{not json", encoding="utf-8")
    settings = RunSettings(
        suite=suite,
        base_urls=["http://127.0.0.1:9"],
        email="a@b.c",
        password=SecretStr("pw"),
        output_dir=tmp_path / "out",
        models=ModelSettings(),
    )
    with pytest.raises(CaseSchemaError) as info:
        await run_and_report(settings)
    assert any("broken.json" in problem.render() for problem in info.value.problems)
    assert not (tmp_path / "out").exists()


@pytest.mark.anyio
async def test_the_suite_loads_while_the_lane_logs_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lane's first round trip leaves before the last case file is read (one after the other, the
    loading was all dead time for the instance), and the run is the same run."""
    order: list[str] = []
    read_one = loader._load
    check_health = InstanceClient.health

    def reading(path: Path) -> tuple[loader.LoadedCase | None, list[CaseProblem]]:
        order.append("file")
        return read_one(path)

    async def health(self: InstanceClient) -> bool:
        order.append("health")
        return await check_health(self)

    monkeypatch.setattr(loader, "_load", reading)
    monkeypatch.setattr(InstanceClient, "health", health)
    demo = DemoSettings()
    files = 4 * loader.FILES_PER_STEP
    async with demo_server(demo) as url:
        summary = await run_and_report(
            RunSettings(
                suite=_suite(tmp_path / "suite", files),
                base_urls=[url],
                email=demo.email,
                password=demo.password,
                output_dir=tmp_path / "out",
                models=ModelSettings(),
            )
        )
    assert order.count("file") == files
    assert "file" in order[order.index("health") :]  # files were still to be read when the lane began
    assert summary.case_iterations == files
    assert summary.units.passed == files
    assert summary.exit_code == 0
