"""``--shard I/N``: deterministic, balanced, stable; and four shards merged count what one run counts."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import anyio
import pytest

from tests.results.helpers import GOLDEN, cli
from threadcase.errors import ConfigError
from threadcase.harness.journal import read_journal
from threadcase.harness.runner import RunSettings
from threadcase.harness.shard import Shard, assign_shards, select_shard
from threadcase.harness.stats import case_stats
from threadcase.models import ModelSettings
from threadcase.report import run_and_report

SLUGS = [f"case-{word}-{n}" for n, word in enumerate(["alpha", "bravo", "delta", "echo", "kilo", "lima", "mike"] * 9)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 10])
def test_every_case_lands_in_exactly_one_shard_and_sizes_differ_by_at_most_one(count: int) -> None:
    assigned = assign_shards(SLUGS, count)
    assert set(assigned) == set(SLUGS)
    sizes = Counter(assigned.values())
    assert set(sizes) == set(range(1, count + 1))
    assert max(sizes.values()) - min(sizes.values()) <= 1


def test_the_split_does_not_depend_on_the_order_the_cases_were_listed_in() -> None:
    shuffled = list(SLUGS)
    random.Random(7).shuffle(shuffled)
    assert assign_shards(shuffled, 4) == assign_shards(SLUGS, 4)


def test_adding_a_case_moves_few_others() -> None:
    before = assign_shards(SLUGS, 4)
    after = assign_shards([*SLUGS, "case-new-one"], 4)
    moved = [slug for slug in SLUGS if before[slug] != after[slug]]
    # Numbering the sorted cases round robin would move about three quarters of them.
    assert len(moved) <= len(SLUGS) // 6, moved


def test_select_shard_keeps_the_given_order_and_refuses_an_empty_shard() -> None:
    chosen = select_shard(SLUGS, Shard.parse("2/3"), slug=str)
    assert chosen == [s for s in SLUGS if s in chosen]
    with pytest.raises(ConfigError, match="use at most 2 shard"):
        select_shard(["a", "b"], Shard.parse("3/3"), slug=str)


@pytest.mark.parametrize("spec", ["0/4", "5/4", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_flag_is_one_usage_line(spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["run", "--shard", spec, "--output-dir", str(tmp_path)], capsys)
    assert code == 2
    assert err.startswith("threadcase: --shard ")
    assert len(err.strip().splitlines()) == 1


def _unit_counts(path: Path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    return {
        (case.case_slug, unit.unit): (unit.iterations, unit.passes, unit.failures, unit.not_judged)
        for case in case_stats(read_journal(path))
        for unit in case.units
    }


def test_four_shards_of_the_golden_suite_merged_count_what_one_run_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def settings(out: Path, shard: str | None) -> RunSettings:
        return RunSettings(suite=GOLDEN, output_dir=out, shard=shard, models=ModelSettings())

    whole = anyio.run(run_and_report, settings(tmp_path / "whole", None))
    shards = [tmp_path / f"shard-{i}" for i in range(1, 5)]
    sizes = []
    for i, shard in enumerate(shards, start=1):
        anyio.run(run_and_report, settings(shard, f"{i}/4"))
        sizes.append(len(read_journal(shard)))
    assert sum(sizes) == whole.case_iterations
    assert max(sizes) - min(sizes) <= 1
    slugs = [{r.case_slug for r in read_journal(out)} for out in shards]
    assert all(a.isdisjoint(b) for i, a in enumerate(slugs) for b in slugs[i + 1 :])
    contexts = [read_journal(shard)[0].run_context for shard in shards]
    assert [c.shard for c in contexts if c is not None] == ["1/4", "2/4", "3/4", "4/4"]
    # Every shard names the same suite: the digest is taken before the split.
    assert len({c.suite_hash for c in contexts if c is not None}) == 1

    merged = tmp_path / "merged"
    code, printed, _ = cli(["report", "--merge", *map(str, shards), "--output-dir", str(merged)], capsys)
    assert code == whole.exit_code == 0
    assert _unit_counts(merged) == _unit_counts(tmp_path / "whole")
    assert "merged from 4 runs" in printed
    assert (merged / "report.html").exists()
