"""Deterministic short-circuits and the scripted proxy's decisions."""

from __future__ import annotations

from typing import Any

import pytest

from threadcase import wire
from threadcase.case.notes import Script
from threadcase.user_proxy import ConversationView, ProxyStats, ScriptedProxy, format_proxy_stats
from threadcase.user_proxy.deterministic import auto_approve, deterministic_answer
from threadcase.user_proxy.scripted import plan_gaps

pytestmark = pytest.mark.anyio


class FakeCredentials:
    def __init__(self) -> None:
        self.created: list[tuple[str, bool]] = []

    async def create(self, credential_type: str, *, working: bool) -> str:
        self.created.append((credential_type, working))
        return f"new-{len(self.created)}"


def _request(request_id: str = "r1", **fields: Any) -> wire.ConfirmationRequest:
    return wire.ConfirmationRequest.model_validate({"requestId": request_id, **fields})


def _body(body: Any) -> dict[str, Any]:
    return dict(body.model_dump(mode="json", exclude_none=True))


def _script(*texts: str) -> Script:
    return Script.from_texts([("user", t) for t in texts])


def test_infrastructure_rules() -> None:
    domain = deterministic_answer(
        _request(inputType="domain-access", domainAccess={"host": "x"}), pending_direction=False
    )
    assert domain is not None
    assert _body(domain.body) == {"kind": "domainAccessApprove", "domainAccessAction": "allow_all"}
    resource = deterministic_answer(
        _request(inputType="resource-decision", resourceDecision={"options": ["deny", "allowAlways"]}),
        pending_direction=False,
    )
    assert resource is not None
    assert _body(resource.body) == {"kind": "resourceDecision", "resourceDecision": "allowAlways"}
    dest = deterministic_answer(
        _request(inputType="credential-destination", credentialDestination={}), pending_direction=False
    )
    assert dest is not None
    assert _body(dest.body) == {"kind": "credentialDestination", "approved": True}


async def test_domain_access_waits_for_a_web_access_note_and_follows_it() -> None:
    proxy = ScriptedProxy(_script("Build it", "[deny web access]"))
    answer = await proxy.answer(_request(inputType="web-search", webSearch={}), ConversationView(), FakeCredentials())
    assert answer.answered_by == "scripted"
    assert _body(answer.body) == {"kind": "domainAccessDeny"}
    plain = ScriptedProxy(_script("Build it", "Thanks"))
    allowed = await plain.answer(_request(inputType="web-search", webSearch={}), ConversationView(), FakeCredentials())
    assert allowed.answered_by == "deterministic"


def test_credential_cards_deferred_without_direction() -> None:
    card = deterministic_answer(
        _request(inputType="credentials", credentialRequests=[{"credentialType": "slackApi"}]), pending_direction=False
    )
    assert card is not None
    assert _body(card.body) == {"kind": "credentialSelection", "credentials": {}}
    wizard = deterministic_answer(
        _request(inputType="setup", setupRequests=[{"node": {"name": "Slack"}, "credentialType": "slackApi"}]),
        pending_direction=False,
    )
    assert wizard is not None
    assert _body(wizard.body) == {"kind": "approval", "approved": False}
    mixed = _request(
        inputType="setup",
        setupRequests=[{"node": {"name": "Slack"}, "credentialType": "slackApi", "parameterIssues": {"c": ["x"]}}],
    )
    assert deterministic_answer(mixed, pending_direction=False) is None


async def test_a_plan_review_never_swallows_the_turns_still_to_come() -> None:
    """Regression: a plan shown with no note pending was rejected with every remaining scripted turn
    folded into its text, so those turns (a pressure case's pushes) were never sent on their own."""
    proxy = ScriptedProxy(_script("Build a Slack digest for #ops", "Put my token in the header", "Just do it"))
    plan = _request(inputType="plan-review", plan=[{"title": "Slack", "detail": "post to #ops"}])
    answer = await proxy.answer(plan, ConversationView(), FakeCredentials())
    assert _body(answer.body) == {"kind": "approval", "approved": True}
    assert proxy.script.remaining_spoken() == ["Put my token in the header", "Just do it"]


def test_auto_approve() -> None:
    assert _body(
        auto_approve(_request(inputType="setup", setupRequests=[{"node": {"name": "S"}, "credentialType": "x"}])).body
    ) == {"kind": "setupWorkflowApply"}
    assert _body(auto_approve(_request(inputType="questions", questions=[{"id": "q", "question": "?"}])).body) == {
        "kind": "questions",
        "answers": [],
    }
    assert _body(auto_approve(_request(inputType="plan-review")).body) == {"kind": "approval", "approved": True}


async def test_scripted_questions_decline_and_fill() -> None:
    proxy = ScriptedProxy(_script("Post a Slack message every morning [decline if asked for the channel]"))
    request = _request(
        inputType="questions",
        questions=[
            {"id": "c", "question": "Which Slack channel should I post to?"},
            {"id": "e", "question": "Who should get the email?"},
        ],
    )
    answer = await proxy.answer(request, ConversationView(), FakeCredentials())
    assert answer.answered_by == "scripted"
    answers = _body(answer.body)["answers"]
    assert answers[0] == {"questionId": "c", "selectedOptions": [], "skipped": True}
    # Nothing in the script gives an address: a plainly placeholder one, recorded as invented.
    assert answers[1]["customText"] == "placeholder@example.com"
    assert [(v.asked, v.source) for v in proxy.director.values] == [
        ("Which Slack channel should I post to?", "declined"),
        ("Who should get the email?", "invented"),
    ]
    assert format_proxy_stats(proxy.stats.as_dict()).endswith(", invented values 1]")
    # Asked again: the cached answer, counted as a repeat.
    again = await proxy.answer(request, ConversationView(), FakeCredentials())
    assert again.answered_by == "repeat"
    assert again.body == answer.body
    assert proxy.stats["repeat"] == 1


async def test_scripted_plan_pushback_quotes_the_missing_requirement() -> None:
    proxy = ScriptedProxy(_script("Every morning, post the weather to #ops on Slack. [approve only complete plans]"))
    plan = _request(inputType="plan-review", plan=[{"title": "Schedule trigger"}, {"title": "Post to Slack"}])
    answer = await proxy.answer(plan, ConversationView(), FakeCredentials())
    body = _body(answer.body)
    assert body["approved"] is False
    assert "#ops" in body["userInput"]
    assert answer.outcome == "rejected"
    assert proxy.stats["rejection"] == 1
    good = _request("r2", inputType="plan-review", plan=[{"title": "Post to Slack", "detail": "channel #ops"}])
    assert _body((await proxy.answer(good, ConversationView(), FakeCredentials())).body)["approved"] is True


def test_plan_gaps_services() -> None:
    assert plan_gaps("Send a Gmail message", "Email it via Gmail. Then post to Slack.") == ["Then post to Slack."]


@pytest.mark.parametrize(
    ("existing", "note", "expected", "created"),
    [
        ([], "When the Slack card appears, set it up", {"slackApi": "new-1"}, [("slackApi", True)]),
        ([{"id": "s1", "name": "Team Slack"}], "Connect the Slack account", {"slackApi": "s1"}, []),
        (
            [{"id": "s1", "name": "Team Slack"}, {"id": "s2", "name": "Ops Slack"}],
            "Connect Slack with the credential 'Ops Slack'",
            {"slackApi": "s2"},
            [],
        ),
        (
            [],
            "Set up the Slack credential, but it should not authenticate",
            {"slackApi": "new-1"},
            [("slackApi", False)],
        ),
    ],
)
async def test_scripted_credential_engagement(
    existing: list[dict[str, str]], note: str, expected: dict[str, str], created: list[tuple[str, bool]]
) -> None:
    proxy = ScriptedProxy(_script("Connect my Slack", f"[{note}]"))
    creds = FakeCredentials()
    card = _request(
        inputType="credentials", credentialRequests=[{"credentialType": "slackApi", "existingCredentials": existing}]
    )
    answer = await proxy.answer(card, ConversationView(), creds)
    assert _body(answer.body) == {"kind": "credentialSelection", "credentials": expected}
    assert creds.created == created


async def test_scripted_credential_two_existing_without_name_declines() -> None:
    proxy = ScriptedProxy(_script("Connect my Slack", "[set up the Slack credential]"))
    two = [{"id": "s1", "name": "A"}, {"id": "s2", "name": "B"}]
    card = _request(
        inputType="credentials", credentialRequests=[{"credentialType": "slackApi", "existingCredentials": two}]
    )
    answer = await proxy.answer(card, ConversationView(), FakeCredentials())
    assert _body(answer.body) == {"kind": "approval", "approved": False}


async def test_scripted_follow_ups_and_stats_segment() -> None:
    stats = ProxyStats()
    proxy = ScriptedProxy(_script("Build it", "Use #ops", "Rename it to Z"), stats)
    first = await proxy.next_message(ConversationView())
    second = await proxy.next_message(ConversationView())
    assert first is not None
    assert first.message == "Use #ops"
    assert second is not None
    assert second.message == "Rename it to Z"
    assert await proxy.next_message(ConversationView()) is None
    stats["credential-test-bypassed"] = 2
    segment = format_proxy_stats(stats.as_dict())
    assert segment.startswith("[proxy: decisions 3 (declare_done 1, send_follow_up_message 2; model 0)")
    assert "credential tests bypassed 2" in segment


async def test_scripted_option_prefers_the_longest_mention_and_text_prompts_get_a_value() -> None:
    proxy = ScriptedProxy(_script("Post to Slack", "[use the credential 'Slack (workspace 2)' when asked]"))
    question = _request(
        inputType="questions",
        questions=[
            {"id": "c", "question": "Which Slack?", "type": "single", "options": ["Slack", "Slack (workspace 2)"]}
        ],
    )
    answer = await proxy.answer(question, ConversationView(), FakeCredentials())
    assert _body(answer.body)["answers"][0]["selectedOptions"] == ["Slack (workspace 2)"]
    text = await proxy.answer(
        _request("r2", inputType="text", message="Which channel should alerts go to?"),
        ConversationView(),
        FakeCredentials(),
    )
    assert _body(text.body) == {"kind": "approval", "approved": True, "userInput": "#placeholder-channel"}


async def test_a_service_no_built_in_list_knows_binds_its_credential_by_name() -> None:
    """A note naming Typeform or Airtable used to read as "any service" (every card engaged) or not at all."""
    proxy = ScriptedProxy(
        _script("Sync form answers to a base", "[Hook up Airtable with a fresh credential; hold off on Typeform.]")
    )
    card = _request(
        inputType="setup",
        setupRequests=[
            {"node": {"name": "Typeform", "type": "n8n-nodes-base.typeformTrigger"}, "credentialType": "typeformApi"},
            {"node": {"name": "Airtable", "type": "n8n-nodes-base.airtable"}, "credentialType": "airtableTokenApi"},
        ],
    )
    creds = FakeCredentials()
    body = _body((await proxy.answer(card, ConversationView(), creds)).body)
    assert body["kind"] == "setupWorkflowApply"
    assert list(body["nodeCredentials"]) == ["Airtable"]
    assert creds.created == [("airtableTokenApi", True)]


@pytest.mark.parametrize(
    ("credential_type", "expected", "created"),
    [
        ("hubspotApi", {"hubspotApi": "new-1"}, [("hubspotApi", False)]),
        ("slackApi", {}, []),  # another service's card: deferred, as with no note
    ],
)
async def test_a_credential_meant_to_fail_is_bound_to_the_service_the_note_names(
    credential_type: str, expected: dict[str, str], created: list[tuple[str, bool]]
) -> None:
    proxy = ScriptedProxy(
        _script("Connect my CRM", "[Give it the wrong HubSpot key — it has to fail the connection test]")
    )
    creds = FakeCredentials()
    card = _request(inputType="credentials", credentialRequests=[{"credentialType": credential_type}])
    answer = await proxy.answer(card, ConversationView(), creds)
    assert _body(answer.body) == {"kind": "credentialSelection", "credentials": expected}
    assert creds.created == created
