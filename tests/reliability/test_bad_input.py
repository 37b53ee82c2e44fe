"""Bad input is one line and exit 2, never "internal error" (exit 3) or a traceback: odd case files and
paths, unwritable output locations, binary journals and traces."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.replay.tracebuilder import TraceBuilder
from tests.runner.test_run_demo import GOLDEN
from tests.test_cli_cases import run, write_case
from threadcase.cli import run as run_cli

CASE = {
    "conversation": [{"role": "user", "text": "Every Monday at 8am post the standup notes to #team on Slack"}],
    "complexity": "simple",
    "tags": ["t"],
    "checks": {"mustContain": ["Slack"]},
}


@pytest.fixture(autouse=True)
def no_gc_tuning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_cli, "prepare_process", lambda: None)


def _one_line_exit_2(code: int, err: str) -> list[str]:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert "Traceback" not in err
    assert "internal error" not in err
    return lines


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("opening", "Build it \\udfff now"),
        ("later", "\\ud800 and then"),
        ("key", None),
    ],
)
def test_a_lone_surrogate_is_refused_by_validate_and_run(
    where: str, text: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: an escaped lone surrogate passed validate and crashed run at the journal line."""
    raw = json.dumps(CASE)
    if where == "opening":
        raw = raw.replace("Every Monday", text or "")
    elif where == "later":
        raw = raw.replace('"conversation": [', '"conversation": [{"role": "user", "text": "' + (text or "") + '"}, ', 1)
        raw = raw.replace(
            '"conversation": [{"role": "user", "text": "' + (text or "") + '"}, {', '"conversation": [{', 1
        )
        raw = raw.replace('"tags": ["t"]', '"tags": ["t"], "description": "' + (text or "") + '"')
    else:
        raw = raw.replace('"tags"', '"ta\\udc80gs": 1, "tags"')
    (tmp_path / "odd.json").write_text(raw, encoding="utf-8")
    code, _, err = run(["validate", str(tmp_path)], capsys)
    (line,) = _one_line_exit_2(code, err)
    assert "lone surrogate" in line
    assert "\\u" in line  # shown escaped, never printed raw
    code, _, err = run(["run", "--suite", str(tmp_path), "--output-dir", str(tmp_path / "out")], capsys)
    _one_line_exit_2(code, err)


def test_a_file_name_with_a_newline_is_one_problem_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_case(tmp_path, "two\nlines", messageBudget="five")
    code, _, err = run(["validate", str(tmp_path)], capsys)
    (line,) = _one_line_exit_2(code, err)
    assert "two\\nlines.json" in line
    assert "messageBudget" in line


def test_a_huge_unknown_key_is_cut_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: a 10 MB key was printed whole (a 10 MB line)."""
    data: dict[str, Any] = dict(CASE)
    data["z" * 10_000_000] = 1
    (tmp_path / "big.json").write_text(json.dumps(data), encoding="utf-8")
    started = time.perf_counter()
    code, _, err = run(["validate", str(tmp_path)], capsys)
    (line,) = _one_line_exit_2(code, err)
    assert len(line) < 2000
    assert "unknown key 'zzzz" in line
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("thread_id", ["../outside/evil", "a/b", "..", "x\ny", "/etc/passwd", "-rf", "a" * 300])
def test_a_replay_thread_id_that_is_not_a_file_name_fails_validate(
    thread_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: ``"../outside/evil"`` passed validate and was refused only at run time."""
    write_case(tmp_path, "replayed", datasets=["seeded"], seed={"mode": "replay", "threadId": thread_id})
    code, _, err = run(["validate", str(tmp_path)], capsys)
    (line,) = _one_line_exit_2(code, err)
    assert "seed.threadId" in line
    assert "cannot be a thread id" in line


def test_a_plain_thread_id_still_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_case(tmp_path, "replayed", datasets=["seeded"], seed={"mode": "replay", "threadId": "3f2a-thread_9:x.y"})
    code, out, _ = run(["validate", str(tmp_path)], capsys)
    assert code == 0, out


def test_a_symlink_loop_is_a_problem_not_an_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    write_case(
        suite, "fine", **{k: v for k, v in CASE.items() if k != "conversation"}, conversation=CASE["conversation"]
    )
    (suite / "a.json").symlink_to("b.json")
    (suite / "b.json").symlink_to("a.json")
    code, _, err = run(["validate", str(suite)], capsys)
    lines = _one_line_exit_2(code, err)
    assert len(lines) == 2
    assert all("symlink loop" in line for line in lines)
    code, _, err = run(["validate", str(suite / "a.json")], capsys)
    assert "symlink loop" in _one_line_exit_2(code, err)[0]
    code, _, err = run(["run", "--suite", str(suite), "--output-dir", str(tmp_path / "out")], capsys)
    assert "symlink loop" in _one_line_exit_2(code, err)[0]


def test_a_pipe_named_directly_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: a FIFO (what ``<(...)`` gives) or /dev/stdin named directly read "no such file"."""
    fifo = tmp_path / "case.json"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(CASE))

    writer = threading.Thread(target=feed)
    writer.start()
    code, out, err = run(["validate", str(fifo)], capsys)
    writer.join(5)
    assert code == 0, err
    assert "1 case valid" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--output-dir", "/proc/self/fdinfo"], "cannot write there"),
        (["--output-dir", "{file}/sub"], "cannot create it"),
    ],
)
def test_an_unwritable_output_dir_is_a_usage_error(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    argv = [a.replace("{file}", str(afile)) for a in argv]
    code, _, err = run(["run", "--suite", str(GOLDEN), "--filter", "folder", *argv], capsys)
    (line,) = _one_line_exit_2(code, err)
    assert message in line


def test_report_into_a_file_or_from_a_binary_journal_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, _, _ = run(["run", "--suite", str(GOLDEN), "--filter", "folder", "--output-dir", str(out), "--json"], capsys)
    assert code == 0
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run(["report", str(out / "journal.jsonl"), "--output-dir", str(afile)], capsys)
    assert "is a file, not a directory" in _one_line_exit_2(code, err)[0]
    code, _, err = run(["report", str(out / "journal.jsonl"), "--output-dir", str(afile / "below")], capsys)
    assert "cannot write" in _one_line_exit_2(code, err)[0]
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    code, _, err = run(["report", str(binary)], capsys)
    assert "not a threadcase journal" in _one_line_exit_2(code, err)[0]
    empty = tmp_path / "empty-run"
    empty.mkdir()
    code, _, err = run(["report", str(empty)], capsys)
    assert "journal not found" in _one_line_exit_2(code, err)[0]


def test_replay_export_to_a_bad_path_or_from_a_binary_trace_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = TraceBuilder("th-1")
    builder.turn("Build a daily digest to #ops", "Built it.")
    builder.turn("Now also email it to me", "Done.")
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in builder.runs), encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, message in ((afile / "x.json", "cannot write it"), (Path("/proc/x.json"), "cannot write it")):
        code, _, err = run(["replay", "export", "th-1", "-o", str(target), "--from-trace", str(trace)], capsys)
        assert message in _one_line_exit_2(code, err)[0]
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00" * 100)
    code, _, err = run(
        ["replay", "export", "th-1", "-o", str(tmp_path / "o.json"), "--from-trace", str(binary)], capsys
    )
    assert "not UTF-8" in _one_line_exit_2(code, err)[0]
