"""Small helpers of the results tests: the CLI in-process, suites copied from the golden one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from threadcase.cli import main

GOLDEN = Path(__file__).resolve().parents[2] / "cases" / "golden"


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``threadcase ARGV`` in-process; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def golden_suite(target: Path, *slugs: str) -> Path:
    """A suite of copies of golden cases (so a test may edit them)."""
    target.mkdir(parents=True, exist_ok=True)
    for slug in slugs:
        shutil.copy(GOLDEN / f"{slug}.json", target / f"{slug}.json")
    return target


def edit_case(path: Path, **changes: Any) -> None:
    """Set top-level keys of a case file (``checks`` merges into the existing checks)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key == "checks":
            document.setdefault("checks", {}).update(value)
        else:
            document[key] = value
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
