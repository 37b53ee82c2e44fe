"""Post-conversation collection reads from run debug what each live run's first request carried — the
compaction evidence on an instance without a memory route (n8n 2.41)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from threadcase import wire
from threadcase.errors import MissingRouteError
from threadcase.harness.conversation_collect import collect_after_conversation, run_prompts
from threadcase.records import RunPrompt, RunRecord, Turn

CAPTURE = Path(__file__).parents[1] / "instance" / "n8n_run_debug_compaction.json"


def _turns(seeded: int, *live_runs: str) -> list[Turn]:
    turns = [Turn(index=i, role="user" if i % 2 == 0 else "assistant", seeded=True) for i in range(seeded)]
    for run_id in live_runs:
        n = len(turns)
        turns += [
            Turn(index=n, role="user", text="q", run_ids=[run_id]),
            Turn(index=n + 1, role="assistant", text="a", run_ids=[run_id]),
        ]
    return turns


class _N8n241:
    """Like n8n 2.41: no memory route; run debug lists runs without steps and answers each run's record."""

    def __init__(self, debug: dict[str, dict[str, Any]]) -> None:
        self.debug = debug

    async def thread_memory(self, thread_id: str) -> Any:
        raise MissingRouteError("the instance has no route GET .../memory", status=404)

    async def thread_runs(self, thread_id: str) -> list[wire.RunSummary]:
        return [wire.RunSummary(runId=run_id, threadId=thread_id) for run_id in self.debug]

    async def run_debug(self, run_id: str) -> wire.RunDebug:
        return wire.RunDebug.model_validate({**self.debug[run_id], "runId": run_id})


@pytest.mark.anyio
async def test_run_debug_of_n8n_gives_each_live_runs_request_shape() -> None:
    capture = json.loads(CAPTURE.read_text(encoding="utf-8"))
    client: Any = _N8n241({"run-1": capture["full"], "run-2": capture["compacted"]})
    record = RunRecord(case_slug="c", thread_id="t1", mode="multi-turn", turns=_turns(26, "run-1", "run-2"))
    await collect_after_conversation(client, record, thread_id="t1", project_id="p1")
    assert record.memory_unavailable == "this instance exposes no memory route"
    assert record.run_prompts == [
        RunPrompt(run_id="run-1", turn=1, messages_sent=27, thread_messages=26, observations=None),
        RunPrompt(run_id="run-2", turn=2, messages_sent=1, thread_messages=28, observations=5),
    ]
    assert [p.compacted for p in record.run_prompts] == [False, True]
    assert set(record.usage) == {"run-1", "run-2"}  # the token numbers come from the same reads


def test_runs_without_recorded_messages_and_runs_outside_the_live_turns_give_nothing() -> None:
    record = RunRecord(case_slug="c", thread_id="t1", mode="multi-turn", turns=_turns(2, "run-1"))
    demo_step = wire.StepInput.model_validate({"stepNumber": 0})  # messages not recorded
    assert run_prompts(record, {"run-1": demo_step}) == []
    sent = wire.StepInput.model_validate({"messages": [{"role": "user", "content": "q"}] * 3})
    assert run_prompts(record, {"run-0": sent}) == []  # a run no live turn started (a seed's prior run)
    assert run_prompts(record, {"run-1": sent}) == [
        RunPrompt(run_id="run-1", turn=1, messages_sent=3, thread_messages=2, observations=None)
    ]
