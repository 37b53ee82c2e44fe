"""Grading's own share: render and grade a long recorded run with no model, so only our code is timed.

Builds a 200-turn run record (each assistant turn with tool calls, a questions widget and a long
reply, plus run-debug usage), a case with every deterministic check kind and a transcript rule, and
times ``render_transcript`` + metrics + the judge's full prompt assembly, and ``grade_case`` without a
judge model. The last line prints ``name=value`` figures in milliseconds.

Run: ``python -m bench.grading [--turns 200] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import time

import anyio

from threadcase.case import schema
from threadcase.grading import grade_case
from threadcase.grading.judge import build_judge_messages, expectations_of
from threadcase.models import ModelSettings
from threadcase.records import Artifacts, RunRecord, ToolCallRecord, Turn, WidgetRecord
from threadcase.wire import TokenUsage, Workflow, WorkflowNode


def _record(turns: int) -> RunRecord:
    out: list[Turn] = []
    usage: dict[str, list[TokenUsage]] = {}
    for i in range(turns):
        out.append(Turn(index=2 * i, role="user", text=f"Change number {i}: post to #team-{i} instead, please."))
        run = f"run-{i}"
        usage[run] = [TokenUsage(inputTokens=9000 + i, outputTokens=300, cachedInputTokens=8000)] * 3
        widget = WidgetRecord(
            request_id=f"req-{i}",
            input_type="questions",
            request={"questions": [{"id": "q", "question": f"Which channel for change {i}?", "type": "text"}]},
            answer={"kind": "questions", "answers": [{"questionId": "q", "customText": f"#team-{i}"}]},
            outcome="answered",
        )
        calls = [
            ToolCallRecord(
                tool_call_id=f"c{i}-{k}", tool_name="build-workflow", args={"n": "x" * 3000}, result={"ok": k}
            )
            for k in range(3)
        ]
        text = "\n".join(f"Updated step {k} of the workflow for change {i}." for k in range(8))
        out.append(
            Turn(index=2 * i + 1, role="assistant", text=text, run_ids=[run], tool_calls=calls, widgets=[widget])
        )
    workflow = Workflow(
        id="wf", name="Big", nodes=[WorkflowNode(name=f"N{k}", type="n8n-nodes-base.set") for k in range(40)]
    )
    return RunRecord(
        case_slug="bench",
        thread_id="t",
        mode="multi-turn",
        turns=out,
        usage=usage,
        artifacts=Artifacts(workflows=[workflow]),
    )


def _case() -> schema.Case:
    return schema.Case.model_validate(
        {
            "conversation": [{"role": "user", "text": "Build it"}],
            "complexity": "simple",
            "tags": ["bench"],
            "processExpectations": [f"expectation {k}" for k in range(10)],
            "checks": {
                "mustContain": ["Updated"],
                "mustNotContain": ["shipping it now"],
                "mustEndWithQuestion": False,
                "maxLines": 10,
                "transcriptRules": [{"name": "r", "risk": "(?i)skip", "clear": "(?i)won't", "violation": "(?i)okay"}],
                "nodeTypesPresent": ["n8n-nodes-base.set"],
                "nodeParameters": [{"node": "N1", "path": "a.b", "equals": 1}],
                "toolsCalled": ["build-workflow"],
                "maxClarifyingQuestions": 500,
                "noRepeatedQuestions": True,
                "review": ["tone"],
            },
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    record, case = _record(args.turns), _case()
    prompt_ms, grade_ms = [], []
    chars = 0
    for _ in range(args.repeat):
        started = time.perf_counter()
        parts = build_judge_messages(record, expectations_of(case))
        prompt_ms.append((time.perf_counter() - started) * 1000)
        chars = sum(len(p) for p in parts)
        started = time.perf_counter()
        anyio.run(lambda: grade_case(case, record, client=None, models=ModelSettings()))
        grade_ms.append((time.perf_counter() - started) * 1000)
    print(
        f"turns={args.turns} judge_prompt_chars={chars} judge_prompt_ms={min(prompt_ms):.1f} "
        f"grade_case_ms={min(grade_ms):.1f}"
    )


if __name__ == "__main__":
    main()
