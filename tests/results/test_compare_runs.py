"""``threadcase compare`` and ``run --baseline`` on real runs of the demo instance (the issue's done-when)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.results.helpers import GOLDEN, cli
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

# The case drops-change breaks, and one it leaves alone.
CASES = "edit-two-changes-one-message,folder-with-decoys"
RUN = ["run", "--suite", str(GOLDEN), "--filter", CASES, "--iterations", "5", "--no-progress"]


@pytest.fixture
def clean_baseline(tmp_path: Path) -> Path:
    out = tmp_path / "baseline"
    settings = RunSettings(suite=GOLDEN, filter=CASES, iterations=5, output_dir=out, models=ModelSettings())
    summary = anyio.run(run_and_report, settings)
    assert summary.exit_code == 0
    return out


def test_a_dropped_change_over_five_iterations_is_a_significant_regression(
    clean_baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "drops"
    code, out, _ = cli(
        [*RUN, "--demo-misbehave", "drops-change", "--output-dir", str(candidate), "--baseline", str(clean_baseline)],
        capsys,
    )
    assert code == 1
    # The comparison is printed after the run's summary, and written beside the run.
    assert "REGRESSED: 1 unit(s) significantly worse" in out
    saved = json.loads((candidate / "compare.json").read_text(encoding="utf-8"))
    regressed = [
        (u["case_slug"], u["unit"], u["p_value"]) for case in saved["cases"] for u in case["units"] if u["regressed"]
    ]
    assert regressed == [("edit-two-changes-one-message", "check:nodeParameters#1", pytest.approx(1 / 252))]
    assert "demo_misbehave: None → 'drops-change'" in saved["setting_changes"]
    assert (candidate / "compare.html").exists()

    code, out, _ = cli(["compare", str(clean_baseline), str(candidate), "--output-dir", str(tmp_path / "cmp")], capsys)
    assert code == 1
    row = next(line for line in out.splitlines() if "check:nodeParameters#1" in line)
    assert "5/5 always-passes" in row
    assert "0/5 always-fails" in row
    assert "REGRESSED" in row
    # The unit the misbehaviour leaves alone is not in the changed rows.
    assert "folder-with-decoys  check" not in out


def test_clean_against_clean_exits_0_and_the_markdown_carries_the_comparison(
    clean_baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "again"
    code, out, err = cli(
        [*RUN, "--output-dir", str(candidate), "--baseline", str(clean_baseline), "--markdown"], capsys
    )
    assert code == 0
    # --markdown: stdout is the Markdown only (the per-case lines went to stderr).
    assert out.startswith("## threadcase: GREEN")
    assert "### Compared with baseline" in out
    assert "NO SIGNIFICANT REGRESSION" in out
    assert "PASS" in err
    assert (candidate / "summary.md").read_text(encoding="utf-8") == out

    code, out, _ = cli(["compare", str(clean_baseline / "journal.jsonl"), str(candidate), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["totals"]["regressed"] == 0


def test_a_missing_baseline_is_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli([*RUN, "--output-dir", str(tmp_path / "out"), "--baseline", str(tmp_path / "nope")], capsys)
    assert code == 2
    assert "journal not found" in err
    assert not (tmp_path / "out").exists()
