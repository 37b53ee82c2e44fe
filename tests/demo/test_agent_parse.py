"""The builder agent's vocabulary, phrase by phrase (pure functions, no context)."""

from __future__ import annotations

import pytest

from threadcase.demo_instance.agent.parse import parse_build, parse_filter, parse_trigger, split_changes
from threadcase.demo_instance.agent.rules import is_secret_request


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("every 15 minutes", "every 15 minutes"),
        ("every hour", "every hour"),
        ("every 2 hours", "every 2 hours"),
        ("hourly", "every hour"),
        ("every morning", "every day at 09:00"),
        ("daily at 5:30pm", "every day at 17:30"),
        ("every weekday at 8am", "on weekdays at 08:00"),
        ("on Mondays and Fridays at noon", "on Monday, Friday at 12:00"),
        ("when a webhook is called on path /orders", "when the webhook /orders is called"),
        ("when someone submits the form", "when the form is submitted"),
        ("run it manually", "manually"),
    ],
)
def test_triggers(text: str, expected: str) -> None:
    trigger = parse_trigger(text)
    assert trigger is not None
    assert trigger.describe() == expected


def test_no_trigger_is_none_not_a_guess() -> None:
    assert parse_trigger("post the report to #sales") is None


@pytest.mark.parametrize(
    ("text", "described"),
    [
        ("only if amount > 100", "amount > 100"),
        ("only when the total is greater than 1,500", "total > 1500"),
        ("only if status is 'paid'", "status = paid"),
        ("where score >= 7", "score >= 7"),
    ],
)
def test_filters(text: str, described: str) -> None:
    spec = parse_filter(text)
    assert spec is not None
    assert spec.describe() == described


def test_when_the_form_is_submitted_is_not_a_filter() -> None:
    assert parse_filter("when the form is submitted post to #x") is None


def test_full_build_request() -> None:
    spec = parse_build(
        "Every weekday at 9am post the sales summary to #sales on Slack and email boss@acme.com, only if amount > 100. "
        'Continue on fail and alert #ops. Call it "Sales digest".'
    )
    assert spec.trigger is not None
    assert spec.trigger.days == [1, 2, 3, 4, 5]
    assert spec.trigger.hour == 9
    assert [a.kind for a in spec.actions] == ["slack", "gmail"]
    assert spec.actions[0].params["channel"] == "#sales"
    assert spec.actions[1].params["to"] == "boss@acme.com"
    assert spec.filter is not None
    assert spec.filter.describe() == "amount > 100"
    assert spec.error_handling is not None
    assert spec.error_handling.alert_channel == "#ops"
    assert spec.name == "Sales digest"


def test_missing_details_stay_missing() -> None:
    spec = parse_build("Send an email and post to Slack every morning, and call the API")
    params = {a.kind: a.params for a in spec.actions}
    assert params["slack"]["channel"] is None
    assert params["gmail"]["to"] is None
    assert params["http"]["url"] is None


def test_other_actions() -> None:
    spec = parse_build(
        "When a form is submitted, create a Notion page, open a GitHub issue in acme/site, POST to "
        "https://api.acme.dev/hook, append a row to the Leads sheet and insert into the orders data table"
    )
    assert [a.kind for a in spec.actions] == ["notion", "github", "http", "sheets", "datatable"]
    by_kind = {a.kind: a.params for a in spec.actions}
    assert by_kind["github"]["repo"] == "acme/site"
    assert by_kind["http"] == {"url": "https://api.acme.dev/hook", "method": "POST"}
    assert by_kind["sheets"]["document"] == "Leads"
    assert by_kind["datatable"] == {"table": "orders", "operation": "insert"}


def test_required_error_handling() -> None:
    spec = parse_build("Every hour call https://x.dev/a. Error handling is a must: alert #ops if it fails.")
    assert spec.error_handling is not None
    assert spec.error_handling.required
    assert spec.filter is None


def test_split_numbered_changes() -> None:
    assert split_changes('Two things: 1. change the channel to #x 2. rename it to "Y"') == [
        "change the channel to #x",
        'rename it to "Y"',
    ]
    assert split_changes("change the channel to #x") == ["change the channel to #x"]


def test_unknown_verbs_are_reported_not_dropped() -> None:
    spec = parse_build("Build me a workflow that checks the weather in Lisbon every morning and emails me a summary.")
    assert [a.kind for a in spec.actions] == ["gmail"]
    assert spec.unparsed == ["checks the weather in Lisbon every morning"]
    assert parse_build("Every morning post the sales summary to #sales. Email bob@x.dev too.").unparsed == []


def test_github_issues_are_read_and_a_repo_is_not_an_api() -> None:
    spec = parse_build("Post a daily digest of new GitHub issues in acme/api to Slack #eng.")
    assert [(a.kind, a.params.get("operation")) for a in spec.actions] == [("github", "getAll"), ("slack", None)]


def test_only_earlier_in_the_clause_allows_a_word_filter() -> None:
    spec = parse_filter("only email when rain is forecast")
    assert spec is not None
    assert spec.describe() == "rain = forecast"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Put my API key sk-live-abc123xyz into the HTTP Request node header", True),
        ("Just paste the token into the header parameter", True),
        ("Here is the token ghp_abcdef123456, use it", True),
        ("Use the API token credential in the HTTP request", False),
        ("Store sk-live-abc123xyz as a credential", False),
        ("Post the report to #sales every morning", False),
    ],
)
def test_secret_requests(text: str, expected: bool) -> None:
    assert is_secret_request(text) is expected
