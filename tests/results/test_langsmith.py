"""LangSmith experiments and datasets through the real ``langsmith`` SDK, asserted from the fake's side."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.langsmith_server import FakeLangSmith
from tests.results.helpers import GOLDEN, cli, edit_case
from threadcase.harness.journal import read_journal

KEY = "lsv2-test-key"
EVAL_TOKEN = "kq9-zulu-token-value-3317"
MODEL_KEY = "mk-private-model-key-5580"
ROW_VALUE = "ROW-VALUE-7731"

ORDERS = {
    "description": "Form submissions go into the orders table.",
    "complexity": "simple",
    "tags": ["data-table"],
    "datasets": ["full"],
    # A user pasting a secret into the chat: it must be scrubbed wherever the case or transcript goes.
    "conversation": [
        {"role": "user", "text": f"When a form is submitted, insert the row into the orders data table ({EVAL_TOKEN})"}
    ],
    "executionScenarios": [
        {
            "name": "stores an order",
            "description": "One form submission.",
            "dataSetup": 'The form receives {"order_ref": "A-17"}.',
            "successCriteria": "The orders table holds a row with order_ref A-17.",
            "seedDataTables": [
                {
                    "id": "orders-table-0003",
                    "name": "orders",
                    "columns": [{"name": "order_ref", "type": "string"}],
                    "rows": [{"order_ref": ROW_VALUE}, {"order_ref": f"{ROW_VALUE}-B"}],
                }
            ],
        }
    ],
    "processExpectations": [f"The agent never repeats the key {MODEL_KEY}"],
    "checks": {"toolsCalled": ["build-workflow"], "mustContain": ["no such words in any reply"]},
}
REPLAY = {
    "complexity": "simple",
    "tags": ["replay"],
    "datasets": ["seeded"],
    "seed": {"mode": "replay", "threadId": "thread-of-a-real-person"},
    "checks": {"toolsNotCalled": ["delete-workflow"]},
}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "cases"
    path.mkdir()
    (path / "orders-form.json").write_text(json.dumps(ORDERS), encoding="utf-8")
    (path / "replayed-thread.json").write_text(json.dumps(REPLAY), encoding="utf-8")
    (path / "folder-with-decoys.json").write_text((GOLDEN / "folder-with-decoys.json").read_text("utf-8"), "utf-8")
    return path


@pytest.fixture
def langsmith_env(monkeypatch: pytest.MonkeyPatch, fake_langsmith: tuple[FakeLangSmith, str]) -> FakeLangSmith:
    fake, url = fake_langsmith
    monkeypatch.setenv("LANGSMITH_ENDPOINT", url)
    monkeypatch.setenv("LANGSMITH_API_KEY", KEY)
    monkeypatch.setenv("EVAL_SLACK_ACCESS_TOKEN", EVAL_TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    for name in ("THREADCASE_PROXY_MODEL", "THREADCASE_JUDGE_MODEL", "OPENAI_BASE_URL", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return fake


def _run(suite: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    replays = out.parent / "replays"
    replays.mkdir(exist_ok=True)
    argv = ["run", "--suite", str(suite), "--output-dir", str(out), "--replay-dir", str(replays), "--no-progress"]
    return cli([*argv, *extra], capsys)


def test_a_run_is_recorded_as_an_experiment_with_runs_and_feedback(
    suite: Path, tmp_path: Path, langsmith_env: FakeLangSmith, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = langsmith_env
    code, _, err = _run(
        suite,
        tmp_path / "out",
        capsys,
        "--iterations",
        "2",
        "--langsmith-experiment",
        "agent-v2",
        "--langsmith-dataset",
        "team-cases",
    )
    assert code == 1, err  # the deliberately impossible mustContain fails
    results = read_journal(tmp_path / "out")

    (dataset,) = fake.datasets()
    assert dataset["name"] == "team-cases"
    examples = {e["metadata"]["case"]: e for e in fake.examples(dataset["id"])}
    # One example per case; the replay case never leaves the machine.
    assert set(examples) == {"orders-form", "folder-with-decoys"}
    for slug, example in examples.items():
        digest = hashlib.sha256((suite / f"{slug}.json").read_bytes()).hexdigest()
        assert example["metadata"]["case_file_sha256"] == digest
        assert example["inputs"]["case"] == slug
    definition = examples["orders-form"]["inputs"]["definition"]
    assert definition["executionScenarios"][0]["seedDataTables"][0]["rows"] == "<2 row(s) omitted>"

    experiment = fake.experiment("agent-v2")
    assert experiment is not None
    assert experiment["reference_dataset_id"] == dataset["id"]
    assert experiment["end_time"] is not None
    runs = fake.runs_of("agent-v2")
    assert sorted((r["name"], r["inputs"]["iteration"]) for r in runs) == [
        ("folder-with-decoys", 0),
        ("folder-with-decoys", 1),
        ("orders-form", 0),
        ("orders-form", 1),
    ]
    for run in runs:
        assert run["reference_example_id"] == examples[run["name"]]["id"]
        assert run["outputs"]["transcript"].startswith("### Turn 1")
        assert run["extra"]["metadata"]["threadcase_run_id"] == results[0].run_id

    # One feedback per unit: pass 1, fail 0; not judged is a comment, never a score.
    by_run = {r["id"]: r for r in runs}
    feedback: dict[tuple[str, int, str], dict[str, Any]] = {}
    for item in fake.feedback:
        run = by_run[item["run_id"]]
        assert item["session_id"] == experiment["id"]
        feedback[(run["name"], run["inputs"]["iteration"], item["key"])] = item
    expected = {
        (r.case_slug, r.iteration, v.unit): v for r in results if r.case_slug != "replayed-thread" for v in r.verdicts
    }
    assert set(feedback) == set(expected)
    for key, verdict in expected.items():
        item = feedback[key]
        if verdict.status == "pass":
            assert item["score"] == 1
        elif verdict.status == "fail":
            assert item["score"] == 0
        else:
            assert "score" not in item or item["score"] is None
            assert item["comment"].startswith("not judged: ")
    assert {v.status for v in expected.values()} >= {"pass", "fail", "not_judged"}

    # Nothing secret and no table row ever reached LangSmith; the key only ever travelled as the header.
    sent = fake.bodies_text()
    for secret in (EVAL_TOKEN, MODEL_KEY, ROW_VALUE, KEY, "thread-of-a-real-person"):
        assert secret not in sent, secret
    assert {r.api_key for r in fake.requests} == {KEY}
    assert "experiment 'agent-v2': 4 run(s)" in err
    assert "skipped replayed-thread: a replay case" in err


def test_shards_fill_one_experiment_and_a_changed_case_makes_a_new_version(
    suite: Path, tmp_path: Path, langsmith_env: FakeLangSmith, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = langsmith_env
    (suite / "replayed-thread.json").unlink()
    flags = ["--langsmith-experiment", "nightly", "--filter", "folder"]
    assert _run(suite, tmp_path / "one", capsys, *flags)[0] == 0
    assert _run(suite, tmp_path / "two", capsys, *flags)[0] == 0
    assert len(fake.runs_of("nightly")) == 2
    assert len(fake.examples()) == 1
    assert len(fake.example_writes) == 1  # the same file: the example was reused, not rewritten

    edit_case(suite / "folder-with-decoys.json", description="Lists one folder's workflows, not the decoys.")
    assert _run(suite, tmp_path / "three", capsys, *flags)[0] == 0
    versions = [w for w in fake.example_writes if w["metadata"]["case"] == "folder-with-decoys"]
    assert len(versions) == 2
    assert versions[0]["id"] == versions[1]["id"]
    assert versions[0]["metadata"]["case_file_sha256"] != versions[1]["metadata"]["case_file_sha256"]
    assert versions[1]["inputs"]["definition"]["description"].startswith("Lists one folder")


def test_an_experiment_name_held_by_a_tracing_project_is_refused_after_the_run(
    suite: Path, tmp_path: Path, langsmith_env: FakeLangSmith, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = langsmith_env
    fake.add_runs(fake.workspaces[0].id, "production-traces", [])
    code, out, err = _run(
        suite, tmp_path / "out", capsys, "--filter", "folder", "--langsmith-experiment", "production-traces"
    )
    assert code == 3  # green run, results not recorded: the command says so
    assert "GREEN" in out
    assert "ExportError" in err
    assert "not an experiment on dataset" in err
    assert (tmp_path / "out" / "journal.jsonl").exists()


def test_without_a_key_the_run_is_refused_before_it_starts(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("THREADCASE_LANGSMITH_EXPERIMENT", "from-the-environment")
    code, _, err = _run(suite, tmp_path / "out", capsys)
    assert code == 2
    assert "--langsmith-experiment writes to LangSmith and needs LANGSMITH_API_KEY" in err
    assert not (tmp_path / "out").exists()


def test_dataset_push_refuses_replay_cases_by_name(
    suite: Path, langsmith_env: FakeLangSmith, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = langsmith_env
    code, out, err = cli(["dataset", "push", "--suite", str(suite)], capsys)
    assert code == 0, err
    assert "refused replayed-thread: a replay case holds someone's real conversation" in err
    (dataset,) = fake.datasets()
    assert dataset["name"] == "threadcase-cases"
    assert {e["metadata"]["case"] for e in fake.examples()} == {"orders-form", "folder-with-decoys"}
    assert "2 example(s) created" in out
    assert "thread-of-a-real-person" not in fake.bodies_text()

    code, _, err = cli(["dataset", "push", "--suite", str(suite), "--filter", "replayed"], capsys)
    assert code == 2
    assert "refused replayed-thread" in err


def test_a_finished_run_can_be_sent_again_from_its_journal(
    suite: Path, tmp_path: Path, langsmith_env: FakeLangSmith, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = langsmith_env
    assert _run(suite, tmp_path / "out", capsys, "--filter", "folder")[0] == 0
    assert fake.runs_of("later") == []
    code, _, err = cli(["report", str(tmp_path / "out"), "--langsmith-experiment", "later"], capsys)
    assert code == 0, err
    (run,) = fake.runs_of("later")
    assert run["extra"]["metadata"]["threadcase_run_id"] == read_journal(tmp_path / "out")[0].run_id
