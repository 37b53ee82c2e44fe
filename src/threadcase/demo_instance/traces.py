"""LangSmith-shaped traces of demo chat turns (``--trace-to FILE``), one JSON run per line.

Each chat turn writes a root ``chain`` run named ``turn`` (``inputs.message``, ``outputs.response``,
``extra.metadata.thread_id``) and then one ``tool`` child run per tool call (``parent_run_id`` = the
root, ``extra.metadata.langsmith_root_run_id`` = the root), with the fields LangSmith's ``list_runs``
returns (``id``, ``trace_id``, ``name``, ``run_type``, ``parent_run_id``, ``start_time``,
``end_time``, ``inputs``, ``outputs``, ``error``, ``session_name``, ``dotted_order``, ``tags``).
Timestamps are ISO UTC. Replay (``threadcase.seeds.replay``) reads these files as an exported trace.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

__all__ = ["TraceWriter", "turn_runs"]


def _dotted(start: str, run_id: str) -> str:
    stamp = start.replace("-", "").replace(":", "").replace(".", "").rstrip("Z")
    return f"{stamp}Z{run_id}"


def turn_runs(
    *,
    thread_id: str,
    project: str,
    message: str,
    response: str,
    start_time: str,
    end_time: str,
    status: str,
    tool_calls: list[dict[str, Any]],
    run_id: str,
) -> list[dict[str, Any]]:
    """The runs of one turn: the root first, then its tool children in call order.

    ``tool_calls`` items: ``{toolName, input, output, error, startedAt, endedAt}``.
    """
    root_id = str(uuid.uuid4())
    root_dotted = _dotted(start_time, root_id)
    root: dict[str, Any] = {
        "id": root_id,
        "trace_id": root_id,
        "name": "turn",
        "run_type": "chain",
        "parent_run_id": None,
        "start_time": start_time,
        "end_time": end_time,
        "inputs": {"message": message},
        "outputs": {"response": response},
        "error": None if status == "completed" else f"run {status}",
        "session_name": project,
        "dotted_order": root_dotted,
        "tags": ["instance-ai", "demo"],
        "extra": {"metadata": {"thread_id": thread_id, "run_id": run_id, "status": status}},
    }
    runs = [root]
    for call in tool_calls:
        child_id = str(uuid.uuid4())
        started = str(call.get("startedAt") or start_time)
        runs.append(
            {
                "id": child_id,
                "trace_id": root_id,
                "name": call["toolName"],
                "run_type": "tool",
                "parent_run_id": root_id,
                "start_time": started,
                "end_time": call.get("endedAt") or end_time,
                "inputs": call.get("input") or {},
                "outputs": call.get("output"),
                "error": call.get("error"),
                "session_name": project,
                "dotted_order": f"{root_dotted}.{_dotted(started, child_id)}",
                "tags": [],
                "extra": {"metadata": {"thread_id": thread_id, "langsmith_root_run_id": root_id}},
            }
        )
    return runs


class TraceWriter:
    """Appends runs to a JSONL file, one flushed line per run (safe from several threads)."""

    def __init__(self, path: Path, project: str) -> None:
        self.path = path
        self.project = project
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        # Fail at start, not at the first turn, when the file cannot be appended to.
        with path.open("a", encoding="utf-8"):
            pass

    def write(self, runs: list[dict[str, Any]]) -> None:
        """Append runs as JSON lines, flushed at once."""
        lines = "".join(json.dumps(run, separators=(",", ":"), default=str) + "\n" for run in runs)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(lines)
            handle.flush()
