"""An in-memory AgentContext and a thread driver for the builder agent's unit tests.

The fake implements the platform's tools over dicts (same argument and result shapes as the protocol
docstring), records every say/tool call/widget, and answers widgets from a queue of confirm bodies
(or callables that see the request), so a test reads like a conversation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from threadcase.demo_instance.agent import run_turn
from threadcase.demo_instance.agent.protocol import HistoryMessage, ToolFailed, TurnInput
from threadcase.wire import Observation

Answer = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

ONE_CREDENTIAL_EACH = [
    {"id": "c1", "name": "Team Slack", "type": "slackApi"},
    {"id": "c2", "name": "Work Gmail", "type": "gmailOAuth2"},
    {"id": "c3", "name": "Team Sheets", "type": "googleSheetsOAuth2Api"},
]
"""One credential per service: attached silently, so no setup card interrupts a conversation."""


class FakeContext:
    """The platform side of the seam, in memory."""

    def __init__(
        self,
        *,
        credentials: list[dict[str, str]] | None = None,
        working: set[str] | None = None,
        folders: dict[str, str] | None = None,
        tables: list[dict[str, Any]] | None = None,
    ) -> None:
        self.answers: list[Answer] = []
        self.said: list[str] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.asks: list[dict[str, Any]] = []
        self.spawned: list[tuple[str, dict[str, Any] | None]] = []
        self.completed: list[str] = []
        self.workflows: dict[str, dict[str, Any]] = {}
        self.agents: dict[str, dict[str, Any]] = {}
        self.credentials = list(credentials or [])
        # None = every credential passes its connection test; a set = only those ids pass.
        self.working = None if working is None else set(working)
        self.folders = dict(folders or {})  # path -> id
        self.tables = list(tables or [])
        self._ids = 0
        self.turn_log: list[dict[str, Any]] = []

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    async def say(self, text: str) -> None:
        self.said.append(text)

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.asks.append(copy.deepcopy(request))
        assert self.answers, f"the agent asked but the test queued no answer: {request}"
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer

    async def spawn(self, role: str, target: dict[str, Any] | None = None) -> str:
        self.spawned.append((role, target))
        return self._next_id("sub")

    async def complete(self, agent_id: str) -> None:
        self.completed.append(agent_id)

    async def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, copy.deepcopy(args)))
        result = self._tool(name, args)
        self.turn_log.append({"toolName": name, "args": copy.deepcopy(args), "result": copy.deepcopy(result)})
        return result

    def add_workflow(self, workflow: dict[str, Any], *, folder: str | None = None) -> str:
        workflow_id = self._next_id("wf")
        self.workflows[workflow_id] = {
            **copy.deepcopy(workflow),
            "id": workflow_id,
            "parentFolderId": self.folders.get(folder) if folder else None,
        }
        return workflow_id

    def _folder_path(self, folder_id: str | None) -> str | None:
        return next((path for path, fid in self.folders.items() if fid == folder_id), None)

    def _tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "list-workflows":
            found = list(self.workflows.values())
            if args.get("query"):
                found = [w for w in found if str(args["query"]).lower() in w["name"].lower()]
            if args.get("folderPath"):
                if args["folderPath"] not in self.folders:
                    raise ToolFailed(f"folder {args['folderPath']!r} not found")
                found = [w for w in found if w.get("parentFolderId") == self.folders[args["folderPath"]]]
            return {
                "workflows": [
                    {
                        "id": w["id"],
                        "name": w["name"],
                        "parentFolderId": w.get("parentFolderId"),
                        "folderPath": self._folder_path(w.get("parentFolderId")),
                    }
                    for w in found
                ]
            }
        if name == "get-workflow":
            if args["workflowId"] not in self.workflows:
                raise ToolFailed("workflow not found")
            return {"workflow": copy.deepcopy(self.workflows[args["workflowId"]])}
        if name == "build-workflow":
            workflow_id = args.get("workflowId") or self._next_id("wf")
            if args.get("workflowId") and workflow_id not in self.workflows:
                raise ToolFailed("workflow not found")
            previous = self.workflows.get(workflow_id, {})
            self.workflows[workflow_id] = {
                **copy.deepcopy(args["workflow"]),
                "id": workflow_id,
                "parentFolderId": previous.get("parentFolderId"),
            }
            return {"workflowId": workflow_id, "workflow": copy.deepcopy(self.workflows[workflow_id])}
        if name == "rename-workflow":
            self.workflows[args["workflowId"]]["name"] = args["name"]
            return {"workflowId": args["workflowId"], "name": args["name"]}
        if name == "move-workflow":
            if args.get("folderPath") not in self.folders:
                raise ToolFailed("folder not found")
            self.workflows[args["workflowId"]]["parentFolderId"] = self.folders[args["folderPath"]]
            return {"workflowId": args["workflowId"], "parentFolderId": self.folders[args["folderPath"]]}
        if name == "delete-workflow":
            self.workflows.pop(args["workflowId"])
            return {"deleted": True}
        if name == "list-credentials":
            return {"credentials": [c for c in self.credentials if not args.get("type") or c["type"] == args["type"]]}
        if name == "test-credential":
            ok = self.working is None or args["credentialId"] in self.working
            return {"success": ok, "message": "Connection tested successfully" if ok else "Invalid access token"}
        if name == "list-data-tables":
            return {"dataTables": copy.deepcopy(self.tables)}
        if name == "create-data-table":
            table = {"id": self._next_id("dt"), "name": args["name"], "columns": args["columns"]}
            self.tables.append(table)
            return {"table": table}
        if name == "build-agent":
            agent_id = args.get("agentId") or self._next_id("agent")
            self.agents[agent_id] = {"config": copy.deepcopy(args["config"]), "skills": copy.deepcopy(args["skills"])}
            return {"agentId": agent_id, **copy.deepcopy(self.agents[agent_id])}
        if name == "get-agent":
            if args["agentId"] not in self.agents:
                raise ToolFailed("agent not found")
            return {"agentId": args["agentId"], **copy.deepcopy(self.agents[args["agentId"]])}
        raise ToolFailed(f"unknown tool {name}")

    def tool_names(self) -> list[str]:
        return [name for name, _ in self.calls]


class Thread:
    """One chat thread: history and agent state carried from turn to turn, like the platform does."""

    def __init__(
        self,
        ctx: FakeContext | None = None,
        *,
        misbehaviours: frozenset[str] = frozenset(),
        mode: str = "progressive",
    ) -> None:
        self.ctx = ctx or FakeContext()
        self.state: dict[str, Any] = {}
        self.history: list[HistoryMessage] = []
        self.observations: list[Observation] = []
        self.misbehaviours = misbehaviours
        self.mode = mode
        self.turns = 0

    def answer(self, *answers: Answer) -> Thread:
        self.ctx.answers.extend(answers)
        return self

    async def send(self, message: str, *, attachments: list[dict[str, Any]] | None = None) -> str:
        """Run one turn; returns the reply text the user saw."""
        self.turns += 1
        said_before = len(self.ctx.said)
        self.ctx.turn_log = []
        turn = TurnInput(
            thread_id="thread-1",
            project_id="project-1",
            run_id=f"run-{self.turns}",
            message=message,
            attachments=attachments or [],
            mode=self.mode,
            history=list(self.history),
            observations=list(self.observations),
            misbehaviours=self.misbehaviours,
            state=self.state,
        )
        await run_turn(turn, self.ctx)
        self.state = turn.state  # the platform persists the (validated, hence copied) state the same way
        reply = "".join(self.ctx.said[said_before:])
        self.history.append(HistoryMessage(id=f"u{self.turns}", role="user", text=message))
        self.history.append(
            HistoryMessage(id=f"a{self.turns}", role="assistant", text=reply, tool_calls=list(self.ctx.turn_log))
        )
        return reply

    def compact(self, observations: list[str]) -> None:
        """Simulate the observer: early messages gone, observations in their place."""
        self.history = []
        self.observations = [Observation(marker="CRITICAL", text=text) for text in observations]


def questions(**values: str | None) -> dict[str, Any]:
    """A ``questions`` confirm body: ``questions(slack_channel="#general", gmail_recipient=None)`` (None = skipped)."""
    return {
        "kind": "questions",
        "answers": [
            {"questionId": key, "selectedOptions": [], "customText": value, "skipped": value is None}
            for key, value in values.items()
        ],
    }


def approve() -> dict[str, Any]:
    return {"kind": "approval", "approved": True}


def reject(feedback: str | None = None) -> dict[str, Any]:
    return {"kind": "approval", "approved": False, "userInput": feedback}


def node(workflow: dict[str, Any], node_type: str) -> dict[str, Any]:
    return next(x for x in workflow["nodes"] if x["type"] == node_type)


def node_types(workflow: dict[str, Any]) -> list[str]:
    return [x["type"] for x in workflow["nodes"]]
