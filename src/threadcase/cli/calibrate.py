"""``threadcase calibrate``: grade a hand-labelled calibration set with the configured judge.

Thin shell over :func:`threadcase.grading.calibration.calibrate_file`. Prints the agreement,
Cohen's kappa and each disagreement; exits 0 when the agreement clears the threshold, 1 when it does
not, 2 for a bad set file or no judge model configured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import click

from threadcase.case.loader import bundled_path
from threadcase.cli.model_options import model_options, model_settings
from threadcase.grading.calibration import DEFAULT_SET, DEFAULT_THRESHOLD, CalibrationResult, calibrate_file

__all__ = ["calibrate"]


def _render(result: CalibrationResult) -> str:
    lines = [
        f"judge {result.judge_model} ({result.prompt_version}) on {result.set_path}: {result.n} items",
        *([f"model: {result.judge.line()}"] if result.judge is not None else []),
        f"agreement {result.agreement:.2f}, Cohen's kappa {result.kappa:.2f}, threshold {result.threshold:.2f}"
        + (f", {result.unjudged} unjudged" if result.unjudged else ""),
    ]
    for item in result.items:
        if not item.agrees:
            lines.append(
                f"  disagree {item.id}: human {item.human}, judge {item.judge or 'no verdict'} — {item.reason}"
            )
    lines.append("calibrated" if result.passed else "NOT calibrated: the judge's verdicts would be not judged in runs")
    return "\n".join(lines)


@click.command()
@click.option(
    "--set",
    "set_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    envvar="THREADCASE_CALIBRATION_SET",
    show_envvar=True,
    help="Calibration set (JSONL of {id, transcript, expectation, human: pass|fail, note}). "
    "[default: ./cases/calibration/demo.jsonl, else the set shipped with threadcase]",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=DEFAULT_THRESHOLD,
    envvar="THREADCASE_CALIBRATION_THRESHOLD",
    show_envvar=True,
    show_default=True,
    help="Minimum agreement for the judge's verdicts to count in a run.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=4,
    envvar="THREADCASE_CALIBRATION_CONCURRENCY",
    show_envvar=True,
    show_default=True,
    help="Judge calls in flight at once.",
)
@click.option("--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print JSON.")
@model_options(roles=("judge",))
def calibrate(set_path: Path | None, threshold: float, concurrency: int, as_json: bool, **flags: Any) -> None:
    """Grade a calibration set with the judge (--judge-model / THREADCASE_JUDGE_MODEL); print agreement and kappa."""
    set_path = set_path or bundled_path(DEFAULT_SET)
    models = model_settings(flags)
    result = anyio.run(lambda: calibrate_file(set_path, models=models, threshold=threshold, concurrency=concurrency))
    click.echo(result.model_dump_json(indent=2) if as_json else _render(result))
    if not result.passed:
        raise SystemExit(1)
