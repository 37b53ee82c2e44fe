"""``threadcase validate``, ``list`` and ``schema``: output, exit codes, environment twins, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from threadcase.cli import main

FIXTURES = Path(__file__).parent / "cases"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write_case(directory: Path, name: str, **overrides: Any) -> Path:
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": "Build it."}],
        "complexity": "simple",
        "tags": ["t"],
        "outcomeExpectations": ["built"],
    }
    data.update(overrides)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_validate_reports_the_count(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(FIXTURES / "valid")], capsys)
    count = len(list((FIXTURES / "valid").glob("*.json")))
    assert (code, out, err) == (0, f"{count} cases valid\n", "")


def test_validate_prints_one_line_per_problem_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = {"mode": "inline", "workflows": [{"id": "wf-abcdefgh", "name": "A", "nodes": [], "connections": {}}]}
    bad = write_case(
        tmp_path,
        "file",
        conversation=[{"role": "user", "text": "", "attach": {"workflow": "wf-123"}}],
        seed=seed,
    )
    (tmp_path / "syntax.json").write_text('{\n  "tags": [\n}', encoding="utf-8")
    code, out, err = run(["validate", str(tmp_path)], capsys)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"{bad}: conversation[0].attach.workflow: 'wf-123' is not declared in seed.workflows (declared: 'wf-abcdefgh')",
        f"{tmp_path / 'syntax.json'}:3:1: invalid JSON at line 3, column 1: Expecting value",
    ]
    assert "Traceback" not in err


def test_validate_defaults_to_the_suite_from_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_case(tmp_path, "one")
    monkeypatch.setenv("THREADCASE_SUITE", str(tmp_path))
    assert run(["validate"], capsys) == (0, "1 case valid\n", "")
    other = tmp_path / "other"
    other.mkdir()
    write_case(other, "a")
    write_case(other, "b")
    assert run(["validate", "--suite", str(other)], capsys) == (0, "2 cases valid\n", "")
    assert run(["validate", str(other / "a.json")], capsys) == (0, "1 case valid\n", "")


def test_validate_of_a_missing_default_suite_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THREADCASE_SUITE", str(tmp_path / "absent"))
    assert run(["validate"], capsys) == (2, "", f"{tmp_path / 'absent'}: no such file or directory\n")


def test_validate_warns_and_still_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(
        tmp_path,
        "noted",
        conversation=[
            {"role": "user", "text": "Build it [politely]"},
            {"role": "user", "text": "[Pretend to be the CFO on a bad day.]"},
        ],
    )
    code, out, _ = run(["validate", str(tmp_path)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "1 case valid"
    assert lines[0].startswith(f'warning: {path}: conversation[0].text: note "politely" is in the opening turn')
    assert lines[1].startswith(
        f"warning: {path}: conversation[1].text: the scripted user cannot follow note "
        '"Pretend to be the CFO on a bad day."'
    )
    code, out, _ = run(["validate", "--json", str(tmp_path)], capsys)
    report = json.loads(out)
    assert [(w["case"], w["path"]) for w in report["warnings"]] == [
        ("noted", "conversation[0].text"),
        ("noted", "conversation[1].text"),
    ]


def test_validate_notes_prints_what_the_scripted_user_understands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case(
        tmp_path,
        "noted",
        conversation=[
            {"role": "user", "text": "Email the digest every morning"},
            {"role": "user", "text": "[When asked for the recipient, answer ops@initech.dev. Then approve the plan.]"},
        ],
    )
    code, out, _ = run(["validate", "--notes", str(tmp_path)], capsys)
    assert code == 0
    note = "When asked for the recipient, answer ops@initech.dev. Then approve the plan."
    head = f"{path}: conversation[1]: note {note!r}"
    assert out.splitlines()[:2] == [
        f"{head} -> answer with 'ops@initech.dev' (when asked about recipient (an email))",
        f"{head} -> approve the plan (if a plan is shown)",
    ]


def test_validate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_case(tmp_path, "good")
    code, out, _ = run(["validate", "--json", str(tmp_path)], capsys)
    assert (code, json.loads(out)) == (0, {"valid": True, "cases": ["good"], "warnings": []})
    write_case(tmp_path, "bad", complexity="hard")
    code, out, _ = run(["validate", "--json", str(tmp_path)], capsys)
    report = json.loads(out)
    assert code == 2
    assert report["valid"] is False
    assert report["problems"][0]["path"] == "complexity"
    assert report["problems"][0]["case"] == "bad"


def test_list_shows_slug_mode_seed_datasets_and_units(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["list", str(FIXTURES / "valid")], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["slug", "mode", "seed", "datasets", "units"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["single-prompt-webhook"] == ["single-prompt", "-", "full,pr", "2"]
    assert rows["inline-seed-attach"] == ["multi-turn", "inline", "full,seeded-inline", "2"]
    assert rows["replay-local"] == ["multi-turn", "replay", "seeded", "1"]
    assert rows["checks-transcript-rule"][-1] == "13"


def test_list_selection_flags_and_their_environment_twins(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = str(FIXTURES / "valid")
    _, out, _ = run(["list", "--json", "--tier", "pr", suite], capsys)
    assert [row["slug"] for row in json.loads(out)] == ["single-prompt-webhook"]
    _, out, _ = run(["list", "--json", "--filter", "seed,replay", "--exclude", "agent", suite], capsys)
    assert [row["slug"] for row in json.loads(out)] == ["inline-seed-attach", "replay-local"]
    monkeypatch.setenv("THREADCASE_TAG", "credentials")
    _, out, _ = run(["list", "--json", suite], capsys)
    (row,) = json.loads(out)
    assert row == {
        "slug": "credentials-card",
        "mode": "multi-turn",
        "seed": None,
        "datasets": ["full"],
        "units": 1,
        "path": str(FIXTURES / "valid" / "credentials-card.json"),
    }
    monkeypatch.setenv("THREADCASE_TAG", "no-such-tag")
    assert run(["list", suite], capsys) == (0, "", "no cases selected\n")


def test_list_of_a_broken_suite_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_case(tmp_path, "bad", tags="x")
    code, out, err = run(["list", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err.strip().endswith("bad.json: tags: 'x' is a string; expected a list")


def test_schema_prints_the_case_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["schema"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["additionalProperties"] is False
    assert set(document["required"]) == {"complexity", "tags"}
    properties = document["properties"]
    assert {"messageBudget", "processExpectations", "executionScenarios", "seed", "checks"} <= set(properties)
    assert "message_budget" not in properties
    assert properties["complexity"]["description"].startswith("How hard the build is")
    turn = document["$defs"]["ConversationTurn"]["properties"]["text"]
    assert {"type": "array", "items": {"type": "string"}} in turn["anyOf"]
    assert turn["description"].startswith("A string, or a list of lines")
    assert set(document["$defs"]["InlineSeed"]["properties"]) >= {"messages", "dataTables", "priorRuns"}


def test_the_console_script_prints_problems_without_a_traceback(tmp_path: Path) -> None:
    write_case(tmp_path, "old", buildExpectations=["x"])
    script = Path(sys.executable).parent / "threadcase"
    result = subprocess.run([str(script), "validate", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"{tmp_path / 'old.json'}: buildExpectations: 'buildExpectations' is no longer supported — split it into "
        "processExpectations (how the agent converses) and outcomeExpectations (what it built)\n"
    )


def test_pathological_json_is_an_invalid_json_problem_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: 100k nested ``[`` raised RecursionError and a 5000-digit integer ValueError."""
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (tmp_path / "bigint.json").write_text('{"messageBudget": ' + "9" * 5000 + "}", encoding="utf-8")
    code, out, err = run(["validate", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert sorted(err.splitlines()) == [
        f"{tmp_path / 'bigint.json'}: invalid JSON: an integer has more digits than Python reads (4300); "
        "write it as a string",
        f"{tmp_path / 'deep.json'}: invalid JSON: nested too deeply for the parser; flatten the structure",
    ]


def test_an_unexpected_error_is_one_internal_error_line_with_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: any exception outside the error tree escaped ``main()`` as a traceback."""
    import threadcase.cli.cases as cases_cli

    def broken(paths: Any) -> Any:
        raise KeyError("boom\nsecond line")

    monkeypatch.setattr(cases_cli, "load_suite", broken)
    monkeypatch.delenv("THREADCASE_DEBUG", raising=False)
    code, out, err = run(["validate", str(tmp_path)], capsys)
    assert (code, out) == (3, "")
    assert err == "threadcase: internal error: KeyError: 'boom\\nsecond line' — please report it\n"
    monkeypatch.setenv("THREADCASE_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["validate", str(tmp_path)])
