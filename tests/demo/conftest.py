"""Fixtures for the demo platform's contract tests: a real server over loopback driven by a scripted
test agent, plain httpx clients, and an SSE reader.

The scripted agent reads its script from the chat message: a JSON list of steps
(``{"say": text}``, ``{"tool": name, "args": {...}}``, ``{"ask": request}``, ``{"spawn": role}``,
``{"sleep": seconds}``, ``{"fail": message}``, ``{"echo": true}``); any other message makes it say
``echo: <message>``. Every TurnInput it was shown is kept for assertions.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest

from threadcase.demo_instance.agent.protocol import AgentContext, ToolFailed, TurnInput
from threadcase.demo_instance.server import demo_server
from threadcase.demo_instance.settings import DEFAULT_PASSWORD, DemoSettings

OWNER = "owner@threadcase.dev"
MEMBER = "member@threadcase.dev"
MEMBER_PASSWORD = "member-pass"


@dataclass
class ScriptedAgent:
    """A test agent that does exactly what the message tells it to."""

    turns: list[TurnInput] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)

    async def __call__(self, turn: TurnInput, ctx: AgentContext) -> None:
        self.turns.append(turn)
        try:
            steps = json.loads(turn.message)
        except json.JSONDecodeError:
            steps = None
        if not isinstance(steps, list):
            await ctx.say(f"echo: {turn.message}")
            return
        for step in steps:
            if "say" in step:
                await ctx.say(step["say"])
            elif "tool" in step:
                try:
                    result = await ctx.call_tool(step["tool"], step.get("args", {}))
                except ToolFailed as exc:
                    self.results.append({"error": str(exc)})
                    await ctx.say(f"tool failed: {exc}")
                else:
                    self.results.append(result)
            elif "ask" in step:
                answer = await ctx.ask(step["ask"])
                self.results.append(answer)
                await ctx.say(f"answer: {json.dumps(answer, sort_keys=True)}")
            elif "spawn" in step:
                agent_id = await ctx.spawn(step["spawn"], step.get("target"))
                if step.get("complete", True):
                    await ctx.complete(agent_id)
            elif "sleep" in step:
                await anyio.sleep(step["sleep"])
            elif "fail" in step:
                raise RuntimeError(step["fail"])
            elif "state" in step:
                turn.state.update(step["state"])
            elif "echo" in step:
                await ctx.say(json.dumps({"history": len(turn.history), "state": turn.state}))


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent()


def settings(**overrides: Any) -> DemoSettings:
    base: dict[str, Any] = {"members": {MEMBER: MEMBER_PASSWORD}, "heartbeat_seconds": 10.0}
    base.update(overrides)
    return DemoSettings(**base)


@asynccontextmanager
async def server(agent: ScriptedAgent | None, **overrides: Any) -> AsyncIterator[str]:
    async with demo_server(settings(**overrides), agent=agent) as url:
        yield url


@pytest.fixture
async def demo(agent: ScriptedAgent) -> AsyncIterator[str]:
    async with server(agent) as url:
        yield url


@asynccontextmanager
async def session(url: str, email: str = OWNER, password: str = DEFAULT_PASSWORD) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client logged in to the demo instance."""
    async with httpx.AsyncClient(base_url=url, timeout=10.0) as client:
        response = await client.post("/rest/login", json={"emailOrLdapLoginId": email, "password": password})
        assert response.status_code == 200, response.text
        yield client


@pytest.fixture
async def owner(demo: str) -> AsyncIterator[httpx.AsyncClient]:
    async with session(demo) as client:
        yield client


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.status_code} {response.text}"
    return response.json()["data"]


async def new_thread(client: httpx.AsyncClient, thread_id: str, **extra: Any) -> str:
    project = data(await client.get("/rest/projects/personal"))
    body = {"threadId": thread_id, "projectId": project["id"], **extra}
    data(await client.post("/rest/instance-ai/threads", json=body))
    return str(project["id"])


class EventReader:
    """Reads one SSE connection: ``await reader.until(pred)`` collects events until one matches."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []
        self.comments: list[str] = []
        self._lines = response.aiter_lines()

    async def next(self, within: float = 5.0) -> dict[str, Any] | None:
        """The next event, or None when the stream ended."""
        data_line: str | None = None
        with anyio.fail_after(within):
            async for line in self._lines:
                if line.startswith(":"):
                    self.comments.append(line)
                elif line.startswith("data:"):
                    data_line = line[5:].strip()
                elif line == "" and data_line is not None:
                    event = dict(json.loads(data_line))
                    self.events.append(event)
                    return event
        return None

    async def until(self, predicate: Callable[[dict[str, Any]], bool], within: float = 5.0) -> list[dict[str, Any]]:
        start = len(self.events)
        with anyio.fail_after(within):
            while True:
                event = await self.next(within)
                if event is None:
                    raise AssertionError(f"stream ended before the awaited event; got {self.events[start:]}")
                if predicate(event):
                    return self.events[start:]


@asynccontextmanager
async def events(
    client: httpx.AsyncClient, thread_id: str, last_event_id: str | None = None
) -> AsyncIterator[EventReader]:
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with client.stream(
        "GET", f"/rest/instance-ai/events/{thread_id}", headers=headers, timeout=httpx.Timeout(10.0, read=15.0)
    ) as response:
        assert response.status_code == 200
        yield EventReader(response)


def finished(event: dict[str, Any]) -> bool:
    return bool(event["type"] == "run-finish")


async def chat(client: httpx.AsyncClient, thread_id: str, message: Any, **extra: Any) -> str:
    text = message if isinstance(message, str) else json.dumps(message)
    headers = extra.pop("headers", None)
    response = await client.post(
        f"/rest/instance-ai/chat/{thread_id}", json={"message": text, **extra}, headers=headers
    )
    return str(data(response)["runId"])
