"""The scripted model over HTTP, read by the real ``openai`` SDK: streamed and plain answers, tool calls,
token usage, errors, the API key and the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.standins import n8n_requests as n8n
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.standins.model_server import ScriptedModel, create_app
from threadcase.standins.script import ModelScript

SCRIPT = {
    "models": ["scripted", "scripted-eval"],
    "rules": [
        {
            "id": "slow-down",
            "when": {"userText": {"contains": ["overloaded"]}},
            "reply": {"error": {"status": 503, "message": "try later"}},
        },
        {
            "id": "build",
            "when": {"userText": {"contains": ["invoice"]}, "after": "user"},
            "reply": {
                "text": "Building it now.",
                "toolCalls": [
                    {
                        "name": "build-workflow",
                        "arguments": {
                            "filePath": "src/workflows/invoices.json",
                            "sourceCode": {"$json": {"nodes": ["x" * 900]}},
                        },
                    },
                    {
                        "name": "ask-user",
                        "arguments": {"questions": [{"id": "q", "question": "Which?", "type": "text"}]},
                    },
                ],
                "usage": {"promptTokens": 1234, "completionTokens": 56},
            },
        },
        {"id": "chat", "reply": {"text": "A reply long enough to be streamed in several pieces of text."}},
    ],
}


def serve(api_key: str = "") -> Iterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel(ModelScript.model_validate(SCRIPT), api_key=api_key)
    with serve_in_thread(create_app(model)) as url:
        yield model, url


@pytest.fixture
def scripted() -> Iterator[tuple[ScriptedModel, str]]:
    yield from serve()


def sdk(url: str, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=10)


def orchestrator_kwargs(text: str) -> dict[str, Any]:
    body = n8n.orchestrator(n8n.user(text))
    return {"model": "scripted", "messages": body["messages"], "tools": body["tools"], "tool_choice": "auto"}


def test_a_streamed_answer_carries_text_tool_calls_and_usage(scripted: tuple[ScriptedModel, str]) -> None:
    _, url = scripted
    stream = sdk(url).chat.completions.create(stream=True, **orchestrator_kwargs("Record each invoice"))
    calls: dict[int, dict[str, Any]] = {}
    text, finish, usage = "", None, None
    chunks = 0
    for chunk in stream:
        chunks += 1
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"id": delta.id, "name": "", "arguments": ""})
                if delta.function and delta.function.name:
                    entry["name"] = delta.function.name
                if delta.function and delta.function.arguments:
                    entry["arguments"] += delta.function.arguments
            finish = choice.finish_reason or finish
    assert text == "Building it now."
    assert [c["name"] for c in calls.values()] == ["build-workflow", "ask-user"]
    assert all(c["id"] for c in calls.values())
    # The long arguments arrive in fragments and join back into the exact JSON.
    arguments = json.loads(calls[0]["arguments"])
    assert json.loads(arguments["sourceCode"]) == {"nodes": ["x" * 900]}
    assert finish == "tool_calls"
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1234, 56, 1290)
    assert chunks > 6


def test_a_plain_answer_is_one_completion_with_an_estimated_usage(scripted: tuple[ScriptedModel, str]) -> None:
    _, url = scripted
    body = n8n.helper(n8n.TITLE_SYSTEM, "Generate a title ...\n\n<message>\nInvoice sync\n</message>")
    completion = sdk(url).chat.completions.create(model="scripted", messages=body["messages"])
    assert completion.choices[0].message.content == "Invoice sync"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    # Four characters a token, never zero: run debug's numbers are then never empty.
    assert completion.usage.prompt_tokens == -(-(len(json.dumps(body["messages"])) + len("[]")) // 4)
    assert completion.usage.completion_tokens == 3


def test_a_scripted_error_is_the_status_and_message_of_a_failing_provider(scripted: tuple[ScriptedModel, str]) -> None:
    _, url = scripted
    with pytest.raises(openai.APIStatusError) as caught:
        sdk(url).chat.completions.create(stream=True, **orchestrator_kwargs("we are overloaded"))
    assert caught.value.status_code == 503
    assert "try later" in str(caught.value)


def test_models_are_listed_and_the_log_says_who_asked_and_which_rule_answered(
    scripted: tuple[ScriptedModel, str],
) -> None:
    model, url = scripted
    assert [m.id for m in sdk(url).models.list()] == ["scripted", "scripted-eval"]
    sdk(url).chat.completions.create(stream=False, **orchestrator_kwargs("hello there"))
    log = httpx.get(f"{url}/threadcase/log").json()["requests"]
    assert [(e["agent"], e["after"], e["source"], e["status"]) for e in log] == [
        ("orchestrator", "user", "rule:chat", 200)
    ]
    assert log[0]["userText"] == "hello there"
    assert list(model.log) == log


def test_with_an_api_key_only_that_bearer_is_answered() -> None:
    for _, url in serve(api_key="sk-scripted-test"):
        with pytest.raises(openai.AuthenticationError):
            sdk(url, "wrong").models.list()
        assert [m.id for m in sdk(url, "sk-scripted-test").models.list()] == ["scripted", "scripted-eval"]


def test_a_body_without_messages_is_refused(scripted: tuple[ScriptedModel, str]) -> None:
    _, url = scripted
    answer = httpx.post(f"{url}/v1/chat/completions", json={"model": "scripted"})
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == "messages is required"
