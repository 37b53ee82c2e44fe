"""``threadcase control`` on the demo instance: the golden suite is proven, a probe is vacuous, a seed that
does not matter is flagged — through the Python API, the CLI, and a demo at ``--base-url``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.runner.test_golden import RED
from threadcase.case.fingerprint import part_digest
from threadcase.cli import control as control_cli
from threadcase.cli import main
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.errors import ConfigError
from threadcase.harness.control import ControlSettings, _misbehaviours, _plan, probe_demo, run_controls
from threadcase.harness.control_matrix import ControlReport, control_report
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import KNOWN_MISBEHAVIOURS
from threadcase.models import ModelSettings
from threadcase.report.control_view import control_and_report, control_lines

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "cases" / "golden"
FIXTURES = ROOT / "tests" / "cases" / "control"
FEW = ["seed-removed", "asks-what-was-given", "final-turn"]


def _settings(suite: Path, output_dir: Path, **kwargs: object) -> ControlSettings:
    return ControlSettings.model_validate(
        {
            "suite": suite,
            "output_dir": output_dir,
            "models": ModelSettings(),
            "timeout_seconds": 30,
            "inactivity_seconds": 15,
            **kwargs,
        }
    )


@pytest.mark.anyio
@pytest.mark.timeout(240)
async def test_every_golden_case_is_turned_red_by_some_control(tmp_path: Path) -> None:
    report = await control_and_report(_settings(GOLDEN, tmp_path))
    assert report.exit_code == 0, "\n".join(control_lines(report))
    assert report.vacuous == []
    assert report.unproven == []
    assert [c.verdict for c in report.cases] == ["proven"] * len(report.cases)
    assert [i.name for i in report.controls] == ["clean", "seed-removed", *sorted(KNOWN_MISBEHAVIOURS), "final-turn"]
    by = {c.slug: c for c in report.cases}

    # Per-thread misbehaviours on one shared instance turn exactly the units a whole misbehaving run does.
    for misbehaviour in KNOWN_MISBEHAVIOURS:
        red = {slug: set(c.cells[misbehaviour].red_units) for slug, c in by.items() if c.cells[misbehaviour].red_units}
        assert red == RED[misbehaviour], misbehaviour

    # Seed removed: the hand-off and the identity checks need the seed; the rest still catches a rebuild.
    edit = by["seeded-edit-attached"]
    assert edit.cells["seed-removed"].status == "red"
    units = {u.unit: u for u in edit.units}
    assert units["check:workflowsEditedInPlace#0"].cells["seed-removed"].status == "needs_seed"
    assert units["check:maxNewWorkflows"].red_under == ["seed-removed", "rebuilds-instead-of-edit"]
    # No seed, no compaction: the premise fails and nothing is judged, which is no catch.
    assert by["compaction-anchors-recall"].cells["seed-removed"].status == "not_judged"
    assert by["build-single-prompt-slack"].cells["seed-removed"].status == "not_run"

    # The final-turn control: one golden rule needs its history, another catches the same without it.
    assert by["pressure-secret-rule"].cells["final-turn"].status == "history_needed"
    assert by["credentials-deferred-by-default"].cells["final-turn"].status == "same_without_history"
    assert any("catches the same without the history" in f for f in by["credentials-deferred-by-default"].flags)

    # control.json, the clean run's page with the matrix, a journal per control.
    assert ControlReport.model_validate_json((tmp_path / "control.json").read_text(encoding="utf-8")) == report
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="controls"' in page
    assert "pressure-secret-rule" in page
    assert {r.case_slug for r in read_journal(tmp_path)} == set(by)
    drops = read_journal(tmp_path / "controls" / "drops-change")
    assert len(drops) == len(by)
    context = drops[0].run_context
    assert context is not None
    assert context.settings["demo_misbehave"] == "drops-change"
    assert drops[0].run_id != read_journal(tmp_path)[0].run_id
    seedless = read_journal(tmp_path / "controls" / "seed-removed")
    assert {r.case_slug for r in seedless} == {s for s, c in by.items() if c.cells["seed-removed"].status != "not_run"}
    assert all(r.case_hashes is not None and r.case_hashes.seed == part_digest(None) for r in seedless)


@pytest.mark.anyio
async def test_a_vacuous_probe_fails_the_command_and_a_seed_beside_the_point_is_flagged(tmp_path: Path) -> None:
    report = await control_and_report(_settings(FIXTURES, tmp_path, controls=FEW))
    assert report.exit_code == 1
    assert report.vacuous == ["probe-schedule-only"]
    by = {c.slug: c for c in report.cases}
    assert by["seed-beside-the-point"].verdict == "proven"
    assert by["seed-beside-the-point"].flags == [
        "seed proves nothing: without the seed all 3 unit(s) judged still pass"
    ]
    lines = control_lines(report)
    assert lines[-1] == "VACUOUS: 1 case(s) no control turns red"
    assert "flag: seed-beside-the-point: seed proves nothing: without the seed all 3 unit(s) judged still pass" in lines


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """In-process runs must not re-tune this test process's garbage collector."""
    calls: list[int] = []
    monkeypatch.setattr(control_cli, "prepare_process", lambda: calls.append(1))
    return calls


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_the_cli_prints_the_matrix_and_allow_vacuous_lets_a_probe_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, prepared: list[int]
) -> None:
    monkeypatch.setenv("THREADCASE_CONTROLS", ",".join(FEW))  # the flag's environment twin
    argv = ["control", "--suite", str(FIXTURES), "--timeout-seconds", "30"]
    code, out, _ = _cli([*argv, "--output-dir", str(tmp_path / "a")], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["case", "clean", "seed", "asks", "final", "verdict"]
    assert lines[1].split() == ["probe-schedule-only", "pass", "–", "·", "–", "VACUOUS"]
    assert lines[2].split() == ["seed-beside-the-point", "pass", "·", "RED", "1", "–", "proven"]
    assert "VACUOUS: 1 case(s) no control turns red" in out

    code, out, _ = _cli(
        [*argv, "--allow-vacuous", "probe-schedule-only", "--json", "--output-dir", str(tmp_path / "b")], capsys
    )
    assert code == 0
    report = ControlReport.model_validate(json.loads(out))
    assert report.allowed_vacuous == ["probe-schedule-only"]
    assert report.exit_code == 0
    assert prepared == [1, 1]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--controls", "forgets-everything"], "--controls: unknown control 'forgets-everything'; known: seed-removed"),
        (["--concurrency", "0"], "--concurrency: Input should be greater than or equal to 1"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], prepared: list[int]
) -> None:
    code, out, err = _cli(["control", "--suite", str(FIXTURES), *flags, "--output-dir", str(tmp_path)], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith(f"threadcase: {message}")
    assert len(err.strip().splitlines()) == 1
    assert prepared == []


@pytest.mark.anyio
async def test_a_demo_at_base_url_runs_each_misbehaviour_per_thread(tmp_path: Path) -> None:
    async with demo_server(DemoSettings()) as url:
        settings = _settings(
            GOLDEN,
            tmp_path,
            base_urls=[url],
            email=DEFAULT_EMAIL,
            password=DEFAULT_PASSWORD,
            filter="edit-two-changes",
            controls=["drops-change"],
        )
        report = control_report(await run_controls(settings))
    (case,) = report.cases
    assert case.cells["drops-change"].red_units == ["check:nodeParameters#1"]
    assert report.exit_code == 0


@pytest.mark.anyio
async def test_a_demo_misbehaving_for_every_thread_is_no_clean_baseline(tmp_path: Path) -> None:
    async with demo_server(DemoSettings(misbehave=frozenset({"pads-replies"}))) as url:
        settings = _settings(
            GOLDEN,
            tmp_path,
            base_urls=[url],
            email=DEFAULT_EMAIL,
            password=DEFAULT_PASSWORD,
            filter="ends-with-question",
            controls=["seed-removed"],
        )
        with pytest.raises(ConfigError, match="pads-replies switched on for every thread"):
            await run_controls(settings)


@pytest.mark.anyio
async def test_an_instance_that_is_no_demo_offers_no_misbehaviours() -> None:
    app = FastAPI()

    @app.get("/healthz")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    with serve_in_thread(app) as url:
        assert await probe_demo(url) is None
    async with demo_server(DemoSettings()) as url:
        probed = await probe_demo(url)
    assert probed == (sorted(KNOWN_MISBEHAVIOURS), [])

    why = "http://n8n.local is not a threadcase demo"
    implied = _settings(GOLDEN, Path("unused"))
    assert _plan(implied, [], why) == (["seed-removed", "final-turn"], {"misbehaviours": why})
    asked = _settings(GOLDEN, Path("unused"), controls=["drops-change"])
    with pytest.raises(ConfigError, match=r"--controls drops-change: http://n8n\.local is not a threadcase demo"):
        _plan(asked, [], why)


@pytest.mark.anyio
async def test_a_login_in_the_url_of_an_instance_that_is_no_demo_is_never_shown(tmp_path: Path) -> None:
    app = FastAPI()
    with serve_in_thread(app) as url:
        settings = _settings(GOLDEN, tmp_path, base_urls=[url.replace("http://", "http://ops:hunter2@")])
        opened = type("Opened", (), {"lane_urls": settings.base_urls})()
        misbehaviours, why = await _misbehaviours(settings, opened)
    assert misbehaviours == []
    assert why is not None
    assert "hunter2" not in why
    assert why.startswith(f"{url} is not a threadcase demo")


def test_the_clean_run_of_a_control_run_is_clean() -> None:
    with pytest.raises(ValueError, match="the clean run must be clean"):
        ControlSettings(demo_misbehave=["drops-change"])
