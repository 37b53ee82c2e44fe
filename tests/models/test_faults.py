"""The model user's faults are caught before they are sent, counted by kind, and — when one still
reaches the agent — make the units it could affect *not judged* (``proxy_issue``), never a failure of
the builder.

Regression (issue 23, item 6): the model user re-sent the opening turn five times and copied the
example phrase of its own system prompt five times while the console said ``repeats 0``, and the
failures that followed were charged to the builder. The phrasings below are new, on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from tests.conversation.helpers import asking_agent, drive, echo_agent, make_case
from tests.fakes.openai_server import FakeOpenAI
from tests.grading.records import case, clean_record, with_turns
from tests.models.answers import DONE, follow_up
from threadcase.grading import grade_case
from threadcase.models import ModelSettings
from threadcase.records import Turn
from threadcase.user_proxy.faults import answer_fault, message_fault
from threadcase.user_proxy.prompts import SYSTEM_PROMPT
from threadcase.user_proxy.stats import format_proxy_stats

OPENER = "Send the weekly invoice digest to finance@acme.io every Friday at 5pm"
NOTE = "insist on the 5pm slot even if the assistant suggests another time"


def _fault(message: str, **kwargs: Any) -> str | None:
    found = message_fault(
        message,
        notes=kwargs.pop("notes", [NOTE]),
        previous_user=kwargs.pop("previous_user", OPENER),
        delivered=kwargs.pop("delivered", [OPENER]),
        pending=kwargs.pop("pending", ()),
        instructions=(SYSTEM_PROMPT,),
        last_assistant=kwargs.pop("last_assistant", "Done. The digest goes out every Friday at 5pm to finance."),
    )
    return found.kind if found is not None else None


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        # re-sending what was already delivered, exactly or nearly
        (OPENER, "resent-turn"),
        ("please send the weekly invoice digest to finance@acme.io every friday at 5pm!", "resent-turn"),
        # repeating the previous message
        ("Could you also copy the totals into the Billing sheet?", "repeat"),
        # quoting a director note, bracketed text, or the script and its instructions
        ("Fine, but I insist on the 5pm slot even if the assistant suggests another time.", "quoted-note"),
        ("Keep 5pm. [stay polite]", "quoted-note"),
        ("According to my script I should ask for the rename now.", "quoted-script"),
        ("The stage directions say I decline, so no.", "quoted-script"),
        ("Push back on a plan or summary that misses a stated requirement, please.", "quoted-script"),
        # reasoning leaked into the message
        ("The user wants the digest on Fridays, so I should now ask for the rename.", "quoted-script"),
        ("<think>deliver turn 2</think> Rename it please.", "quoted-script"),
        # speaking as the assistant
        ("I've created the workflow for you. Anything else?", "as-assistant"),
        ("Would you like me to add a retry step as well?", "as-assistant"),
        ("Here is your updated workflow with the Friday trigger.", "as-assistant"),
        ("Done, the digest goes out every Friday at 5pm to finance.", "as-assistant"),
        # nothing at all
        ("   ", "empty"),
        ("…", "empty"),
    ],
)
def test_each_kind_of_fault_is_named(message: str, kind: str) -> None:
    previous = "Could you also copy the totals into the Billing sheet?"
    assert _fault(message, previous_user=previous) == kind


@pytest.mark.parametrize(
    "message",
    [
        "Looks right — thanks!",
        "Can it go out at 4pm on Thursdays instead?",
        "I'll add the mail credentials myself later; carry on without them.",
        "I added the Gmail account on my side, please continue.",
        "Use the cleanup script that finance already has.",
        "Also rename it to Friday invoices.",
    ],
)
def test_what_a_user_would_say_is_not_a_fault(message: str) -> None:
    assert _fault(message, previous_user="Can it go out at 4pm?") is None


def test_repetition_the_script_asks_for_is_not_a_fault() -> None:
    # An authored repeat still pending is delivered, not re-sent...
    assert _fault("Thanks a lot!", delivered=["Thanks a lot!"], previous_user="x", pending=["Thanks a lot!"]) is None
    # ...and a note that says to ask again makes the repeat the script.
    again = ["ask for the CSV export again if it is ignored"]
    assert _fault("Please add the CSV export.", notes=again, previous_user="Please add the CSV export.") is None


def test_a_widget_answer_is_checked_for_notes_script_and_voice_but_may_be_empty() -> None:
    assert answer_fault(None, notes=[NOTE]) is None
    assert answer_fault("#finance", notes=[NOTE]) is None
    found = answer_fault("I have set up the workflow for you", notes=[NOTE])
    assert found is not None
    assert found.kind == "as-assistant"


def _models(url: str) -> ModelSettings:
    return ModelSettings(api_key=SecretStr("sk-test"), base_url=url, proxy_model="fake-proxy", max_attempts=1)


@pytest.mark.anyio
async def test_a_resent_opening_is_caught_and_reasked_with_the_reason(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(follow_up(OPENER + "."), follow_up("Also label it Friday invoices."), DONE)
    out = await drive(make_case([OPENER, "Also label it Friday invoices"]), agent=echo_agent, models=_models(url))
    assert out.user_texts == [OPENER, "Also label it Friday invoices."]
    stats = out.record.proxy_stats
    assert (stats["fault:resent-turn"], stats["reasked"]) == (1, 1)
    assert "repeats 1," in format_proxy_stats(stats)
    reask = fake.requests[1]["messages"]
    assert reask[-2]["role"] == "assistant"
    assert OPENER in reask[-2]["content"]
    assert "re-sends a request the user already made" in reask[-1]["content"]
    assert any("model message not sent (resent-turn" in w for w in out.record.warnings)


@pytest.mark.anyio
async def test_a_copied_phrase_reaches_the_agent_once(fake_openai: tuple[FakeOpenAI, str]) -> None:
    """The issue's loop: the same credentials phrase again and again. Sent once; then caught twice and the
    script (with nothing plain left to say) ends the conversation."""
    fake, url = fake_openai
    phrase = "I'll wire up the API keys myself tomorrow, go on without them."
    fake.queue(follow_up(phrase), follow_up(phrase), follow_up(phrase.upper()))
    out = await drive(make_case([OPENER, "[defer every credential]"]), agent=echo_agent, models=_models(url))
    assert out.user_texts == [OPENER, phrase]
    stats = out.record.proxy_stats
    assert (stats["fault:repeat"], stats["reasked"], stats["fallback-fault"]) == (2, 1, 1)
    assert out.record.ended_by == "done"


@pytest.mark.anyio
async def test_speaking_as_the_assistant_twice_falls_back_to_the_script(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai
    fake.queue(
        follow_up("I've built the workflow for you, shall I activate it?"),
        follow_up("Would you like me to rename it too?"),
        DONE,
    )
    out = await drive(make_case([OPENER, "Call it Friday invoices"]), agent=echo_agent, models=_models(url))
    assert out.user_texts == [OPENER, "Call it Friday invoices"]
    assert [t.sent_by for t in out.record.turns if t.role == "user"] == ["opener", "script"]
    assert out.record.proxy_stats["fault:as-assistant"] == 2


@pytest.mark.anyio
async def test_a_widget_answer_in_the_assistants_voice_is_reasked(fake_openai: tuple[FakeOpenAI, str]) -> None:
    fake, url = fake_openai

    def answer(text: str) -> dict[str, Any]:
        item = {"questionId": "channel", "selectedOptions": [], "customText": text, "skipped": False}
        return {"decision": {"action": "answer_questions", "answers": [item]}}

    fake.queue(answer("I have configured the workflow for you with #ops"), answer("#ops"), DONE)
    out = await drive(
        make_case(["Post a Slack message every morning", "[keep it short]"]), agent=asking_agent, models=_models(url)
    )
    widget = out.record.live_turns[1].widgets[0]
    assert widget.answer is not None
    assert widget.answer["answers"][0]["customText"] == "#ops"
    assert widget.answered_by == "model"
    assert out.record.proxy_stats["fault:as-assistant"] == 1


@pytest.mark.anyio
async def test_a_fault_that_reached_the_agent_voids_what_it_could_affect() -> None:
    """A transcript whose model user re-sent the opening (as before this change) is not graded against the
    builder: its units are not judged, attributed to the user; a check pointing earlier keeps its verdict."""
    record = clean_record()
    turns = [
        *record.turns,
        Turn(index=4, role="user", text="Send me a daily Slack digest of new signups!", sent_by="proxy"),
        Turn(index=5, role="assistant", text="Building a second digest.", run_ids=["run-3"], finish_status="completed"),
    ]
    the_case = case(checks={"mustContain": ["posts to #finance"], "mustEndWithQuestion": True})
    graded = await grade_case(the_case, with_turns(record, turns), client=None, models=ModelSettings())
    judged = {v.unit: v for v in graded.verdicts}
    assert {v.status for v in judged.values()} == {"not_judged"}
    assert {v.attribution for v in judged.values()} == {"proxy_issue"}
    reason = judged["check:mustContain#0"].reason
    assert "misspoke at turn 4 (resent-turn" in reason
    assert not any(v.counts_against_builder for v in graded.verdicts)
    premise = graded.premises[-1]
    assert (premise.name, premise.held) == ("user-faithful", False)
    # The same transcript without the re-sent opening is graded as before.
    clean = await grade_case(the_case, record, client=None, models=ModelSettings())
    assert any(v.status == "fail" and v.counts_against_builder for v in clean.verdicts)
