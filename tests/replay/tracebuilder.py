"""Build LangSmith-shaped runs of a thread for tests, in the demo instance's ``--trace-to`` shape."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any


class TraceBuilder:
    """Appends root ``turn`` chain runs and their ``tool`` runs with strictly increasing times."""

    def __init__(self, thread_id: str = "thread-prod-1", *, start: datetime | None = None) -> None:
        self.thread_id = thread_id
        self.now = start or datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
        self.runs: list[dict[str, Any]] = []
        self._root: dict[str, Any] | None = None

    def _tick(self, seconds: float = 1.0) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    @staticmethod
    def _iso(at: datetime) -> str:
        return at.isoformat().replace("+00:00", "Z")

    def turn(self, message: Any, response: str = "", *, name: str = "turn") -> str:
        run_id = str(uuid.uuid4())
        start = self._tick()
        root = {
            "id": run_id,
            "name": name,
            "run_type": "chain",
            "parent_run_id": None,
            "trace_id": run_id,
            "start_time": self._iso(start),
            "end_time": None,
            "inputs": {"message": message},
            "outputs": {"response": response},
            "error": None,
            "extra": {"metadata": {"thread_id": self.thread_id}},
        }
        self.runs.append(root)
        self._root = root
        return run_id

    def chain(self, name: str, inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> str:
        """A nested chain run (a sub-agent) under the current turn; pass its id as ``parent`` of its tools."""
        return self._child("chain", name, inputs, outputs, error=None, metadata=None, parent=None)

    def tool(
        self,
        name: str,
        inputs: dict[str, Any],
        outputs: dict[str, Any] | None = None,
        *,
        error: str | None = None,
        metadata: dict[str, Any] | None = None,
        parent: str | None = None,
    ) -> str:
        return self._child("tool", name, inputs, outputs, error=error, metadata=metadata, parent=parent)

    def _child(
        self,
        run_type: str,
        name: str,
        inputs: dict[str, Any],
        outputs: dict[str, Any] | None,
        *,
        error: str | None,
        metadata: dict[str, Any] | None,
        parent: str | None,
    ) -> str:
        assert self._root is not None
        run_id = str(uuid.uuid4())
        start = self._tick(0.1)
        self.runs.append(
            {
                "id": run_id,
                "name": name,
                "run_type": run_type,
                "parent_run_id": parent or self._root["id"],
                "trace_id": self._root["id"],
                "start_time": self._iso(start),
                "end_time": self._iso(self._tick(0.05)),
                "inputs": inputs,
                "outputs": outputs,
                "error": error,
                "extra": {
                    "metadata": {
                        "thread_id": self.thread_id,
                        "langsmith_root_run_id": self._root["id"],
                        **(metadata or {}),
                    }
                },
            }
        )
        self._root["end_time"] = self._iso(self._tick(0.05))
        return run_id


def workflow(wid: str, name: str, *, credential: bool = False) -> dict[str, Any]:
    node: dict[str, Any] = {"name": "Slack", "type": "n8n-nodes-base.slack", "parameters": {"channel": "#general"}}
    if credential:
        node["credentials"] = {"slackApi": {"id": "cred-prod-secret-1", "name": "Alice's Slack"}}
    return {
        "id": wid,
        "name": name,
        "nodes": [{"name": "Trigger", "type": "n8n-nodes-base.manualTrigger", "parameters": {}}, node],
        "connections": {"Trigger": {"main": [[{"node": "Slack", "type": "main", "index": 0}]]}},
    }
