"""What threadcase sends to LangSmith, built and redacted in one place.

Every value bound for LangSmith passes :class:`OutgoingRedaction` (one call site per kind of value,
so a project-wide redaction step can replace it in one place): data-table rows become
``"<N row(s) omitted>"`` wherever a ``rows``/``data`` list appears, credential references are
stripped, secret-looking keys are blanked, and every known secret value (``EVAL_*`` tokens, the
instance password, model and LangSmith keys) and token-shaped string is scrubbed from the text.

- An **example** is one case: its file's JSON as the inputs (redacted), and metadata carrying the
  file's SHA-256, which versions the example.
- A **run** is one case-iteration: the transcript as outputs (messages and the judge's text
  rendering, both redacted), the status and numbers as metadata. Stored scenario executions and the
  built artifacts are never sent (they hold table rows and instance data).
- A **feedback** is one unit: score 1 for pass, 0 for fail; a not-judged or reviewed unit is a
  comment with no score, so LangSmith never averages it in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from threadcase.case.loader import LoadedCase
from threadcase.instance.redact import Redactor
from threadcase.records import RunRecord, ToolCallRecord, Turn, WidgetRecord
from threadcase.render import render_transcript
from threadcase.seeds.replay_redact import omit_rows, strip_credentials
from threadcase.verdicts import CaseHashes, CaseResult, UnitVerdict

__all__ = [
    "FeedbackSpec",
    "OutgoingRedaction",
    "example_inputs",
    "example_metadata",
    "is_replay",
    "run_metadata",
    "run_outputs",
    "unit_feedback",
]

TRANSCRIPT_CAP = 400_000
"""Longest transcript text sent per run (characters); LangSmith payloads have a size limit."""
COMMENT_CAP = 2_000


class OutgoingRedaction:
    """The one redaction step for LangSmith-bound values (rows, credentials, secrets)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._redactor = Redactor(secrets, provider_keys=True)

    def value(self, value: Any) -> Any:
        """A JSON value with table rows omitted, credential references stripped and secrets scrubbed."""
        return self._redactor.data(strip_credentials(omit_rows(value)))

    def text(self, text: str) -> str:
        """A string with every known secret value and token shape scrubbed."""
        return self._redactor.text(text)


def is_replay(loaded: LoadedCase) -> bool:
    """A replay case holds someone's real conversation: it is never sent anywhere."""
    return loaded.case.seed is not None and loaded.case.seed.mode == "replay"


def example_inputs(loaded: LoadedCase, redaction: OutgoingRedaction) -> dict[str, Any]:
    """The case as its file has it (camelCase), redacted: what a LangSmith example holds as inputs."""
    document = json.loads(loaded.path.read_bytes().decode("utf-8-sig"))
    # The case's own credential declarations name types, not secrets; only the seed's workflows and
    # messages can carry references to someone's credentials.
    if isinstance(document, dict) and "seed" in document:
        document = {**document, "seed": strip_credentials(document["seed"])}
    return {"case": loaded.slug, "definition": redaction.value(document)}


def example_metadata(loaded: LoadedCase, hashes: CaseHashes) -> dict[str, Any]:
    """Metadata of a case's example; ``case_file_sha256`` is the version the example holds."""
    case = loaded.case
    return {
        "case": loaded.slug,
        "case_file_sha256": hashes.file,
        "mode": case.mode,
        "complexity": case.complexity,
        "tags": list(case.tags),
        "datasets": list(case.datasets),
        "source": "threadcase",
    }


def _redacted_call(call: ToolCallRecord, redaction: OutgoingRedaction) -> ToolCallRecord:
    return call.model_copy(update={"args": redaction.value(call.args), "result": redaction.value(call.result)})


def _redacted_widget(widget: WidgetRecord, redaction: OutgoingRedaction) -> WidgetRecord:
    return widget.model_copy(
        update={"request": redaction.value(widget.request), "answer": redaction.value(widget.answer)}
    )


def _redacted_turn(turn: Turn, redaction: OutgoingRedaction) -> Turn:
    return turn.model_copy(
        update={
            "text": redaction.text(turn.text),
            "tool_calls": [_redacted_call(c, redaction) for c in turn.tool_calls],
            "widgets": [_redacted_widget(w, redaction) for w in turn.widgets],
            "user_actions": [redaction.text(a) for a in turn.user_actions],
            "errors": [redaction.text(e) for e in turn.errors],
        }
    )


def _redacted_record(record: RunRecord, redaction: OutgoingRedaction) -> RunRecord:
    # Only what the transcript rendering reads; artifacts and stored executions are never sent.
    return record.model_copy(update={"turns": [_redacted_turn(t, redaction) for t in record.turns]})


def run_outputs(result: CaseResult, redaction: OutgoingRedaction) -> dict[str, Any]:
    """Outputs of a case-iteration's LangSmith run: the conversation, redacted."""
    outputs: dict[str, Any] = {"status": result.status}
    record = result.record
    if record is None:
        outputs["transcript"] = "(no conversation recorded)"
        return outputs
    clean = _redacted_record(record, redaction)
    transcript = redaction.text(render_transcript(clean))
    if len(transcript) > TRANSCRIPT_CAP:
        transcript = transcript[:TRANSCRIPT_CAP] + "\n… (truncated)"
    outputs.update(
        ended_by=record.ended_by,
        messages=[
            {"role": turn.role, "content": turn.text, "seeded": turn.seeded} for turn in clean.turns if turn.text
        ],
        transcript=transcript,
    )
    return outputs


def run_metadata(result: CaseResult) -> dict[str, Any]:
    """Numbers of a case-iteration for the run's metadata (no URL, no id of the instance)."""
    metadata: dict[str, Any] = {
        "threadcase_run_id": result.run_id,
        "case": result.case_slug,
        "iteration": result.iteration,
        "status": result.status,
        "seconds": result.seconds,
    }
    record = result.record
    if record is not None:
        steps = [step for steps in record.usage.values() for step in steps]
        metadata["turns"] = sum(1 for t in record.live_turns if t.role == "user")
        if steps:  # no token data is no number, never a zero
            metadata["input_tokens"] = sum(s.inputTokens for s in steps)
            metadata["output_tokens"] = sum(s.outputTokens for s in steps)
            metadata["cached_tokens"] = sum(s.cachedInputTokens for s in steps)
    return metadata


@dataclass(frozen=True)
class FeedbackSpec:
    """One feedback to create: ``score`` None means a comment only."""

    key: str
    score: int | None
    comment: str


def unit_feedback(verdict: UnitVerdict, redaction: OutgoingRedaction) -> FeedbackSpec:
    """Pass 1, fail 0; not judged and reviewed become comments, never scores."""
    reason = redaction.text(verdict.reason)[:COMMENT_CAP]
    if verdict.status == "pass":
        return FeedbackSpec(verdict.unit, 1, reason)
    if verdict.status == "fail":
        return FeedbackSpec(verdict.unit, 0, f"{reason} ({verdict.attribution or 'builder_issue'})")
    if verdict.status == "not_judged":
        return FeedbackSpec(verdict.unit, None, f"not judged: {reason} ({verdict.attribution or 'framework_issue'})")
    return FeedbackSpec(verdict.unit, None, f"review: {redaction.text(verdict.label)[:COMMENT_CAP]}")
