"""Script files: what loads, and one clear line (file, JSON path, value) for what does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from threadcase.standins.script import ScriptError, load_script

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_a_minimal_script_loads_with_defaults(tmp_path: Path) -> None:
    script = load_script(write(tmp_path, {"rules": [{"id": "hi", "reply": {"text": "Hello"}}]}))
    assert script.models == ["scripted"]
    rule = script.rules[0]
    assert (rule.when.agent, rule.when.after, rule.reply.text) == ("orchestrator", None, "Hello")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "not valid JSON"),
        ({"rules": []}, "rules: List should have at least 1 item"),
        (
            {"rules": [{"id": "a", "reply": {"text": "x"}, "extra": 1}]},
            "rules[0].extra: Extra inputs are not permitted (got 1)",
        ),
        (
            {"rules": [{"id": "a", "when": {"agent": "judge"}, "reply": {"text": "x"}}]},
            "rules[0].when.agent: Input should be 'orchestrator', ",
        ),
        (
            {"rules": [{"id": "a", "when": {"userText": {"regex": "("}}, "reply": {"text": "x"}}]},
            "is not a valid regular expression",
        ),
        (
            {"rules": [{"id": "a", "reply": {}}]},
            "a reply needs exactly one of text and/or toolCalls, json, error (got none)",
        ),
        (
            {"rules": [{"id": "a", "reply": {"text": "x", "json": {}}}]},
            "a reply needs exactly one of text and/or toolCalls, json, error (got text/toolCalls, json)",
        ),
        (
            {"rules": [{"id": "a", "reply": {"text": "x"}}, {"id": "a", "reply": {"text": "y"}}]},
            "rule id 'a' is used twice",
        ),
        ({"rules": [{"id": "a", "reply": {"error": {"status": 200, "message": "m"}}}]}, "rules[0].reply.error.status"),
        (
            {"rules": [{"id": "a", "when": {"user_text": {}}, "reply": {"text": "x"}}]},
            "rules[0].when.user_text: Extra inputs",
        ),
    ],
)
def test_a_broken_script_names_the_file_the_path_and_the_problem(tmp_path: Path, data: Any, expected: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "Traceback" not in message


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"cannot read the script: No such file or directory$"):
        load_script(tmp_path / "absent.json")


def test_every_script_in_the_repository_loads() -> None:
    scripts = sorted(REPO.glob("cases/**/*.script.json")) + sorted(REPO.glob("docs/**/*.script.json"))
    assert scripts, "the repository ships at least one script (the n8n suite's)"
    for path in scripts:
        assert load_script(path).rules
