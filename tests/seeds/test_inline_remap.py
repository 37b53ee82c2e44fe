"""Pure seed preparation: shorthand expansion, timestamp slots, id and name remap, consistency rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from threadcase.case import schema
from threadcase.errors import CaseSchemaError
from threadcase.seeds.remap import (
    MAX_NAME,
    check_seed,
    expand_messages,
    remap_seed,
    seed_problems,
    seeded_name,
    seeded_name_pattern,
    slot,
)
from threadcase.seeds.turns import seeded_turns

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _seed(**fields: Any) -> schema.InlineSeed:
    return schema.InlineSeed.model_validate({"mode": "inline", **fields})


def test_shorthand_becomes_an_envelope_on_its_slot() -> None:
    out = expand_messages(
        [{"role": "user", "text": "build a report"}, {"role": "assistant", "text": ["line one", "line two"]}], now=NOW
    )
    assert [m["createdAt"] for m in out] == ["2020-01-01T00:00:00.000Z", "2020-01-01T00:00:01.000Z"]
    assert out[1]["content"] == [{"type": "text", "text": "line one\nline two"}]
    assert out[0]["type"] == "llm"
    assert out[0]["role"] == "user"
    assert out[0]["id"] != out[1]["id"]


def test_expansion_is_idempotent_and_leaves_its_input_alone() -> None:
    source = [{"role": "user", "text": "hi"}]
    once = expand_messages(source, now=NOW)
    assert expand_messages(once, now=NOW) == once
    assert source == [{"role": "user", "text": "hi"}]


def _envelope(i: int, stamp: Any) -> dict[str, Any]:
    return {
        "id": f"m{i}",
        "role": "user",
        "type": "llm",
        "content": [{"type": "text", "text": "x"}],
        "createdAt": stamp,
    }


def test_past_ascending_authored_stamps_are_kept() -> None:
    stamps = ["2024-05-01T10:00:00Z", "2024-05-01T10:00:05Z", 1714557610000]
    out = expand_messages([_envelope(i, s) for i, s in enumerate(stamps)], now=NOW)
    assert [m["createdAt"] for m in out] == [
        "2024-05-01T10:00:00Z",
        "2024-05-01T10:00:05Z",
        "2024-05-01T10:00:10.000Z",
    ]


@pytest.mark.parametrize(
    "stamps",
    [
        ["2024-05-01T10:00:05Z", "2024-05-01T10:00:00Z"],  # out of order
        ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"],  # not strictly ascending
        ["2024-05-01T10:00:00Z", "2030-01-01T00:00:00Z"],  # one in the future
        ["2024-05-01T10:00:00Z", None],  # one missing
    ],
)
def test_one_bad_stamp_restamps_the_whole_sequence(stamps: list[Any]) -> None:
    messages = [_envelope(i, s) for i, s in enumerate(stamps)]
    for message in messages:
        if message["createdAt"] is None:
            del message["createdAt"]
    out = expand_messages(messages, now=NOW)
    assert [m["createdAt"] for m in out] == [slot(0), slot(1)]


def test_a_mix_of_shorthand_and_recent_envelopes_is_restamped_as_one_sequence() -> None:
    out = expand_messages([_envelope(0, "2025-01-01T00:00:00Z"), {"role": "user", "text": "next"}], now=NOW)
    assert [m["createdAt"] for m in out] == [slot(0), slot(1)]


WF_A = "wfAAAAAAAA01"
WF_AB = "wfAAAAAAAA01x"  # contains WF_A: longest first, or it would be half-replaced
AGENT = "agentBBBBBB1"


def _rich_seed() -> schema.InlineSeed:
    return _seed(
        workflows=[
            {
                "id": WF_A,
                "name": "Report",
                "nodes": [{"name": "Report", "type": "n8n-nodes-base.set"}],
                "connections": {},
            },
            {"id": WF_AB, "name": "Report v2", "nodes": [], "connections": {}, "parentFolderId": "folder000001"},
        ],
        folders=[{"id": "folder000001", "name": "Seeds"}],
        agents=[
            {
                "id": AGENT,
                "config": {
                    "name": "Helper",
                    "model": "",
                    "instructions": "",
                    "tools": [{"type": "workflow", "workflow": "Report"}],
                },
            }
        ],
    )


def _messages() -> list[dict[str, Any]]:
    return expand_messages(
        [
            {"role": "user", "text": "Make me Report and Report v2"},
            {
                "id": "a1",
                "role": "assistant",
                "type": "llm",
                "createdAt": slot(1),
                "content": [
                    {"type": "text", "text": f"Built Report ({WF_A}) and Report v2 ({WF_AB})."},
                    {
                        "type": "tool-call",
                        "toolCallId": "c1",
                        "toolName": "build-workflow",
                        "state": "resolved",
                        "input": {"workflow": {"name": "Report"}},
                        "output": {"workflowId": WF_A, "workflowName": "Report"},
                    },
                    {
                        "type": "tool-call",
                        "toolCallId": "c2",
                        "toolName": "build-agent",
                        "state": "resolved",
                        "input": {},
                        "output": {"agentId": AGENT},
                    },
                ],
            },
        ],
        now=NOW,
    )


def test_remap_gives_fresh_ids_everywhere_and_suffixes_names() -> None:
    seed = _rich_seed()
    fresh = iter(["NEWID0000001", "NEWID0000002", "NEWID0000003"])
    out = remap_seed(seed, _messages(), run_suffix="0a1b2c3d", new_id=lambda: next(fresh))
    assert out.id_map == {WF_A: "NEWID0000001", WF_AB: "NEWID0000002", AGENT: "NEWID0000003"}
    blob = json.dumps([out.messages, out.workflows, out.agents])
    for old in (WF_A, WF_AB, AGENT):
        assert old not in blob
    assert [w["id"] for w in out.workflows] == ["NEWID0000001", "NEWID0000002"]
    assert [w["name"] for w in out.workflows] == ["Report [seed 0a1b2c3d]", "Report v2 [seed 0a1b2c3d]"]
    assert out.workflows[1]["parentFolderId"] == "folder000001"
    assert out.workflow_names == {WF_A: "Report [seed 0a1b2c3d]", WF_AB: "Report v2 [seed 0a1b2c3d]"}
    text = out.messages[1]["content"][0]["text"]
    assert text == "Built Report [seed 0a1b2c3d] (NEWID0000001) and Report v2 [seed 0a1b2c3d] (NEWID0000002)."
    assert out.messages[0]["content"][0]["text"] == "Make me Report [seed 0a1b2c3d] and Report v2 [seed 0a1b2c3d]"
    call = out.messages[1]["content"][1]
    assert call["output"] == {"workflowId": "NEWID0000001", "workflowName": "Report [seed 0a1b2c3d]"}
    assert call["input"] == {"workflow": {"name": "Report"}}, "tool payloads keep their text"
    assert out.workflows[0]["nodes"][0]["name"] == "Report", "node names are never rewritten"
    assert out.agents[0]["config"]["name"] == "Helper"
    assert out.agents[0]["config"]["tools"][0]["workflow"] == "Report [seed 0a1b2c3d]"


def test_two_runs_never_share_an_id() -> None:
    seed = _rich_seed()
    first = remap_seed(seed, _messages(), run_suffix="00000001")
    second = remap_seed(seed, _messages(), run_suffix="00000002")
    assert not set(first.id_map.values()) & set(second.id_map.values())


def test_long_names_are_capped_and_still_match_their_eviction_pattern() -> None:
    name = seeded_name("x" * 200, "deadbeef")
    assert len(name) == MAX_NAME
    assert name.endswith(" [seed deadbeef]")
    assert seeded_name_pattern("x" * 200).fullmatch(seeded_name("x" * 200, "cafef00d"))
    assert not seeded_name_pattern("Report").fullmatch("Report v2 [seed cafef00d]")
    assert seeded_name("Report", "not-hex-run-id").startswith("Report [seed ")


def test_a_build_result_naming_an_undeclared_workflow_is_a_case_error_that_says_which() -> None:
    seed = _seed(workflows=[{"id": WF_A, "name": "Report", "nodes": [], "connections": {}}])
    messages = _messages()
    with pytest.raises(CaseSchemaError) as caught:
        check_seed(seed, messages, case="reports")
    text = str(caught.value)
    assert "seed.messages[1].content[2].output.agentId" in text
    assert "build-agent" in text
    assert "'agentBBBBBB1'" in text
    assert seed_problems(_rich_seed(), messages=messages) == []


def test_seeded_turns_carry_text_and_tool_calls() -> None:
    turns = seeded_turns(_messages())
    assert [t.role for t in turns] == ["user", "assistant"]
    assert all(t.seeded and t.sent_by == "seed" for t in turns)
    assert [c.tool_name for c in turns[1].tool_calls] == ["build-workflow", "build-agent"]
    assert turns[1].tool_calls[0].result == {"workflowId": WF_A, "workflowName": "Report"}
    assert turns[0].text == "Make me Report and Report v2"


def test_an_unconvertible_epoch_stamp_is_restamped_not_a_crash() -> None:
    """Defence behind the load rule: a seed built in code with a NaN stamp is restamped onto the slots."""
    messages = expand_messages(
        [
            {
                "id": "a",
                "role": "user",
                "type": "llm",
                "content": [{"type": "text", "text": "x"}],
                "createdAt": float("nan"),
            }
        ]
    )
    assert messages[0]["createdAt"] == slot(0)
