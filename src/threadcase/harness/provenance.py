"""What a journal line says about its run: the case digests and the :class:`RunContext`.

The runner stamps both on every result before it is journaled, so a journal alone is enough to
re-grade it (``harness.regrade``), merge it with its sibling shards (``harness.merge``) or compare it
with another run (``harness.compare``). Only settings that change what a verdict means go into the
context, and never a URL, a login, a key or a password.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio.lowlevel

from threadcase.case.fingerprint import case_hashes, suite_hash
from threadcase.grading.prompts import JUDGE_PROMPT_VERSION, VERIFIER_PROMPT_VERSION
from threadcase.models import ModelSettings
from threadcase.verdicts import CaseHashes, RunContext

if TYPE_CHECKING:
    from threadcase.case.loader import LoadedCase

__all__ = [
    "RunSettingsView",
    "SettingValue",
    "context_differences",
    "grading_settings",
    "hash_cases",
    "hash_cases_cooperatively",
    "run_context",
]

SettingValue = str | int | float | bool | None


class _Shard(Protocol):
    def __str__(self) -> str: ...


class RunSettingsView(Protocol):
    """What :func:`run_context` reads of ``harness.runner.RunSettings`` (which imports this module)."""

    @property
    def filter(self) -> str | None: ...
    @property
    def exclude(self) -> str | None: ...
    @property
    def tier(self) -> str | None: ...
    @property
    def tag(self) -> str | None: ...
    @property
    def base_urls(self) -> list[str]: ...
    @property
    def iterations(self) -> int: ...
    @property
    def shard(self) -> _Shard | None: ...
    @property
    def demo_misbehave(self) -> list[str]: ...
    @property
    def demo_faults(self) -> float: ...
    @property
    def demo_seed(self) -> int: ...
    @property
    def models(self) -> ModelSettings: ...
    @property
    def timeout_seconds(self) -> float: ...
    @property
    def inactivity_seconds(self) -> float | None: ...
    @property
    def calibration_threshold(self) -> float: ...
    @property
    def skip_calibration(self) -> bool: ...


def hash_cases(cases: Sequence[LoadedCase]) -> dict[str, CaseHashes]:
    """Slug -> digests, for every case given."""
    return {loaded.slug: case_hashes(loaded) for loaded in cases}


CASES_PER_STEP = 8
"""Cases :func:`hash_cases_cooperatively` digests between two checkpoints (~0.4 ms of work)."""


async def hash_cases_cooperatively(cases: Sequence[LoadedCase]) -> dict[str, CaseHashes]:
    """:func:`hash_cases` on the event loop, letting the lanes' logins proceed every few cases.

    The runner digests the selected cases while its lanes log in (each case file is read again:
    ~50 µs a case, 10 ms for 200), as it loads them (``load_suite_cooperatively``).
    """
    hashes: dict[str, CaseHashes] = {}
    for index, loaded in enumerate(cases):
        if index and index % CASES_PER_STEP == 0:
            await anyio.lowlevel.checkpoint()
        hashes[loaded.slug] = case_hashes(loaded)
    return hashes


def grading_settings(
    models: ModelSettings, *, calibration_threshold: float, skip_calibration: bool
) -> dict[str, SettingValue]:
    """The settings that decide how a stored conversation is graded (a re-grade replaces exactly these)."""
    return {
        "judge_model": models.judge_model,
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "verifier_prompt_version": VERIFIER_PROMPT_VERSION,
        "calibration_threshold": calibration_threshold if models.judge_enabled else None,
        "skip_calibration": skip_calibration if models.judge_enabled else None,
    }


def run_context(settings: RunSettingsView, suite: Path | str, hashes: Mapping[str, CaseHashes]) -> RunContext:
    """The context of a run of ``settings`` over the selected cases' ``hashes`` (before sharding)."""
    values: dict[str, SettingValue] = {
        "instance": "base-url" if settings.base_urls else "embedded-demo",
        "demo_misbehave": ",".join(sorted(settings.demo_misbehave)) or None,
        "demo_faults": settings.demo_faults,
        "demo_seed": settings.demo_seed if settings.demo_faults else None,
        "proxy_model": settings.models.proxy_model,
        "timeout_seconds": settings.timeout_seconds,
        "inactivity_seconds": settings.inactivity_seconds,
        **grading_settings(
            settings.models,
            calibration_threshold=settings.calibration_threshold,
            skip_calibration=settings.skip_calibration,
        ),
    }
    return RunContext(
        suite=str(suite),
        suite_hash=suite_hash(hashes.items()),
        selection={"filter": settings.filter, "exclude": settings.exclude, "tier": settings.tier, "tag": settings.tag},
        iterations=settings.iterations,
        shard=str(settings.shard) if settings.shard is not None else None,
        settings=values,
    )


def context_differences(first: RunContext, second: RunContext) -> list[str]:
    """``what: first -> second`` for each difference that makes two runs' verdicts incomparable.

    The suite (by its digest), the selection and the verdict-relevant settings; not the shard, the
    iteration count or where the suite sat on disk.
    """
    out: list[str] = []
    if first.suite_hash != second.suite_hash:
        out.append(
            f"suite: {first.suite or '?'} ({first.suite_hash[:12]}) → {second.suite or '?'} ({second.suite_hash[:12]})"
        )
    for key in sorted(set(first.selection) | set(second.selection)):
        if first.selection.get(key) != second.selection.get(key):
            out.append(f"--{key}: {first.selection.get(key)!r} → {second.selection.get(key)!r}")
    for key in sorted(set(first.settings) | set(second.settings)):
        if first.settings.get(key) != second.settings.get(key):
            out.append(f"{key}: {first.settings.get(key)!r} → {second.settings.get(key)!r}")
    return out
