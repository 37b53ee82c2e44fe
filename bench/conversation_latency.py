"""The harness's own share of a turn: from the server's ``run-finish`` to the harness's next request.

Serves the demo platform with a tiny builder agent, stamps the moment the platform appends each
``run-finish`` to the thread's event log (a wrapper around ``EventLog.append``, installed by this
script only), and stamps every thread request as it arrives (an ASGI wrapper); both run in this
process, so one monotonic clock covers both sides. One conversation of
``--turns`` scripted turns goes through the real :func:`converse` (event stream, status check,
follow-up decision, chat). Reported: the gap to the next request of any kind (the status check that
follows every run-finish) and the gap to the next chat message, median and p99, in milliseconds.
Targets (DESIGN.md): next request median < 20 ms, p99 < 100 ms.

Run: ``python -m bench.conversation_latency [--turns 60]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

import anyio

from threadcase import records
from threadcase.case import schema
from threadcase.credentials.seeder import CredentialSeeder
from threadcase.demo_instance import DemoSettings, create_app
from threadcase.demo_instance.agent.protocol import AgentContext, TurnInput
from threadcase.demo_instance.events import EventLog
from threadcase.demo_instance.serve import serving
from threadcase.harness.conversation import Budgets, converse
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings

turn_ends: list[float] = []
requests: list[tuple[float, str]] = []


async def stamping_agent(turn: TurnInput, ctx: AgentContext) -> None:
    await ctx.say(f"Noted: {turn.message}")


def _stamp_run_finish() -> None:
    original = EventLog.append

    def append(self: EventLog, type: str, payload: dict[str, Any], **where: Any) -> dict[str, Any]:
        event = original(self, type, payload, **where)
        if type == "run-finish":
            turn_ends.append(time.perf_counter())
        return event

    EventLog.append = append  # type: ignore[method-assign]


class Stamp:
    """ASGI wrapper: records (arrival time, path) of every thread request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and "/instance-ai/" in scope["path"] and "/events/" not in scope["path"]:
            requests.append((time.perf_counter(), scope["path"]))
        await self.app(scope, receive, send)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(turns: int) -> None:
    _stamp_run_finish()
    settings = DemoSettings()
    app = Stamp(create_app(settings, agent=stamping_agent))
    case = schema.Case.model_validate(
        {
            "conversation": [{"role": "user", "text": f"message number {i}"} for i in range(turns)],
            "complexity": "simple",
            "tags": ["bench"],
            "messageBudget": turns,
            "processExpectations": ["responds"],
        }
    )
    async with (
        serving(app) as url,
        InstanceClient(url, email=settings.email, password=settings.password.get_secret_value()) as client,
    ):
        project = await client.personal_project()
        thread_id = str(uuid.uuid4())
        await client.create_thread(thread_id, project.id)
        record = records.RunRecord(case_slug="bench", thread_id=thread_id, mode=case.mode)
        started = time.perf_counter()
        await converse(
            case,
            client=client,
            thread_id=thread_id,
            project_id=project.id,
            seed=None,
            live_opening=None,
            credentials=CredentialSeeder(client, environ={}),
            models=ModelSettings(),
            budgets=Budgets(turn_seconds=60, inactivity_seconds=30),
            record=record,
        )
        wall = time.perf_counter() - started
    next_any: list[float] = []
    next_chat: list[float] = []
    for end in turn_ends[:-1]:
        after = [(t, p) for t, p in requests if t > end]
        if after:
            next_any.append((after[0][0] - end) * 1000)
        chats = [t for t, p in after if "/chat/" in p and not p.endswith("/cancel")]
        if chats:
            next_chat.append((chats[0] - end) * 1000)
    assert record.ended_by == "script-exhausted", record.ended_by
    print(f"turns={turns} wall_s={wall:.2f} follow_ups={record.follow_ups_sent}")
    print(
        f"next_request_median_ms={statistics.median(next_any):.2f} next_request_p99_ms={_pct(next_any, 0.99):.2f} "
        f"next_chat_median_ms={statistics.median(next_chat):.2f} next_chat_p99_ms={_pct(next_chat, 0.99):.2f} "
        f"samples={len(next_any)}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    anyio.run(main, args.turns)
