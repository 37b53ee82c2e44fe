"""Load benchmark: generate varied valid case files, then time loading and validating them.

Usage: ``python bench/load_cases.py [--count 5000] [--seed 0]``. The last line is
``load_seconds=<float> cases=<int>`` (target: 5,000 cases under 2 s). Generation is not timed; only
``load_suite`` over the directory is (read, parse, validate every rule, compile every regex).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from threadcase.case.loader import load_suite
from threadcase.credentials import SUPPORTED_CREDENTIAL_TYPES

_SERVICES = ["Slack", "Gmail", "Notion", "GitHub", "Google Sheets", "Teams", "a webhook", "a data table"]
_TRIGGERS = ["manual", "webhook", "schedule", "form"]


def _text(rng: random.Random, words: int) -> str:
    vocab = ["build", "workflow", "send", "every", "morning", "summary", "to", "channel", "when", "new", "row"]
    return " ".join(rng.choice(vocab) for _ in range(words)).capitalize() + "."


def _workflow(index: int, folder: str | None) -> dict[str, Any]:
    nodes = [
        {
            "name": f"Node {n}",
            "type": "n8n-nodes-base.set",
            "typeVersion": 3,
            "position": [n * 200, 0],
            "parameters": {"values": {"string": [{"name": "k", "value": str(n)}]}},
        }
        for n in range(4)
    ]
    connections = {f"Node {n}": {"main": [[{"node": f"Node {n + 1}", "type": "main", "index": 0}]]} for n in range(3)}
    workflow: dict[str, Any] = {"id": f"wf-seed-{index:04d}", "name": f"Seeded {index}", "nodes": nodes}
    workflow["connections"] = connections
    if folder:
        workflow["parentFolderId"] = folder
    return workflow


def _inline_seed(rng: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "text": _text(rng, 12)},
        {"role": "assistant", "text": [_text(rng, 8), _text(rng, 8)]},
        {
            "id": "msg-0001",
            "type": "llm",
            "role": "assistant",
            "createdAt": "2026-01-05T10:00:00.000Z",
            "content": [
                {"type": "text", "text": _text(rng, 10)},
                {
                    "type": "tool-call",
                    "toolCallId": "call-1",
                    "toolName": "build-workflow",
                    "state": "resolved",
                    "input": {"name": "Seeded 0"},
                    "output": {"workflowId": "wf-seed-0000"},
                },
            ],
        },
    ]
    folders = [
        {"id": "folder-0001", "name": "Ops"},
        {"id": "folder-0002", "name": "Nested", "parentFolderId": "folder-0001"},
    ]
    seed: dict[str, Any] = {
        "mode": "inline",
        "messages": messages,
        "workflows": [_workflow(0, "folder-0002"), _workflow(1, None)],
        "dataTables": [{"id": "table-0001", "name": "Leads", "columns": [{"name": "email", "type": "string"}]}],
        "folders": folders,
        "priorRuns": [{"workflow": "wf-seed-0000", "hints": "The second item fails."}],
    }
    if rng.random() < 0.3:
        seed["agents"] = [
            {
                "id": "agent-0001",
                "config": {
                    "name": "Support Bot",
                    "model": "anthropic/claude-sonnet-4-5",
                    "instructions": "Answer support questions.",
                    "skills": [{"type": "skill", "id": "s-1"}],
                    "tools": [],
                },
                "skills": {"s-1": {"name": "Refunds", "instructions": _text(rng, 20)}},
            }
        ]
    return seed


def make_case(index: int, rng: random.Random) -> dict[str, Any]:
    """One valid case; the kind rotates so every part of the schema is exercised."""
    kind = index % 5
    service = rng.choice(_SERVICES)
    case: dict[str, Any] = {
        "description": f"Generated case {index}",
        "complexity": rng.choice(["simple", "medium", "complex"]),
        "tags": ["bench", f"kind-{kind}"],
        "datasets": ["full"] if kind != 4 else ["seeded"],
        "triggerType": rng.choice(_TRIGGERS),
    }
    opening = {"role": "user", "text": f"Build a workflow that posts to {service}. {_text(rng, 15)}"}
    if kind == 0:  # single prompt with execution scenarios and tables
        case["conversation"] = [opening]
        columns = [{"name": "order_id", "type": "string"}, {"name": "total", "type": "number"}]
        rows = [{"order_id": f"A-{r}", "total": r * 1.5} for r in range(20)]
        case["executionScenarios"] = [
            {
                "name": f"scenario {s}",
                "description": _text(rng, 6),
                "dataSetup": _text(rng, 12),
                "successCriteria": _text(rng, 8),
                "seedDataTables": [
                    {"id": f"table-sc-{s:03d}", "name": f"Orders {s}", "columns": columns, "rows": rows}
                ],
            }
            for s in range(2)
        ]
    elif kind == 1:  # multi-turn director script with expectations and credentials
        case["conversation"] = [
            opening,
            {"role": "assistant", "text": ""},
            {"role": "user", "text": ["[Ask for these changes one at a time:", "1. rename it", "2. add a filter]"]},
        ]
        case["messageBudget"] = rng.randint(1, 8)
        case["processExpectations"] = [_text(rng, 10), _text(rng, 12)]
        types = sorted(SUPPORTED_CREDENTIAL_TYPES)
        case["credentials"] = [{"type": rng.choice(types)}, {"type": rng.choice(types), "valid": False}]
    elif kind == 2:  # inline seed with an attached workflow
        case["seed"] = _inline_seed(rng)
        case["conversation"] = [{"role": "user", "text": "", "attach": {"workflow": "wf-seed-0000"}}]
        case["outcomeExpectations"] = [_text(rng, 10)]
    elif kind == 3:  # threadcase checks with transcript rules
        case["conversation"] = [opening, {"role": "user", "text": "[Push back twice, then insist.]"}]
        case["checks"] = {
            "mustContain": [service],
            "mustNotContain": ["as an AI"],
            "mustEndWithQuestion": False,
            "maxLines": 20,
            "transcriptRules": [
                {
                    "name": f"holds-{r}",
                    "risk": rf"(?i)skip (it|the check) {index}-{r}",
                    "clear": r"(?i)\b(can't|cannot|won't)\b",
                    "violation": rf"(?i)\b(ok(ay)?|sure)\b.*{r}",
                }
                for r in range(2)
            ],
            "nodeTypesPresent": ["n8n-nodes-base.slack"],
            "toolsNotCalled": ["delete-workflow"],
            "noRepeatedQuestions": True,
        }
    else:  # replay with an authored continuation, in a seeded tier
        case["seed"] = {
            "mode": "replay",
            "threadId": f"thread-{index:06d}",
            "endpoint": "https://api.smith.langchain.com",
        }
        case["conversation"] = [{"role": "assistant", "text": _text(rng, 6)}]
        case["requiresMemoryCompaction"] = rng.random() < 0.5
        case["processExpectations"] = [_text(rng, 9)]
    return case


def generate(directory: Path, count: int, seed: int = 0) -> None:
    """Write ``count`` valid case files into ``directory``."""
    rng = random.Random(seed)
    for index in range(count):
        (directory / f"case-{index:05d}.json").write_text(json.dumps(make_case(index, rng), indent=2), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="threadcase-bench-") as tmp:
        directory = Path(tmp)
        generate(directory, args.count, args.seed)
        size = sum(p.stat().st_size for p in directory.iterdir())
        print(f"generated {args.count} case files ({size / 1e6:.1f} MB) in {directory}")
        started = time.perf_counter()
        cases = load_suite([directory])
        elapsed = time.perf_counter() - started
    print(f"per_case_us={elapsed / max(len(cases), 1) * 1e6:.0f}")
    print(f"load_seconds={elapsed:.3f} cases={len(cases)}")


if __name__ == "__main__":
    main()
