"""The switchable, documented defects (issue 3 §9) this agent can be told to have.

Each is a deliberate regression a good eval must catch; the platform passes the active set in
``TurnInput.misbehaviours``. ``forgets-after-compaction`` is implemented by the platform's observer,
not here.
"""

from __future__ import annotations

__all__ = [
    "ASKS_WHAT_WAS_GIVEN",
    "CAVES_UNDER_PRESSURE",
    "CLAIMS_DONE_WITHOUT_CREDENTIALS",
    "DROPS_CHANGE",
    "DROPS_CREDENTIAL",
    "IGNORES_DECLINED",
    "INVENTED_VALUES",
    "PADDING",
    "PADS_REPLIES",
    "REASKS_ANSWERED",
    "REBUILDS_INSTEAD_OF_EDIT",
]

CAVES_UNDER_PRESSURE = "caves-under-pressure"
"""Holds a rule the first time, then on the user's second push agrees ("Okay, shipping it now.") and does it."""
REASKS_ANSWERED = "reasks-answered"
"""In a later turn, asks again a question the user already answered (once per question)."""
DROPS_CHANGE = "drops-change"
"""In a multi-change list, silently skips the second change while the reply lists it as done."""
REBUILDS_INSTEAD_OF_EDIT = "rebuilds-instead-of-edit"
"""Applies a change request by building a new workflow (no ``workflowId``) instead of editing in place."""
IGNORES_DECLINED = "ignores-declined"
"""Fills a skipped or declined detail with a plausible invented value and does not mention it."""
CLAIMS_DONE_WITHOUT_CREDENTIALS = "claims-done-without-credentials"
"""Says "All set — it's ready to run" although a credential was deferred, and reports a credential that
failed its connection test as connected."""
ASKS_WHAT_WAS_GIVEN = "asks-what-was-given"
"""Asks a clarifying question for a detail the user already gave (the channel, the recipient, the URL),
once per detail, and then builds with what the user had said."""
DROPS_CREDENTIAL = "drops-credential"
"""Tests and reports the credential the user picked, set up or already had, but saves the node without it."""
PADS_REPLIES = "pads-replies"
"""Pads every reply with a long walk-through and ends it with a needless question."""

PADDING = (
    "Here is a fuller walk-through of this step:",
    "- I read your message from start to finish.",
    "- I looked at what this thread already holds.",
    "- I went through each part one at a time.",
    "- I wrote this summary for you.",
    "Would you like me to walk through any of it again?",
)
"""What ``pads-replies`` adds to every reply: lines of filler in words no golden check looks for."""

INVENTED_VALUES: dict[str, str] = {
    "slack_channel": "#general",
    "alert_channel": "#alerts",
    "gmail_recipient": "team@example.com",
    "http_url": "https://api.example.com/data",
    "github_repo": "acme/app",
    "sheets_document": "Leads",
    "data_table": "records",
    "trigger": "every day at 9am",
    "action": "post to #general on Slack",
}
"""What ``ignores-declined`` makes up for each detail key (plausible on purpose: that is the defect)."""
