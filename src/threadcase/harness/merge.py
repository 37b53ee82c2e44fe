"""Merge journals into one run: the shards of a CI matrix, or repeated runs of one suite.

:func:`merge_journals` is the Python API behind ``threadcase report --merge``. The merged run gets
its own id (every line is re-stamped with it, and its context lists the runs it was merged from), so
its statistics are computed over every iteration of every journal as one run's would be. A case
present in several journals keeps all its iterations, renumbered one after another (journal order)
so that pass@k and flip rates see them as distinct iterations.

Journals are refused, unless ``allow_mixed``, when they are not comparable: a different suite (by the
digest of the selected case files), a different selection, or different verdict-relevant settings
(instance kind, demo misbehaviour, models, prompt versions, budgets), or a journal too old to say.
The same journal (or run) given twice is always refused: it would count every iteration twice.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from pathlib import Path

from threadcase.errors import ConfigError
from threadcase.harness.journal import journal_path, read_journal
from threadcase.harness.provenance import context_differences
from threadcase.verdicts import CaseResult, RunContext

__all__ = ["MergedRun", "merge_journals"]


@dataclasses.dataclass(frozen=True)
class MergedRun:
    """The merged results (re-stamped, iterations renumbered) and what the merge noticed."""

    results: list[CaseResult]
    run_id: str
    merged_from: list[str]
    """The source runs' ids, in the order given."""
    context: RunContext | None
    warnings: list[str]
    """Mixed journals merged anyway, missing shards, ...: one line each, for the console."""


@dataclasses.dataclass(frozen=True)
class _Source:
    path: Path
    results: list[CaseResult]
    run_ids: list[str]
    context: RunContext | None


def _read(path: Path) -> _Source:
    journal = journal_path(path)
    results = read_journal(journal)
    if not results:
        raise ConfigError(f"{journal}: the journal holds no case-iteration; nothing to merge")
    run_ids = list(dict.fromkeys(r.run_id for r in results))
    context = next((r.run_context for r in results if r.run_context is not None), None)
    return _Source(journal, results, run_ids, context)


def _incompatibilities(sources: Sequence[_Source]) -> list[str]:
    first = sources[0]
    problems: list[str] = []
    for source in sources:
        if source.context is None:
            problems.append(f"{source.path} was written before journals recorded their suite and settings")
    if problems:
        return problems
    assert first.context is not None
    for source in sources[1:]:
        assert source.context is not None
        differences = context_differences(first.context, source.context)
        if differences:
            problems.append(f"{source.path} differs from {first.path}: {'; '.join(differences)}")
    return problems


def _shard_warnings(contexts: Sequence[RunContext]) -> list[str]:
    shards = [c.shard for c in contexts]
    if not any(shards):
        return []
    parsed = {(int(s.split("/")[0]), int(s.split("/")[1])) for s in shards if s}
    counts = {count for _, count in parsed}
    if len(counts) > 1 or None in shards:
        return ["the journals mix shard splits (" + ", ".join(s or "whole run" for s in shards) + ")"]
    count = counts.pop()
    missing = [f"{i}/{count}" for i in range(1, count + 1) if (i, count) not in parsed]
    return [f"shard {m} is missing: its cases are not in the merged run" for m in missing]


def merge_journals(paths: Sequence[Path], *, allow_mixed: bool = False) -> MergedRun:
    """Read and merge the journals (or run directories) at ``paths`` (see the module docstring)."""
    if len(paths) < 2:
        raise ConfigError("--merge needs at least two journals or run directories")
    sources = [_read(path) for path in paths]
    seen: dict[str, Path] = {}
    for source in sources:
        for run_id in source.run_ids:
            if run_id in seen:
                raise ConfigError(
                    f"{source.path}: run {run_id} is also in {seen[run_id]}; each run may be merged once "
                    "(its iterations would count twice)"
                )
            seen[run_id] = source.path
    warnings: list[str] = []
    problems = _incompatibilities(sources)
    if problems and not allow_mixed:
        raise ConfigError(
            f"refusing to merge journals of different suites or settings: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; pass --allow-mixed to merge them anyway"
        )
    warnings.extend(f"merged anyway (--allow-mixed): {p}" for p in problems)
    contexts = [s.context for s in sources if s.context is not None]
    if len(contexts) == len(sources):
        warnings.extend(_shard_warnings(contexts))

    run_id = uuid.uuid4().hex[:12]
    merged_from = [run_id_ for source in sources for run_id_ in source.run_ids]
    context = None
    if sources[0].context is not None:
        context = sources[0].context.model_copy(update={"shard": None, "merged_from": merged_from})
    next_iteration: dict[str, int] = {}
    results: list[CaseResult] = []
    for source in sources:
        offsets = dict(next_iteration)
        for result in source.results:
            iteration = offsets.get(result.case_slug, 0) + result.iteration
            next_iteration[result.case_slug] = max(next_iteration.get(result.case_slug, 0), iteration + 1)
            update: dict[str, object] = {"run_id": run_id, "run_context": context, "iteration": iteration}
            if result.record is not None and iteration != result.iteration:
                update["record"] = result.record.model_copy(update={"iteration": iteration})
            results.append(result.model_copy(update=update))
    return MergedRun(results=results, run_id=run_id, merged_from=merged_from, context=context, warnings=warnings)
