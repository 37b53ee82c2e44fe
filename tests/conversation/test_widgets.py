"""Widgets in a live conversation: credential cards (deferred / engaged with 0, 1, 2 existing), plans."""

from __future__ import annotations

import pytest

from tests.conversation.helpers import credential_agent, drive, make_case, planning_agent, wizard_agent

pytestmark = pytest.mark.anyio


async def test_credential_card_deferred_by_default() -> None:
    out = await drive(make_case(["Connect my Slack", "Then post a hello"]), agent=credential_agent)
    widget = out.record.turns[1].widgets[0]
    assert widget.answer == {"kind": "credentialSelection", "credentials": {}}
    assert widget.answered_by == "deterministic"
    assert widget.outcome == "deferred"
    assert "unconnected" in out.record.turns[1].text


async def test_credential_card_engaged_with_zero_existing_creates_a_working_one() -> None:
    case = make_case(["Connect my Slack", "[When the Slack credential card appears, set it up]"])
    out = await drive(case, agent=credential_agent)
    widget = out.record.turns[1].widgets[0]
    assert widget.answer is not None
    created_id = widget.answer["credentials"]["slackApi"]
    assert created_id in {c.id for c in out.credentials}
    assert out.record.turns[1].text == f"Connected {created_id}; test passed."
    assert out.record.proxy_stats["credential-created"] == 1
    assert out.record.proxy_stats["credential-test-bypassed"] >= 1


async def test_credential_that_should_not_authenticate_fails_its_test() -> None:
    case = make_case(["Connect my Slack", "[Set up the Slack credential, but it should not authenticate]"])
    out = await drive(case, agent=credential_agent)
    assert out.record.turns[1].text.endswith("test failed.")


async def test_credential_card_engaged_with_one_existing_selects_it() -> None:
    case = make_case(["Connect my Slack", "[Connect the Slack account when asked]"])
    out = await drive(case, agent=credential_agent, existing_credentials=(("slackApi", "Team Slack"),))
    team = next(c for c in out.credentials if c.name == "Team Slack")
    assert out.record.turns[1].widgets[0].answer == {
        "kind": "credentialSelection",
        "credentials": {"slackApi": team.id},
    }
    assert out.record.proxy_stats.get("credential-created", 0) == 0


async def test_credential_card_with_two_existing_picks_the_named_one_or_declines() -> None:
    two = (("slackApi", "Team Slack"), ("slackApi", "Ops Slack"))
    named = make_case(["Connect my Slack", "[Connect Slack with the credential 'Ops Slack']"])
    out = await drive(named, agent=credential_agent, existing_credentials=two)
    ops = next(c for c in out.credentials if c.name == "Ops Slack")
    assert out.record.turns[1].widgets[0].answer == {"kind": "credentialSelection", "credentials": {"slackApi": ops.id}}
    unnamed = make_case(["Connect my Slack", "[Set up the Slack credential when asked]"])
    out2 = await drive(unnamed, agent=credential_agent, existing_credentials=two)
    assert out2.record.turns[1].widgets[0].answer == {"kind": "approval", "approved": False}


async def test_wizard_card_deferred_by_default_and_slot_filled_when_engaged() -> None:
    deferred = await drive(make_case(["Post to Slack", "ok"]), agent=wizard_agent)
    assert deferred.record.turns[1].widgets[0].answer == {"kind": "approval", "approved": False}
    engaged = await drive(make_case(["Post to Slack", "[set up the Slack credential card]"]), agent=wizard_agent)
    answer = engaged.record.turns[1].widgets[0].answer
    assert answer is not None
    assert answer["kind"] == "setupWorkflowApply"
    created = answer["nodeCredentials"]["Post"]["slackApi"]
    assert engaged.record.turns[1].text == f"Setup: {created}"


async def test_a_plan_is_approved_and_the_turns_after_it_are_sent_as_messages() -> None:
    """Regression: a plan shown with no note pending was rejected with every remaining scripted turn
    folded into the rejection ("Before I approve, use these details: …"), so they were never sent."""
    case = make_case(["Every morning, post the weather on Slack", "Post it to #weather and mention @oncall"])
    out = await drive(case, agent=planning_agent)
    first = out.record.turns[1].widgets
    assert [w.answer for w in first] == [{"kind": "approval", "approved": True}]
    assert first[0].answered_by == "scripted"
    assert out.user_texts == ["Every morning, post the weather on Slack", "Post it to #weather and mention @oncall"]
    assert out.record.script is not None
    assert [t.delivered for t in out.record.script.turns] == [True]
    assert out.record.ended_by == "script-exhausted"


async def test_plan_missing_a_stated_requirement_is_pushed_back_quoting_it() -> None:
    said = "Every morning, post the weather to #weather on Slack."
    case = make_case([f"{said} [approve only plans that keep my channel]", "[be terse]"])
    out = await drive(case, agent=planning_agent)
    first = out.record.turns[1].widgets[0]
    assert first.answered_by == "scripted"
    assert first.outcome == "rejected"
    assert first.answer is not None
    assert f'"{said}"' in first.answer["userInput"]
    assert out.record.turns[1].widgets[1].outcome == "approved"
