"""Replay reconstruction of a synthetic 10,000-run thread (target: under 1 s).

Generates a LangSmith-shaped thread (raw dicts, as the SDK or an exported file would hand them
over): root ``turn`` chain runs, each with tool runs that build and edit workflows, create data
tables with rows (redacted on read), delete workflows, inspect, and suspend/resume for HITL. Times
``rebuild_thread`` from the raw dicts (redaction and validation included), best of a few rounds,
then measures peak traced memory in a separate round (tracing slows the timed path).

Last line: ``replay_seconds=<float> peak_mb=<float> runs=<int>``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

from threadcase.seeds.replay_rebuild import rebuild_thread

TOOLS_PER_TURN = 19


def _workflow(wid: str, name: str, size: int) -> dict[str, Any]:
    nodes = [
        {
            "name": f"Node {i}",
            "type": "n8n-nodes-base.set",
            "parameters": {"values": {"string": [{"name": "k", "value": "v" * 20}]}},
            "credentials": {"httpHeaderAuth": {"id": f"cred-{i}", "name": "prod"}},
        }
        for i in range(size)
    ]
    connections = {
        f"Node {i}": {"main": [[{"node": f"Node {i + 1}", "type": "main", "index": 0}]]} for i in range(size - 1)
    }
    return {"id": wid, "name": name, "nodes": nodes, "connections": connections}


def synthetic_thread(total_runs: int = 10_000) -> list[dict[str, Any]]:
    """A thread of ``total_runs`` chain and tool runs (one root + 19 tools per turn)."""
    runs: list[dict[str, Any]] = []
    now = datetime(2026, 11, 1, tzinfo=UTC)
    turn = 0
    while len(runs) < total_runs:
        root_id = f"root-{turn:06d}"
        now += timedelta(seconds=5)
        runs.append(
            {
                "id": root_id,
                "name": "turn",
                "run_type": "chain",
                "parent_run_id": None,
                "trace_id": root_id,
                "start_time": now.isoformat(),
                "end_time": (now + timedelta(seconds=4)).isoformat(),
                "inputs": {"message": f"user message {turn} " + "please change things " * 5},
                "outputs": {"response": f"assistant reply {turn} " + "done and explained " * 10},
                "error": None,
                "extra": {"metadata": {"thread_id": "bench-thread"}},
            }
        )
        for k in range(TOOLS_PER_TURN):
            if len(runs) >= total_runs:
                break
            start = now + timedelta(milliseconds=100 * (k + 1))
            wid = f"wf-{(turn * 3 + k) % 40:08d}"
            name, inputs, outputs = _tool(k, turn, wid)
            runs.append(
                {
                    "id": f"tool-{turn:06d}-{k:02d}",
                    "name": name,
                    "run_type": "tool",
                    "parent_run_id": root_id,
                    "trace_id": root_id,
                    "start_time": start.isoformat(),
                    "end_time": (start + timedelta(milliseconds=50)).isoformat(),
                    "inputs": inputs,
                    "outputs": outputs,
                    "error": "transient" if k == 18 else None,
                    "extra": {
                        "metadata": {
                            "thread_id": "bench-thread",
                            "langsmith_root_run_id": root_id,
                            **({"pending_tool_call_id": f"call-{turn}"} if k in (10, 11) else {}),
                        }
                    },
                }
            )
        turn += 1
    return runs


def _tool(k: int, turn: int, wid: str) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    if k in (0, 1, 2):
        wf = _workflow(wid, f"Workflow {wid}", 8)
        return "build-workflow", {"workflow": wf}, {"workflowId": wid, "workflow": wf}
    if k == 3:
        return "delete-workflow", {"workflowId": f"wf-{(turn + 7) % 40:08d}"}, {"deleted": True}
    if k == 4:
        table = {
            "id": f"tbl-{turn % 15:08d}",
            "name": f"Table {turn % 15}",
            "columns": [{"name": "a", "type": "string"}],
        }
        rows = [{"a": f"secret {i}"} for i in range(20)]
        return "create-data-table", {"name": table["name"], "columns": table["columns"], "rows": rows}, {"table": table}
    if k == 5:
        return "insert-data-table-rows", {"tableId": f"tbl-{turn % 15:08d}", "data": [{"a": "x"}] * 30}, {"ok": True}
    if k == 6:
        return "list-workflows", {}, {"workflows": [{"id": f"wf-{i:08d}", "name": str(i)} for i in range(10)]}
    if k == 10:
        return "ask-user", {"question": "which?"}, {"deferred": True, "payload": {"inputType": "questions"}}
    if k == 11:
        return "ask-user", {"question": "which?"}, {"answer": "this one"}
    return "get-workflow", {"workflowId": wid}, {"workflow": _workflow(wid, "read", 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    runs = synthetic_thread(args.runs)
    best = float("inf")
    rec = None
    for _ in range(args.rounds):
        started = time.perf_counter()
        rec = rebuild_thread(runs)
        best = min(best, time.perf_counter() - started)
    assert rec is not None
    tracemalloc.start()
    rebuild_thread(runs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"turns_replayed={rec.replayed_turns} messages={len(rec.messages)} workflows={len(rec.workflows)} "
        f"data_tables={len(rec.data_tables)} warnings={len(rec.warnings)}"
    )
    print(f"replay_seconds={best:.3f} peak_mb={peak / 1e6:.1f} runs={len(runs)}")


if __name__ == "__main__":
    main()
