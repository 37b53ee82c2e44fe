"""What a journal line records about its run: digests that ignore grading-only edits, no secrets."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import SecretStr

from tests.results.helpers import GOLDEN, edit_case, golden_suite
from threadcase.case.fingerprint import case_hashes, changed_parts
from threadcase.case.loader import load_case_file
from threadcase.harness.provenance import hash_cases, run_context
from threadcase.harness.runner import RunSettings
from threadcase.models import ModelSettings


def test_grading_only_edits_change_no_conversation_digest(tmp_path: Path) -> None:
    path = golden_suite(tmp_path, "multi-turn-ordered-changes") / "multi-turn-ordered-changes.json"
    before = case_hashes(load_case_file(path))
    edit_case(path, checks={"maxLines": 3}, processExpectations=["Asks nothing twice"], tags=["x"], description="d")
    after = case_hashes(load_case_file(path))
    assert changed_parts(before, after) == []
    assert before.file != after.file  # the file itself did change: its LangSmith example gets a new version
    # Whitespace and key order are not a change of the case either.
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(dict(reversed(list(document.items())))), encoding="utf-8")
    assert changed_parts(after, case_hashes(load_case_file(path))) == []


def test_the_run_context_names_no_url_login_or_key() -> None:
    settings = RunSettings(
        suite=GOLDEN,
        base_urls=["https://owner:hunter2-pass@n8n.example.com"],
        email="owner@example.com",
        password=SecretStr("hunter2-pass"),
        models=ModelSettings(api_key=SecretStr("sk-live-abcdefgh1234"), judge_model="judge-x"),
        shard="2/3",
    )
    context = run_context(settings, GOLDEN, hash_cases([load_case_file(GOLDEN / "folder-with-decoys.json")]))
    dumped = context.model_dump_json()
    for private in ("hunter2", "owner", "n8n.example.com", "sk-live"):
        assert private not in dumped
    assert context.settings["instance"] == "base-url"
    assert context.settings["judge_model"] == "judge-x"
    assert context.shard == "2/3"
