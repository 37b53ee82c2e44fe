"""What a LangSmith run and feedback carry: rows omitted, credentials stripped, secrets scrubbed, scores honest."""

from __future__ import annotations

import json

from tests.report.factory import result, verdict
from threadcase.records import ToolCallRecord, WidgetRecord
from threadcase.report.langsmith_payload import OutgoingRedaction, run_metadata, run_outputs, unit_feedback


def test_a_transcript_loses_table_rows_credentials_and_secrets_but_keeps_the_conversation() -> None:
    case = result("orders", 0, ("pass",))
    assert case.record is not None
    agent = case.record.turns[3]
    agent.text = "Inserted the rows; your token sesame-4481 works."
    agent.tool_calls.append(
        ToolCallRecord(
            tool_call_id="tc2",
            tool_name="insert-data-table-rows",
            args={"tableId": "t1", "rows": [{"customer": "Ada Lovelace", "amount": 912}]},
            result={"inserted": 1, "data": [{"customer": "Ada Lovelace"}]},
        )
    )
    agent.widgets.append(
        WidgetRecord(
            request_id="r2",
            input_type="credentialSelection",
            request={"credentials": [{"id": "cred-prod-77", "name": "Ada's Slack", "type": "slackApi"}]},
            answer={"kind": "credentialSelection", "credentialId": "cred-prod-77", "apiKey": "abc-secret-value"},
            outcome="answered",
        )
    )
    outputs = run_outputs(case, OutgoingRedaction(["sesame-4481"]))
    sent = json.dumps(outputs)
    for private in ("Ada Lovelace", "912", "cred-prod-77", "Ada's Slack", "abc-secret-value", "sesame-4481"):
        assert private not in sent, private
    assert "<1 row(s) omitted>" in outputs["transcript"]
    assert "insert-data-table-rows" in outputs["transcript"]
    assert [m["role"] for m in outputs["messages"]] == ["user", "assistant", "user", "assistant"]
    assert outputs["messages"][3]["content"] == "Inserted the rows; your token [redacted] works."


def test_run_metadata_has_no_token_numbers_when_the_instance_gave_none() -> None:
    with_tokens, without = result("a", 0), result("b", 0)
    assert without.record is not None
    without.record.usage = {}
    assert run_metadata(with_tokens)["input_tokens"] == 1200
    assert "input_tokens" not in run_metadata(without)
    assert run_metadata(without)["turns"] == 1


def test_only_pass_and_fail_are_scores() -> None:
    redaction = OutgoingRedaction()
    assert unit_feedback(verdict("u", "pass"), redaction).score == 1
    assert unit_feedback(verdict("u", "fail"), redaction).score == 0
    unjudged = unit_feedback(verdict("u", "not_judged", "no judge model configured"), redaction)
    assert (unjudged.score, unjudged.comment) == (None, "not judged: no judge model configured (framework_issue)")
    reviewed = unit_feedback(verdict("review#0", "reviewed", kind="review"), redaction)
    assert reviewed.score is None
    assert reviewed.comment == "review: label of review#0"
