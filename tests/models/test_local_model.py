"""The local real-model recipe (``scripts/local-model check``): a small real model from PyPI packages,
served on loopback by llama.cpp, as the judge of ``threadcase calibrate`` and as judge and user of a few
golden cases. Minutes per case on two cores, so only ``pytest -m local_model`` runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.local_model
@pytest.mark.timeout(7200)
def test_a_real_small_model_is_refused_as_judge_and_drives_golden_cases(tmp_path: Path) -> None:
    work = ROOT / ".local-model"  # the model is 1 GB: kept between runs, like the recipe does
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "local-model"), "--dir", str(work), "check", "--port", "8091"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    calibration = json.loads((work / "results" / "calibration.json").read_text(encoding="utf-8"))
    assert calibration["n"] == 15
    assert calibration["unjudged"] < calibration["n"], "the judge answered nothing: the model path is broken"
    # A 1.5B judge is weak: the gate must refuse it (the README quotes the figures).
    assert not calibration["passed"]
    assert calibration["agreement"] < calibration["threshold"]
    runs = sorted((work / "results").glob("run-*"))
    assert runs, done.stderr[-2000:]
    lines = (runs[-1] / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    results = [json.loads(line) for line in lines]
    assert len(results) == 3
    for result in results:
        assert result["error"] is None, result["error"]
        assert {m["role"] for m in result["models"]} >= {"judge", "proxy"}
    # Every model answer was recorded: the same cases replay with no model at all.
    assert list((work / "results" / "answers").glob("*.json"))
