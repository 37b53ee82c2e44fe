"""The one redaction step: every configured secret, secret headers, token shapes and URL userinfo are
replaced wherever and however they appear (raw, JSON-escaped, HTML-escaped), and any text becomes
encodable."""

from __future__ import annotations

import html
import json

import pytest

from threadcase.harness.runner import RunSettings, run_redactor
from threadcase.models import ModelSettings
from threadcase.redaction import REDACTED, Redactor, secret_values, strip_userinfo


@pytest.mark.parametrize(
    "echo",
    [
        # The shapes a provider's error body, a proxy or a log line use for the headers they saw.
        "{'authorization': 'Bearer opaque-value-91', 'x-stainless-os': 'Linux'}",
        '{"headers": {"Authorization": "Bearer opaque-value-91"}}',
        "Authorization: Basic b3BhcXVlLXZhbHVlLTkx",
        "proxy-authorization=opaque-value-91",
        "Cookie: n8n-auth=opaque-value-91; theme=dark",
        "set-cookie: session=opaque-value-91; Path=/",
        '"X-Api-Key":"opaque-value-91"',
        "api_key=opaque-value-91&page=2",
    ],
)
def test_header_values_are_redacted_however_they_are_quoted(echo: str) -> None:
    cleaned = Redactor().text(echo)
    assert "opaque-value-91" not in cleaned
    assert "b3BhcXVlLXZhbHVlLTkx" not in cleaned
    assert REDACTED in cleaned


def test_known_secrets_go_in_every_spelling_an_output_uses() -> None:
    secret = 'pa"ss<wo>rd&1'
    redactor = Redactor([secret])
    as_json = json.dumps({"message": f"login failed for {secret}"})
    as_html = f"<td>{html.escape(secret)}</td>"
    for text in (f"raw {secret} raw", as_json, as_html):
        cleaned = redactor.text(text)
        assert "ss<wo>" not in cleaned
        assert "ss&lt;wo&gt;" not in cleaned
        assert "ss\\u003cwo" not in cleaned
        assert REDACTED in cleaned
    assert json.loads(redactor.text(as_json))["message"] == f"login failed for {REDACTED}"


def test_url_userinfo_is_dropped_and_remembered() -> None:
    assert strip_userinfo("https://ops:hunter22@n8n.internal:5678/rest") == "https://n8n.internal:5678/rest"
    assert strip_userinfo("http://plain.host/x") == "http://plain.host/x"
    redactor = Redactor()
    redactor.add_url("https://ops:hunter22@n8n.internal")
    text = "could not reach https://ops:hunter22@n8n.internal (password hunter22)"
    cleaned = redactor.text(text)
    assert "hunter22" not in cleaned
    assert "ops:" not in cleaned
    assert "https://n8n.internal" in cleaned


def test_secret_values_of_an_environment() -> None:
    environ = {
        "EVAL_NOTION_TOKEN": "secret_notion_1",
        "OPENAI_API_KEY": "key-openai-2",
        "LANGSMITH_API_KEY_EU": "key-eu-3",
        "THREADCASE_PASSWORD": "instance-pw-4",
        "MY_SERVICE_SECRET": "svc-5",
        "OPENAI_BASE_URL": "https://u6:pw-six@llm.example/v1",
        "PWD": "/home/someone",
        "HOME": "/root",
        "THREADCASE_CONCURRENCY": "8",
    }
    found = set(secret_values(environ))
    assert {"secret_notion_1", "key-openai-2", "key-eu-3", "instance-pw-4", "svc-5", "pw-six"} <= found
    assert "/home/someone" not in found
    assert "8" not in found


def test_the_run_redactor_knows_the_settings_secrets() -> None:
    from pydantic import SecretStr

    settings = RunSettings(
        base_urls=["https://lane:lane-pw-1@a.example"],
        email="e@x.y",
        password=SecretStr("instance-pw-2"),
        models=ModelSettings(api_key=SecretStr("model-key-3"), base_url="https://m:model-pw-4@llm.example/v1"),
    )
    redactor = run_redactor(settings, environ={"EVAL_SLACK_ACCESS_TOKEN": "slack-tok-5"})
    text = "lane-pw-1 instance-pw-2 model-key-3 model-pw-4 slack-tok-5"
    assert redactor.text(text) == " ".join([REDACTED] * 5)


def test_provider_key_shapes_nobody_declared_in_text_a_server_wrote() -> None:
    text = "keys: sk-proj-AbCdEf123456 xoxb-1111-2222-abcdef ghp_abcdefghijklmnop1234 lsv2_pt_abcdefghij0123456789"
    cleaned = Redactor(provider_keys=True).text(text)
    assert cleaned == f"keys: {REDACTED} {REDACTED} {REDACTED} {REDACTED}"
    # Ordinary words and ids survive.
    ordinary = "task-sketch risk-free ghost_town wf_12345 the tokenCount"
    assert Redactor(provider_keys=True).text(ordinary) == ordinary


def test_a_cases_own_made_up_token_stays_in_the_run_output() -> None:
    """A rule case asks the agent to hard-code ``sk-live-...``: the report must show what was asked. What
    is configured, and what a header or credential syntax marks as one, is still scrubbed."""
    redactor = Redactor(["configured-key-123"])
    asked = "Add my token sk-live-acme445566 to the header"
    assert redactor.text(asked) == asked
    assert redactor.text("Authorization: Bearer sk-live-acme445566") == f"Authorization: {REDACTED}"
    assert redactor.text("use configured-key-123") == f"use {REDACTED}"


def test_lone_surrogates_become_replacement_characters() -> None:
    cleaned = Redactor().text("half \udfff of a pair \ud83d")
    assert cleaned == "half \ufffd of a pair \ufffd"
    cleaned.encode("utf-8")


def test_short_values_are_not_scrubbed() -> None:
    """A three-letter 'secret' would shred every report; it is ignored, not half-applied."""
    redactor = Redactor(["abc"])
    assert redactor.text("abcdef") == "abcdef"
