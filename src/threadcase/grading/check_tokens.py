"""Checks on what the agent spent: input and output tokens per live turn, as run debug counted them.

A turn is a conversational turn (one user message and everything the agent did in answer, the
``### Turn N`` of the transcript), and its numbers are the ones its header shows
(:func:`threadcase.render.turn_tokens`), so a verdict can be checked against the transcript. Seeded
turns are the case's history, not the agent's spending, and are not counted. A bound passes only when
run debug gave every live agent turn's numbers (a turn with none might be the one over the bound); a
turn measured over it fails whatever the others' numbers were.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from threadcase.grading.check_util import not_judged, verdict
from threadcase.records import RunRecord
from threadcase.render import TurnGroup, TurnTokens, group_turns, turn_tokens
from threadcase.verdicts import UnitVerdict

__all__ = ["token_budgets"]

Direction = Literal["in", "out"]


def _live_agent_groups(record: RunRecord) -> list[TurnGroup]:
    """The conversational turns in which the agent answered live (a seeded answer cost this run nothing)."""
    return [g for g in group_turns(record) if any(t.role == "assistant" and not t.seeded for t in g.answers)]


def _missing(tokens: TurnTokens) -> str | None:
    """Why a turn has no numbers a bound could be judged on; None when it has them."""
    if tokens.complete:
        return None
    if not tokens.runs:
        return "it names no run"
    if tokens.runs_read < tokens.runs:
        return f"run debug gave {tokens.runs_read} of its {tokens.runs} run(s)"
    return "run debug gave no step for it"


def _count(tokens: TurnTokens, direction: Direction) -> int:
    return tokens.tokens_in if direction == "in" else tokens.tokens_out


def _one_bound(unit: str, direction: Direction, limit: int, turns: list[tuple[TurnGroup, TurnTokens]]) -> UnitVerdict:
    word, kind = ("read", "input") if direction == "in" else ("wrote", "output")
    label = f"every live agent turn {word} at most {limit:,} {kind} tokens"
    if not turns:
        return not_judged(unit, label, "the agent answered no live turn, so there was no turn to measure")
    missing = [(g, why) for g, t in turns if (why := _missing(t)) is not None]
    over = [(g, t) for g, t in turns if t.complete and _count(t, direction) > limit]
    if missing and not over:
        # A turn without numbers may be the one over the bound: never a pass on what was not measured.
        gaps = "; ".join(f"turn {g.number}: {why}" for g, why in missing)
        reason = f"not every live agent turn has token numbers ({gaps}), so the bound cannot be judged"
        return not_judged(unit, label, reason)
    listed = "; ".join(
        f"turn {g.number}: "
        + (f"{_count(t, direction):,} {direction}" if t.complete else f"no numbers ({_missing(t)})")
        for g, t in turns
    )
    if not over:
        return verdict(unit, label, True, f"{listed}; max {max(_count(t, direction) for _, t in turns):,} ≤ {limit:,}")
    # A turn measured over the bound proves the failure, whatever another turn's missing numbers were.
    named = " and ".join(f"turn {g.number} ({_count(t, direction):,} {direction})" for g, t in over)
    reason = f"{named} {'exceeds' if len(over) == 1 else 'exceed'} {limit:,}; per turn: {listed}"
    first = next(t for t in over[0][0].answers if t.role == "assistant" and not t.seeded)
    return verdict(unit, label, False, reason, turn_index=first.index)


def token_budgets(record: RunRecord, max_in: int | None, max_out: int | None) -> Iterator[UnitVerdict]:
    """``maxInputTokensPerTurn`` and ``maxOutputTokensPerTurn`` over the live agent turns."""
    turns = [(group, turn_tokens(group, record)) for group in _live_agent_groups(record)]
    if max_in is not None:
        yield _one_bound("check:maxInputTokensPerTurn", "in", max_in, turns)
    if max_out is not None:
        yield _one_bound("check:maxOutputTokensPerTurn", "out", max_out, turns)
