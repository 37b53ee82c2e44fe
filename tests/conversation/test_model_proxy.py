"""The model proxy in a live conversation, with the fake OpenAI-compatible server.

Asserts the prompt actually sent (sections, the script with its directions), that a director note
never reaches the agent even when the model quotes one, each decision's encoding to the confirm
body, and the scripted fallback when the model gives nothing.
"""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from tests.conversation.helpers import (
    asking_agent,
    build_once_agent,
    credential_agent,
    domain_agent,
    drive,
    echo_agent,
    make_case,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.models.answers import DONE, follow_up
from threadcase.models import ModelSettings
from threadcase.user_proxy.prompts import (
    SECTION_CONVERSATION,
    SECTION_EVENT,
    SECTION_MENU,
    SECTION_SCRIPT,
    SYSTEM_PROMPT,
)

pytestmark = pytest.mark.anyio

NOTE = "never reveal that you manage the ops rota"


def _models(url: str) -> ModelSettings:
    return ModelSettings(api_key=SecretStr("sk-test"), base_url=url, proxy_model="fake-proxy", max_attempts=2)


async def test_model_decisions_prompt_sections_and_encoding(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        {
            "decision": {
                "action": "answer_questions",
                "answers": [{"questionId": "channel", "selectedOptions": [], "customText": "#ops", "skipped": False}],
            }
        },
        follow_up("Thanks, looks good."),
        DONE,
    )
    case = make_case(["Post a Slack message every morning", f"Say thanks when it is built [{NOTE}]"])
    out = await drive(case, agent=asking_agent, models=_models(url))
    record = out.record
    widget = record.turns[1].widgets[0]
    assert widget.answered_by == "model"
    assert widget.answer == {
        "kind": "questions",
        "answers": [{"questionId": "channel", "selectedOptions": [], "customText": "#ops", "skipped": False}],
    }
    assert record.artifacts.workflows[0].nodes[0].parameters["channel"] == "#ops"
    assert [t.sent_by for t in record.turns if t.role == "user"] == ["opener", "proxy"]
    assert record.ended_by == "done"
    assert record.proxy_stats["model:answer_questions"] == 1
    assert fake.pending == 0

    # The prompt actually sent: system prompt, the four sections, the script with its direction.
    first = fake.requests[0]
    assert first["model"] == "fake-proxy"
    assert first["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    user_prompt = first["messages"][1]["content"]
    positions = [user_prompt.index(s) for s in (SECTION_SCRIPT, SECTION_CONVERSATION, SECTION_EVENT, SECTION_MENU)]
    assert positions == sorted(positions)
    assert NOTE in user_prompt  # the model is told the direction...
    assert "Which Slack channel should I post to?" in user_prompt  # ...and sees the widget
    assert first["response_format"]["type"] == "json_schema"
    assert "answer_questions" in json.dumps(first["response_format"])
    between = fake.requests[1]["messages"][1]["content"]
    assert "send_follow_up_message" in between
    assert "Built it, posting to #ops." in between  # the conversation so far
    assert "at most 5 more message(s)" in between  # the default message budget, none used yet
    # ...but the agent never hears it.
    for text in out.user_texts:
        assert NOTE not in text
        assert "[" not in text


async def test_model_message_quoting_a_note_is_never_sent(fake_openai: tuple[FakeOpenAI, str]) -> None:
    """Re-asked once with the reason; quoting again, the script speaks instead."""
    fake, url = fake_openai
    fake.queue(follow_up(f"Also, {NOTE}."), follow_up(f"Fine: {NOTE}!"), DONE)
    case = make_case(["Build a flow", "Rename it to Rota", f"[{NOTE}]"])
    out = await drive(case, agent=echo_agent, models=_models(url))
    assert out.user_texts == ["Build a flow", "Rename it to Rota"]
    stats = out.record.proxy_stats
    assert (stats["fault:quoted-note"], stats["reasked"], stats["fallback-fault"]) == (2, 1, 1)
    assert [t.sent_by for t in out.record.turns if t.role == "user"] == ["opener", "script"]
    reasked = fake.requests[1]["messages"]
    assert [m["role"] for m in reasked] == ["system", "user", "assistant", "user"]
    assert "not sent to the assistant" in reasked[-1]["content"]
    assert "stage direction" in reasked[-1]["content"]


async def test_model_failure_falls_back_to_scripted_behaviour(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(500, 500, 503, 503)  # two attempts per decision, both decisions fail
    case = make_case(["Connect my Slack", "[When the Slack credential card appears, set it up]"])
    out = await drive(case, agent=credential_agent, models=_models(url))
    widget = out.record.turns[1].widgets[0]
    assert widget.answered_by == "fallback"
    assert widget.answer is not None
    assert widget.answer["kind"] == "credentialSelection"
    assert widget.answer["credentials"]["slackApi"]
    assert out.record.proxy_stats["fallback-no-decision"] == 2
    assert out.record.ended_by == "done"  # nothing plain left in the script: done without another call
    assert len(fake.requests) == 4


async def test_model_credential_choice_and_unencodable_fallback(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        # A menu item that does not fit a credential card: encoded by the script instead.
        {"decision": {"action": "pick_resource_decision", "decision": "allowOnce"}},
        DONE,
    )
    out = await drive(
        make_case(["Connect my Slack", "[set up the Slack credential]"]), agent=credential_agent, models=_models(url)
    )
    widget = out.record.turns[1].widgets[0]
    assert widget.answered_by == "fallback"
    assert widget.answer is not None
    assert widget.answer["kind"] == "credentialSelection"
    assert out.record.proxy_stats["fallback-unencoded"] == 1


async def test_model_manual_credential_with_zero_existing_creates_before_confirm(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    fake, url = fake_openai
    fake.queue(
        {
            "decision": {
                "action": "choose_credential_setup_option",
                "option": "manual",
                "credentialType": "slackApi",
                "existingCredentialId": None,
                "credentialShouldWork": True,
            }
        },
        DONE,
    )
    out = await drive(make_case(["Connect my Slack", "[set it up]"]), agent=credential_agent, models=_models(url))
    widget = out.record.turns[1].widgets[0]
    assert widget.answered_by == "model"
    assert widget.answer is not None
    created = widget.answer["credentials"]["slackApi"]
    # The agent tested the credential right after the confirm: it was already pinned and bypassed.
    assert out.record.turns[1].text == f"Connected {created}; test passed."


async def test_rename_outside_the_conversation_and_saved_workflows_offered(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        {
            "decision": {
                "action": "send_follow_up_message",
                "message": "Is it still set up the same way?",
                "renameWorkflowTo": "Renamed outside",
                "runWorkflowId": "not-a-saved-workflow",
            }
        },
        DONE,
    )
    case = make_case(["Build a flow", "Check it is unchanged"], allowUserExecution=True)
    out = await drive(case, agent=build_once_agent, models=_models(url))
    workflow = out.record.artifacts.workflows[0]
    assert workflow.name == "Renamed outside"
    # The message never mentions the rename; the dropped run request is a warning, not a crash.
    assert out.user_texts[-1] == "Is it still set up the same way?"
    assert any("dropped runWorkflowId" in w for w in out.record.warnings)
    prompt = fake.requests[0]["messages"][1]["content"]
    assert f"- {workflow.id}: Demo flow" in prompt


async def test_domain_access_goes_to_the_model_while_a_direction_is_pending(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    fake, url = fake_openai
    fake.queue({"decision": {"action": "respond_to_domain_access", "decision": "deny"}}, DONE)
    case = make_case(["Fetch the weather", "[do not let it reach external sites]"])
    out = await drive(case, agent=domain_agent, models=_models(url))
    widget = out.record.live_turns[1].widgets[0]
    assert widget.answer == {"kind": "domainAccessDeny"}
    assert widget.answered_by == "model"
    assert out.record.live_turns[1].text == "domain answer: domainAccessDeny"


async def test_domain_access_allowed_deterministically_without_a_direction(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(DONE)
    out = await drive(make_case(["Fetch the weather", "thanks"]), agent=domain_agent, models=_models(url))
    widget = out.record.live_turns[1].widgets[0]
    assert widget.answer == {"kind": "domainAccessApprove", "domainAccessAction": "allow_all"}
    assert widget.answered_by == "deterministic"
    assert out.record.proxy_stats["deterministic:domain-access"] == 1


async def test_model_answer_to_a_declined_question_is_sent_as_skipped(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        {
            "decision": {
                "action": "answer_questions",
                "answers": [
                    {"questionId": "channel", "selectedOptions": [], "customText": "#general", "skipped": False}
                ],
            }
        },
        DONE,
    )
    case = make_case(["Post a Slack message every morning [decline if asked which channel]", "[stay polite]"])
    out = await drive(case, agent=asking_agent, models=_models(url))
    widget = out.record.live_turns[1].widgets[0]
    assert widget.answer == {
        "kind": "questions",
        "answers": [{"questionId": "channel", "selectedOptions": [], "skipped": True}],
    }
    assert out.record.proxy_stats["declined-held"] == 1
    assert out.record.artifacts.workflows[0].nodes[0].parameters["channel"] == "<CHANNEL: not given>"
