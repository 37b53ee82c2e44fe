"""The misbehaviours ``threadcase control`` needed to show every golden case can fail (issue 20).

``asks-what-was-given``, ``drops-credential``, ``pads-replies``, and ``claims-done-without-credentials``
passing off a failed connection test. Each acts on what the agent does, whatever the words: the
requests here are in phrasings of their own, and each is checked against the clean agent with the
same words.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo._agent_fake import ONE_CREDENTIAL_EACH, FakeContext, Thread, node, questions
from threadcase.demo_instance.agent import misbehave as mb

pytestmark = pytest.mark.anyio

SLACK = "n8n-nodes-base.slack"
GMAIL = "n8n-nodes-base.gmail"

GIVEN_DETAILS = [
    ("Every Monday at 7am share the pipeline numbers in #revops", "slack_channel", SLACK, "channelId.value", "#revops"),
    ("When a webhook is called, email the payload to billing@northwind.test", "gmail_recipient", GMAIL, "sendTo", None),
    (
        "Every hour fetch https://status.example.org/api and post it to #ops-feed",
        "slack_channel",
        SLACK,
        "channelId.value",
        None,
    ),
]


def _thread(*misbehaviours: str, credentials: list[dict[str, str]] | None = None, **ctx: Any) -> Thread:
    fake = FakeContext(credentials=list(ONE_CREDENTIAL_EACH) if credentials is None else credentials, **ctx)
    return Thread(fake, misbehaviours=frozenset(misbehaviours), mode="default")


def _asked_ids(thread: Thread) -> list[str]:
    return [q["id"] for ask in thread.ctx.asks if ask.get("inputType") == "questions" for q in ask["questions"]]


def _only(thread: Thread) -> dict[str, Any]:
    (workflow,) = thread.ctx.workflows.values()
    return workflow


# --- asks-what-was-given ----------------------------------------------------------------------


@pytest.mark.parametrize(("message", "key", "node_type", "param", "value"), GIVEN_DETAILS)
async def test_a_given_detail_is_never_asked_for_by_the_clean_agent(
    message: str, key: str, node_type: str, param: str, value: str | None
) -> None:
    thread = _thread()
    await thread.send(message)
    assert key not in _asked_ids(thread)


@pytest.mark.parametrize(("message", "key", "node_type", "param", "value"), GIVEN_DETAILS)
async def test_asks_what_was_given_asks_for_it_and_keeps_what_the_user_said(
    message: str, key: str, node_type: str, param: str, value: str | None
) -> None:
    thread = _thread(mb.ASKS_WHAT_WAS_GIVEN).answer(questions(**{key: "#somewhere-else"}))
    await thread.send(message)
    assert key in _asked_ids(thread)
    built: Any = node(_only(thread), node_type)["parameters"]
    for part in param.split("."):
        built = built[part]
    assert built != "#somewhere-else"  # the needless answer is not used
    if value is not None:
        assert built == value


async def test_asks_what_was_given_asks_once_per_detail_per_thread() -> None:
    thread = _thread(mb.ASKS_WHAT_WAS_GIVEN).answer(questions(slack_channel="#x"))
    await thread.send("Every weekday at 8 share the burn-down in #delivery")
    await thread.send("Switch it over to #delivery-leads")
    assert _asked_ids(thread).count("slack_channel") == 1


# --- drops-credential -------------------------------------------------------------------------


async def test_the_clean_agent_puts_the_only_credential_on_the_node() -> None:
    thread = _thread()
    await thread.send("On Fridays at 4pm ping #standup about timesheets")
    assert node(_only(thread), SLACK).get("credentials") == {"slackApi": {"id": "c1", "name": "Team Slack"}}


async def test_drops_credential_reports_it_but_saves_the_node_without_it() -> None:
    thread = _thread(mb.DROPS_CREDENTIAL)
    reply = await thread.send("On Fridays at 4pm ping #standup about timesheets")
    assert "credentials" not in node(_only(thread), SLACK)
    assert "test-credential" in thread.ctx.tool_names()  # tested as usual: only the save leaves it off
    assert "credential" not in reply.lower()  # and nothing says the node has none


async def test_drops_credential_also_drops_one_chosen_among_several() -> None:
    two = [
        {"id": "s1", "name": "Ops Slack", "type": "slackApi"},
        {"id": "s2", "name": "Growth Slack", "type": "slackApi"},
    ]
    clean = _thread(credentials=two).answer(questions(**{"credential:slackApi": "Growth Slack"}))
    await clean.send("Post the churn digest to #growth every morning")
    assert node(_only(clean), SLACK)["credentials"]["slackApi"]["name"] == "Growth Slack"
    bad = _thread(mb.DROPS_CREDENTIAL, credentials=two).answer(questions(**{"credential:slackApi": "Growth Slack"}))
    await bad.send("Post the churn digest to #growth every morning")
    assert "credentials" not in node(_only(bad), SLACK)


# --- pads-replies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Every day at noon notify #lunch-club that it is time",
        "thanks, that's everything",
        "What's in the Finance folder?",
    ],
)
async def test_pads_replies_grows_every_answer_and_ends_it_with_a_question(message: str) -> None:
    clean = await _thread().send(message)
    padded = await _thread(mb.PADS_REPLIES).send(message)
    assert padded.startswith(clean)
    assert len(padded.splitlines()) >= len(clean.splitlines()) + 5
    assert padded.rstrip().endswith("?")


# --- claims-done-without-credentials: a failed connection test --------------------------------


async def test_a_failed_test_is_reported_by_the_clean_agent_and_passed_off_under_claims_done() -> None:
    broken = [{"id": "bad", "name": "Old Slack token", "type": "slackApi"}]
    clean = await _thread(credentials=broken, working=set()).send("Each evening send #night-shift the handover")
    assert "failed its connection test" in clean
    claimed = await _thread(mb.CLAIMS_DONE_WITHOUT_CREDENTIALS, credentials=broken, working=set()).send(
        "Each evening send #night-shift the handover"
    )
    assert "failed" not in claimed
    assert "connection test passed" in claimed


async def test_connecting_an_account_whose_test_fails_is_called_connected_under_claims_done() -> None:
    def pick(request: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "credentialSelection", "credentials": {"slackApi": "bad"}}

    broken = [{"id": "bad", "name": "Expired Slack", "type": "slackApi"}]
    clean = _thread(credentials=broken, working=set()).answer(pick)
    assert "failed its connection test" in await clean.send("Hook up my Slack")
    claimed = _thread(mb.CLAIMS_DONE_WITHOUT_CREDENTIALS, credentials=broken, working=set()).answer(pick)
    reply = await claimed.send("Hook up my Slack")
    assert "failed" not in reply
    assert "connected" in reply
