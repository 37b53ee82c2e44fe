"""``threadcase report --merge``: refuses what is not comparable, renumbers iterations, recomputes statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.factory import result
from tests.results.helpers import cli
from threadcase.errors import ConfigError
from threadcase.harness.journal import JournalWriter, read_journal
from threadcase.harness.merge import merge_journals
from threadcase.harness.stats import case_stats
from threadcase.verdicts import CaseResult, RunContext, UnitStatus

CONTEXT = RunContext(
    suite="cases/golden",
    suite_hash="a" * 64,
    selection={"filter": None, "exclude": None, "tier": None, "tag": None},
    iterations=2,
    settings={"instance": "embedded-demo", "demo_misbehave": None, "judge_model": None},
)


def journal(
    path: Path,
    run_id: str,
    cases: dict[str, list[UnitStatus]],
    *,
    context: RunContext | None = CONTEXT,
    shard: str | None = None,
) -> Path:
    """A journal of ``run_id``: per case, one iteration per status (of unit #0)."""
    lines: list[CaseResult] = []
    for slug, statuses in cases.items():
        for iteration, status in enumerate(statuses):
            line = result(slug, iteration, (status,))
            line.run_id = run_id
            line.run_context = context.model_copy(update={"shard": shard}) if context is not None else None
            lines.append(line)
    with JournalWriter(path / "journal.jsonl") as writer:
        for line in lines:
            writer.append(line)
    return path


def test_shards_merge_into_one_run_with_its_own_id(tmp_path: Path) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass", "pass"]}, shard="1/2")
    b = journal(tmp_path / "b", "run-b", {"two": ["pass", "fail"]}, shard="2/2")
    merged = merge_journals([a, b])
    assert merged.warnings == []
    assert {r.run_id for r in merged.results} == {merged.run_id}
    assert merged.merged_from == ["run-a", "run-b"]
    assert merged.context is not None
    assert merged.context.shard is None
    assert [(r.case_slug, r.iteration) for r in merged.results] == [("one", 0), ("one", 1), ("two", 0), ("two", 1)]


def test_a_case_in_several_journals_keeps_every_iteration_renumbered(tmp_path: Path) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass", "pass"]})
    b = journal(tmp_path / "b", "run-b", {"one": ["fail", "pass", "fail"]})
    merged = merge_journals([a, b])
    assert [r.iteration for r in merged.results] == [0, 1, 2, 3, 4]
    assert all(r.record is not None and r.record.iteration == r.iteration for r in merged.results)
    (case,) = case_stats(merged.results)
    (unit,) = case.units
    assert (unit.iterations, unit.passes, unit.failures) == (5, 3, 2)
    # pass -> pass -> fail -> pass -> fail: three flips over four steps, in merged order.
    assert unit.flip_rate == pytest.approx(3 / 4)


def test_a_missing_shard_is_a_warning(tmp_path: Path) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass"]}, shard="1/3")
    b = journal(tmp_path / "b", "run-b", {"two": ["pass"]}, shard="3/3")
    assert merge_journals([a, b]).warnings == ["shard 2/3 is missing: its cases are not in the merged run"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"suite_hash": "b" * 64}, "suite: cases/golden"),
        ({"selection": {"filter": "edit", "exclude": None, "tier": None, "tag": None}}, "--filter: None → 'edit'"),
        ({"settings": {**CONTEXT.settings, "demo_misbehave": "drops-change"}}, "demo_misbehave"),
        ({"settings": {**CONTEXT.settings, "judge_model": "gpt-judge"}}, "judge_model"),
    ],
)
def test_journals_of_different_suites_or_settings_are_refused_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], named: str
) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass"]})
    b = journal(tmp_path / "b", "run-b", {"two": ["pass"]}, context=CONTEXT.model_copy(update=change))
    code, _, err = cli(["report", "--merge", str(a), str(b), "--output-dir", str(tmp_path / "m")], capsys)
    assert code == 2
    assert "refusing to merge journals of different suites or settings" in err
    assert named in err
    assert "--allow-mixed" in err
    assert not (tmp_path / "m" / "journal.jsonl").exists()

    code, _, err = cli(
        ["report", "--merge", str(a), str(b), "--allow-mixed", "--output-dir", str(tmp_path / "m")], capsys
    )
    assert code == 0
    assert "merged anyway" in err
    assert len(read_journal(tmp_path / "m")) == 2


def test_a_journal_without_context_cannot_be_vouched_for(tmp_path: Path) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass"]})
    b = journal(tmp_path / "b", "run-b", {"two": ["pass"]}, context=None)
    with pytest.raises(ConfigError, match="written before journals recorded their suite and settings"):
        merge_journals([a, b])
    assert len(merge_journals([a, b], allow_mixed=True).results) == 2


def test_the_same_run_twice_is_refused_even_when_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass"]})
    code, _, err = cli(["report", "--merge", str(a), str(a / "journal.jsonl"), "--allow-mixed"], capsys)
    assert code == 2
    assert "run run-a is also in" in err


def test_report_takes_one_run_unless_merging(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = journal(tmp_path / "a", "run-a", {"one": ["pass"]})
    b = journal(tmp_path / "b", "run-b", {"two": ["pass"]})
    code, _, err = cli(["report", str(a), str(b)], capsys)
    assert code == 2
    assert "pass --merge" in err
    code, _, err = cli(["report", "--merge", str(a)], capsys)
    assert code == 2
    assert "at least two" in err
