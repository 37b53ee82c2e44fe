"""Reading n8n's requests: which agent asks, the user's text, the tool results, the step."""

from __future__ import annotations

import json

import pytest

from tests.standins import n8n_requests as n8n
from threadcase.standins.asks import classify, read_ask


@pytest.mark.parametrize(
    ("system", "tool_names", "agent"),
    [
        (n8n.SANDBOX_SYSTEM, n8n.ORCHESTRATOR_TOOLS, "orchestrator"),
        # Without a sandbox the system prompt opens differently; the tools still tell.
        (n8n.PLAIN_SYSTEM, n8n.ORCHESTRATOR_TOOLS[:14], "orchestrator"),
        ("You are the workflow builder sub-agent.", ("build-workflow", "nodes"), "subagent"),
        (n8n.TITLE_SYSTEM, (), "title"),
        (n8n.FIXTURES_SYSTEM, (), "fixtures"),
        (n8n.CLASSIFIER_SYSTEM, (), "classifier"),
        (n8n.HINTS_SYSTEM, (), "eval-hints"),
        (n8n.PIN_SYSTEM, (), "eval-pin-data"),
        (n8n.MOCK_SYSTEM, ("get_endpoint_quirks", "submit_response"), "eval-mock-responder"),
        (
            "You simulate ONE response from the LLM that powers an AI agent inside an n8n workflow",
            (),
            "eval-completion-mock",
        ),
        (n8n.OBSERVER_SYSTEM, (), "observer"),
        (n8n.REFLECTOR_SYSTEM, (), "reflector"),
        ("Summarise this.", (), "other"),
    ],
)
def test_every_caller_of_n8n_is_told_apart(system: str, tool_names: tuple[str, ...], agent: str) -> None:
    assert classify(system, tool_names) == agent


def test_the_user_text_loses_the_thread_context_and_the_step_is_after_the_user() -> None:
    ask = read_ask(n8n.orchestrator(n8n.user("Send the digest on Fridays")))
    assert ask.agent == "orchestrator"
    assert ask.user_texts == ("Send the digest on Fridays",)
    assert ask.after == "user"
    assert ask.stream is True


def test_tool_results_are_named_by_their_call_and_parsed() -> None:
    answers = {"answered": True, "answers": [{"questionId": "when", "selectedOptions": ["Friday"]}]}
    build = {"success": True, "workflowId": "AbC123", "workflowName": "Digest"}
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("Send the digest"),
            n8n.call("call_1_0", "ask-user", {"questions": []}),
            n8n.bare_result("call_1_0", answers),
            n8n.call("call_2_0", "build-workflow", {"filePath": "a.json"}),
            n8n.build_result("call_2_0", build),
        )
    )
    assert [r.tool for r in ask.results] == ["ask-user", "build-workflow"]
    assert ask.results[0].value == answers
    # build-workflow's two-part content: the value is the result, the text holds both parts.
    assert ask.results[1].value == build
    assert "Post-Build Flow" in ask.results[1].text
    assert ask.after == "build-workflow"


def test_results_since_the_latest_user_message_start_over_at_each_user_turn() -> None:
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("first"),
            n8n.call("c1", "ask-user", {}),
            n8n.bare_result("c1", {"answered": True, "answers": []}),
            {"role": "assistant", "content": "Done."},
            n8n.user("second"),
        )
    )
    assert [r.tool for r in ask.results] == ["ask-user"]
    assert ask.results_since_user == ()
    assert ask.user_texts == ("first", "second")


def test_an_untrusted_data_wrapper_is_removed_before_parsing() -> None:
    wrapped = '<untrusted_data source="research">\n{"pages": 2}\n</untrusted_data>'
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("look it up"),
            n8n.call("c1", "research", {}),
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(wrapped)},
        )
    )
    assert ask.results[0].value == {"pages": 2}


def test_a_result_that_is_not_json_stays_text() -> None:
    ask = read_ask(
        n8n.orchestrator(
            n8n.user("quirks?"),
            n8n.call("c1", "x", {}),
            {"role": "tool", "tool_call_id": "c1", "content": "No quirks."},
        )
    )
    assert ask.results[0].value == "No quirks."
    assert ask.results[0].text == "No quirks."
