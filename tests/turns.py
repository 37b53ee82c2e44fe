"""Drive one user turn over the instance client, answering every widget plainly (shared by tests)."""

from __future__ import annotations

from typing import Any

from threadcase import wire
from threadcase.instance import InstanceClient


async def drive_turn(client: InstanceClient, thread_id: str, message: str) -> str:
    """Subscribe first, chat, approve widgets (first option for questions), wait for this run's
    run-finish; returns its status."""
    async with client.subscribe(thread_id) as events:
        run_id = await client.chat(thread_id, wire.ChatRequest(message=message))
        while True:
            event = await events.next_event(20)
            assert event is not None, f"no event for 20 s during {message!r}"
            if event.type == "confirmation-request":
                payload = event.payload
                body: Any = wire.ApprovalAnswer(approved=True)
                if payload.get("inputType") == "questions":
                    body = wire.QuestionsAnswer(
                        answers=[
                            wire.QuestionAnswer(questionId=q["id"], selectedOptions=q.get("options", [])[:1])
                            for q in payload.get("questions", [])
                        ]
                    )
                await client.confirm(payload["requestId"], body)
            elif event.type == "run-finish" and event.runId == run_id:
                return str(event.payload.get("status"))
