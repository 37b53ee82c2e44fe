"""The pure reconstruction: turns, live-turn choice, artifacts, HITL, redaction."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.replay.tracebuilder import TraceBuilder, workflow
from threadcase.errors import ReplayError
from threadcase.seeds.replay_rebuild import TraceRun, rebuild_thread
from threadcase.seeds.replay_redact import omit_rows, strip_credentials

ROW_SECRET = "alice@private.example"


def _three_turn_thread() -> tuple[TraceBuilder, list[str]]:
    """Turn 1 builds two workflows and a table (with rows), turn 2 deletes one, turn 3 is live."""
    tb = TraceBuilder()
    t1 = tb.turn("Build me a Slack notifier and a Gmail digest", "Built both, plus a contacts table.")
    tb.tool(
        "build-workflow",
        {"workflow": workflow("wf-slack-0001", "Slack notifier", credential=True)},
        {"workflowId": "wf-slack-0001", "workflow": workflow("wf-slack-0001", "Slack notifier", credential=True)},
    )
    tb.tool(
        "build-workflow",
        {"workflow": workflow("wf-gmail-0002", "Gmail digest")},
        {"workflowId": "wf-gmail-0002", "workflow": workflow("wf-gmail-0002", "Gmail digest")},
    )
    tb.tool(
        "create-data-table",
        {"name": "Contacts", "columns": [{"name": "email", "type": "string"}], "rows": [{"email": ROW_SECRET}]},
        {
            "table": {"id": "tbl-contacts-01", "name": "Contacts", "columns": [{"name": "email", "type": "string"}]},
            "data": [{"email": ROW_SECRET}, {"email": "bob@private.example"}],
        },
    )
    t2 = tb.turn("Drop the Gmail digest, I don't need it", "Deleted it.")
    tb.tool("delete-workflow", {"workflowId": "wf-gmail-0002"}, {"deleted": True})
    t3 = tb.turn("Now make the Slack one post to #alerts", "")
    tb.tool(
        "build-workflow",
        {"workflowId": "wf-slack-0001", "workflow": workflow("wf-slack-0001", "After live")},
        {"workflowId": "wf-slack-0001", "workflow": workflow("wf-slack-0001", "After live")},
    )
    return tb, [t1, t2, t3]


def test_rebuild_restores_prior_turns_and_latest_artifacts_before_the_live_turn() -> None:
    tb, (t1, t2, t3) = _three_turn_thread()
    rec = rebuild_thread(tb.runs)

    assert rec.live_turn_run_id == t3
    assert rec.live_message == "Now make the Slack one post to #alerts"
    assert rec.replayed_turns == 2
    assert rec.thread_id == "thread-prod-1"
    assert [m["id"] for m in rec.messages] == [f"{t1}-user", f"{t1}-assistant", f"{t2}-user", f"{t2}-assistant"]
    assert rec.messages[0]["content"] == [{"type": "text", "text": "Build me a Slack notifier and a Gmail digest"}]
    assistant = rec.messages[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Built both, plus a contacts table."}
    assert [b["toolName"] for b in assistant[1:]] == ["build-workflow", "build-workflow", "create-data-table"]
    assert all(b["type"] == "tool-call" and b["state"] == "resolved" for b in assistant[1:])
    stamps = [m["createdAt"] for m in rec.messages]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)
    # Deleted stays deleted; the build during the live turn is not part of the seed.
    assert [(w.id, w.name) for w in rec.workflows] == [("wf-slack-0001", "Slack notifier")]
    assert [(t.id, t.name, [c.name for c in t.columns]) for t in rec.data_tables] == [
        ("tbl-contacts-01", "Contacts", ["email"])
    ]


def test_row_values_and_node_credentials_never_survive_the_rebuild() -> None:
    tb, _ = _three_turn_thread()
    rec = rebuild_thread(tb.runs)
    dumped = rec.model_dump_json()
    assert ROW_SECRET not in dumped
    assert "bob@private" not in dumped
    assert "cred-prod-secret-1" not in dumped
    assert "Alice's Slack" not in dumped
    table_call = rec.messages[1]["content"][3]
    assert table_call["input"]["rows"] == "<1 row(s) omitted>"
    assert table_call["output"]["data"] == "<2 row(s) omitted>"
    assert all("credentials" not in n for w in rec.workflows for n in w.nodes)


def test_redaction_is_copy_on_write() -> None:
    raw: dict[str, Any] = {"a": {"rows": [1, 2, 3]}, "b": [{"nodes": [{"name": "x", "credentials": {"k": 1}}]}]}
    before = json.dumps(raw)
    assert omit_rows(raw)["a"]["rows"] == "<3 row(s) omitted>"
    assert strip_credentials(raw)["b"][0]["nodes"] == [{"name": "x"}]
    assert json.dumps(raw) == before
    untouched = {"x": [1, {"y": 2}]}
    assert omit_rows(untouched) is untouched
    assert strip_credentials(untouched) is untouched


def test_credential_listings_keep_only_their_type() -> None:
    listing = {"credentials": [{"id": "c-prod-1", "name": "Alice's Slack", "type": "slackApi"}]}
    card = {"setupRequests": [{"node": "Slack", "existingCredentials": [{"id": "c-prod-1", "name": "Alice's Slack"}]}]}
    agent = {"config": {"credentials": {"openAiApi": {"id": "c-prod-2", "name": "Team key"}}}}
    assert strip_credentials(listing) == {
        "credentials": [{"id": "<credential omitted>", "name": "<credential omitted>", "type": "slackApi"}]
    }
    assert strip_credentials(card)["setupRequests"][0]["existingCredentials"] == [
        {"id": "<credential omitted>", "name": "<credential omitted>"}
    ]
    assert strip_credentials(agent)["config"]["credentials"] == {
        "openAiApi": {"id": "<credential omitted>", "name": "<credential omitted>"}
    }


def test_credential_ids_of_connection_tests_and_selections_are_omitted() -> None:
    """Regression: the demo agent's ``test-credential {credentialId}`` carried the production
    credential id into the restored history."""
    assert strip_credentials({"credentialId": "c-prod-1"}) == {"credentialId": "<credential omitted>"}
    answer = {"answers": [{"credentialIds": ["c-prod-1", "c-prod-2"], "kind": "credentialSelection"}]}
    assert strip_credentials(answer) == {
        "answers": [{"credentialIds": ["<credential omitted>", "<credential omitted>"], "kind": "credentialSelection"}]
    }


def test_rows_of_every_tool_are_omitted() -> None:
    """Regression: rows were omitted only from tools named after data tables, so any other tool that
    echoed rows (an HTTP call, a sub-agent's tool) carried them into the export and the restore."""
    run = TraceRun.from_raw(
        {
            "id": "r1",
            "name": "http-request",
            "run_type": "tool",
            "start_time": "2026-01-01T00:00:00Z",
            "inputs": {"data": [1, 2]},
            "outputs": {"rows": ["kept"]},
        }
    )
    assert run.inputs == {"data": "<2 row(s) omitted>"}
    assert run.outputs == {"rows": "<1 row(s) omitted>"}
    table = TraceRun.from_raw(
        {
            "id": "r2",
            "name": "data_tables_insert",
            "run_type": "tool",
            "start_time": "2026-01-01T00:00:00Z",
            "inputs": {"data": [1, 2]},
            "outputs": None,
        }
    )
    assert table.inputs == {"data": "<2 row(s) omitted>"}


def test_live_turn_run_id_hit_picks_that_turn() -> None:
    tb, (t1, t2, _) = _three_turn_thread()
    rec = rebuild_thread(tb.runs, live_turn_run_id=t2)
    assert rec.live_turn_run_id == t2
    assert rec.live_message == "Drop the Gmail digest, I don't need it"
    assert [m["id"] for m in rec.messages] == [f"{t1}-user", f"{t1}-assistant"]
    # Before turn 2 the Gmail digest still existed.
    assert sorted(w.id for w in rec.workflows) == ["wf-gmail-0002", "wf-slack-0001"]
    assert rec.warnings == []


def test_live_turn_run_id_miss_warns_and_falls_back_to_the_last_user_turn() -> None:
    tb, (_, _, t3) = _three_turn_thread()
    rec = rebuild_thread(tb.runs, live_turn_run_id="no-such-run")
    assert rec.live_turn_run_id == t3
    assert any("no-such-run" in w and "last user turn" in w for w in rec.warnings)


def test_live_turn_that_is_the_first_turn_is_refused() -> None:
    tb, (t1, _, _) = _three_turn_thread()
    with pytest.raises(ReplayError, match="first user turn"):
        rebuild_thread(tb.runs, live_turn_run_id=t1)
    single = TraceBuilder()
    single.turn("only message")
    with pytest.raises(ReplayError, match="nothing before it"):
        rebuild_thread(single.runs)


def test_a_thread_without_user_turns_is_an_error() -> None:
    tb = TraceBuilder()
    tb.turn({"not": "a string"})
    with pytest.raises(ReplayError, match="no user turn"):
        rebuild_thread(tb.runs)


def test_control_tag_roots_and_resumptions_fold_into_the_previous_turn() -> None:
    tb = TraceBuilder()
    t1 = tb.turn("Build the notifier", "Here is the plan.")
    tb.tool(
        "ask-user",
        {"question": "Which channel?"},
        {"deferred": True, "payload": {"inputType": "questions"}},
        metadata={"pending_tool_call_id": "call-1"},
    )
    tb.turn("<workflow-setup-required>{...}</workflow-setup-required>", "Resumed after your answer.")
    tb.tool(
        "ask-user", {"question": "Which channel?"}, {"answer": "#alerts"}, metadata={"pending_tool_call_id": "call-1"}
    )
    tb.tool(
        "ask-user", {"question": "Which channel?"}, {"answer": "#alerts"}, metadata={"pending_tool_call_id": "call-1"}
    )
    tb.turn("thanks, now add a filter")
    rec = rebuild_thread(tb.runs)
    assert rec.replayed_turns == 1
    assert [m["id"] for m in rec.messages] == [f"{t1}-user", f"{t1}-assistant"]
    content = rec.messages[1]["content"]
    assert content[0]["text"] == "Here is the plan.\n\nResumed after your answer."
    calls = [b for b in content if b["type"] == "tool-call"]
    assert len(calls) == 1
    assert calls[0]["output"] == {"answer": "#alerts"}
    assert calls[0]["toolCallId"] == "call-1"
    assert any("suspended" in w for w in rec.warnings)


def test_n8n_shapes_patch_rename_workflows_delete_failed_builds_and_inspected_artifacts() -> None:
    tb = TraceBuilder()
    tb.turn("go")
    tb.tool("get_workflow", {"workflowId": "wf-preexisting-9"}, {"workflow": {"id": "wf-preexisting-9", "nodes": []}})
    tb.tool("build_workflow", {"workflow": workflow("wf-a-00000001", "A")}, {"workflowId": "wf-a-00000001"})
    tb.tool(
        "patch-workflow",
        {"workflowId": "wf-a-00000001", "workflow": workflow("wf-a-00000001", "A v2")},
        {"workflowId": "wf-a-00000001"},
    )
    tb.tool("build-workflow", {"workflow": workflow("wf-a-00000001", "A broken")}, None, error="validation failed")
    tb.tool("submit-workflow", {"code": "export default workflow(...)"}, {"workflowId": "wf-b-00000002"})
    tb.tool("build-workflow", {"workflow": workflow("wf-c-00000003", "C")}, {"workflowId": "wf-c-00000003"})
    tb.tool("workflows", {"action": "delete", "workflowId": "wf-c-00000003"}, {"ok": True})
    tb.tool("rename-workflow", {"workflowId": "wf-a-00000001", "name": "A final"}, {"workflowId": "wf-a-00000001"})
    tb.tool("list-data-tables", {}, {"dataTables": [{"id": "tbl-old", "name": "Old", "columns": []}]})
    tb.turn("live")
    rec = rebuild_thread(tb.runs)
    assert [(w.id, w.name) for w in rec.workflows] == [("wf-a-00000001", "A final")]
    assert rec.data_tables == []
    joined = " | ".join(rec.warnings)
    assert "1 workflow build(s) carried no workflow JSON" in joined
    assert "wf-preexisting-9" in joined
    assert "tbl-old" in joined
    assert "only agent-built artifacts" in joined
    errored = [b for b in rec.messages[1]["content"] if b.get("state") == "error"]
    assert errored
    assert errored[0]["error"] == "validation failed"


def test_rebuild_is_independent_of_input_order_and_duplicate_records() -> None:
    tb, _ = _three_turn_thread()
    shuffled = list(reversed(tb.runs)) + tb.runs[:3]
    assert rebuild_thread(shuffled).model_dump_json() == rebuild_thread(tb.runs).model_dump_json()


def test_naive_timestamps_mean_utc_and_sub_millisecond_ties_stay_ascending() -> None:
    runs: list[dict[str, Any]] = []
    for i, stamp in enumerate(["2026-01-01T00:00:00.000100", "2026-01-01T00:00:00.000200", "2026-01-01T00:00:01"]):
        runs.append(
            {
                "id": f"root-{i}",
                "name": "turn",
                "run_type": "chain",
                "start_time": stamp,
                "inputs": {"message": f"m{i}"},
                "outputs": {"response": f"r{i}"},
            }
        )
    rec = rebuild_thread(runs)
    stamps = [m["createdAt"] for m in rec.messages]
    assert stamps == [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.001Z",
        "2026-01-01T00:00:00.002Z",
        "2026-01-01T00:00:00.003Z",
    ]


def test_unreadable_run_names_its_index() -> None:
    with pytest.raises(ReplayError, match=r"trace run #1 \(id 'x'\)"):
        rebuild_thread(
            [
                {"id": "ok", "name": "turn", "run_type": "chain", "start_time": "2026-01-01T00:00:00Z"},
                {"id": "x", "name": "turn", "run_type": "chain"},
            ]
        )


def test_inline_seed_equivalent_carries_everything() -> None:
    tb, _ = _three_turn_thread()
    rec = rebuild_thread(tb.runs)
    seed = rec.to_inline_seed()
    assert seed.mode == "inline"
    assert seed.messages == rec.messages
    assert [w.id for w in seed.workflows] == ["wf-slack-0001"]
    assert [t.id for t in seed.data_tables] == ["tbl-contacts-01"]


def test_unrestorable_artifacts_are_left_out_with_a_warning_and_names_made_unique() -> None:
    tb = TraceBuilder()
    tb.turn("build three")
    tb.tool("build-workflow", {"workflow": workflow("short", "Tiny id")}, {"workflowId": "short"})
    tb.tool("build-workflow", {"workflow": workflow("wf-dup-000001", "Same")}, {"workflowId": "wf-dup-000001"})
    tb.tool("build-workflow", {"workflow": workflow("wf-dup-000002", "Same")}, {"workflowId": "wf-dup-000002"})
    tb.tool("create-data-table", {}, {"table": {"id": "t1", "name": "Short id table", "columns": []}})
    tb.turn("live")
    rec = rebuild_thread(tb.runs)
    assert [(w.id, w.name) for w in rec.workflows] == [("wf-dup-000001", "Same"), ("wf-dup-000002", "Same (2)")]
    assert rec.data_tables == []
    joined = " | ".join(rec.warnings)
    assert "workflow short cannot be restored" in joined
    assert "data table t1 cannot be restored" in joined
    assert "' (n)' suffix" in joined
    rec.to_inline_seed()  # validates under the case schema's inline-seed rules


def test_more_prior_messages_than_the_restore_limit_drops_the_oldest_whole_turns() -> None:
    tb = TraceBuilder()
    first = tb.turn("turn 0", "answer 0")
    for i in range(1, 502):
        tb.turn(f"turn {i}", f"answer {i}")
    rec = rebuild_thread(tb.runs)
    assert len(rec.messages) == 1000
    assert rec.messages[0]["role"] == "user"
    assert rec.messages[0]["content"][0]["text"] == "turn 1"
    assert all(not m["id"].startswith(first) for m in rec.messages)
    assert any("oldest 1 turn(s)" in w for w in rec.warnings)
    rec.to_inline_seed()


def test_an_assistant_turn_with_nothing_said_still_has_a_content_block() -> None:
    tb = TraceBuilder()
    tb.turn("hello")
    tb.turn("live")
    rec = rebuild_thread(tb.runs)
    assert rec.messages[1]["content"] == [{"type": "text", "text": ""}]
    rec.to_inline_seed()


def test_tool_runs_sharing_a_start_millisecond_keep_their_call_order() -> None:
    """Regression: the demo's millisecond stamps put create-data-table after the build it preceded."""
    runs: list[dict[str, Any]] = [
        {
            "id": "root-1",
            "name": "turn",
            "run_type": "chain",
            "start_time": "2026-01-01T00:00:00.000Z",
            "inputs": {"message": "build"},
            "outputs": {"response": "ok"},
        },
        {
            "id": "zzz-first",
            "name": "list-data-tables",
            "run_type": "tool",
            "parent_run_id": "root-1",
            "start_time": "2026-01-01T00:00:00.005Z",
            "end_time": "2026-01-01T00:00:00.005Z",
            "outputs": {},
        },
        {
            "id": "yyy-second",
            "name": "create-data-table",
            "run_type": "tool",
            "parent_run_id": "root-1",
            "start_time": "2026-01-01T00:00:00.005Z",
            "end_time": "2026-01-01T00:00:00.006Z",
            "outputs": {},
        },
        {
            "id": "aaa-third",
            "name": "build-workflow",
            "run_type": "tool",
            "parent_run_id": "root-1",
            "start_time": "2026-01-01T00:00:00.006Z",
            "end_time": "2026-01-01T00:00:00.006Z",
            "outputs": {},
        },
        {
            "id": "root-2",
            "name": "turn",
            "run_type": "chain",
            "start_time": "2026-01-01T00:00:01Z",
            "inputs": {"message": "live"},
        },
    ]
    rec = rebuild_thread(runs)
    names = [b["toolName"] for b in rec.messages[1]["content"] if b["type"] == "tool-call"]
    assert names == ["list-data-tables", "create-data-table", "build-workflow"]
