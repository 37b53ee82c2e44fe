"""Model calls for every role (user proxy, judge, scenario verifier): settings, attempts, usage, and
recorded answers (``--record-models`` / ``--replay-models``). See :mod:`threadcase.llm.call`."""

from __future__ import annotations

from threadcase.llm.call import CallOutcome, JsonSchema, parse_json, structured_call
from threadcase.llm.store import AnswerStore, RecordedAnswer, RecordedAnswerMissing, request_key

__all__ = [
    "AnswerStore",
    "CallOutcome",
    "JsonSchema",
    "RecordedAnswer",
    "RecordedAnswerMissing",
    "parse_json",
    "request_key",
    "structured_call",
]
