"""Declared credentials against the real demo instance: pinned exactly, bypass only for working ones,
names de-duplicated, deleted even on cancellation, and no token in any output."""

from __future__ import annotations

import logging
import uuid

import anyio
import httpx
import pytest

from tests.instance.demo import Demo, demo, demo_client
from threadcase.case.schema import CredentialDecl
from threadcase.credentials import PLACEHOLDER_TOKEN, CredentialSeeder
from threadcase.demo_instance import resources as demo_resources
from threadcase.errors import InstanceError, SeedingError
from threadcase.instance import InstanceClient

__all__ = ["demo", "demo_client"]  # fixtures, imported for pytest

pytestmark = pytest.mark.anyio

SLACK_TOKEN = "xoxb-TEST-0001"
OPENAI_KEY = "sk-test-REAL-looking-openai-key-0002"
ENV = {"EVAL_SLACK_ACCESS_TOKEN": SLACK_TOKEN, "EVAL_OPENAI_API_KEY": OPENAI_KEY}


def _decl(type_: str, **fields: object) -> CredentialDecl:
    return CredentialDecl.model_validate({"type": type_, **fields})


async def _thread(client: InstanceClient) -> str:
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, (await client.personal_project()).id)
    return thread_id


def _view(demo: Demo, thread_id: str) -> tuple[set[str], dict[str, bool]]:
    """What the thread sees, and whether each visible credential's connection test passes."""
    thread = demo.thread(thread_id)
    visible = demo_resources.visible_credentials(demo.store, thread, str(thread["ownerId"]))
    return {doc["id"] for doc in visible}, {
        doc["id"]: demo_resources.test_credential(doc, thread)[0] for doc in visible
    }


async def test_declared_set_is_pinned_exactly_with_bypass_only_for_working_ones(
    demo: Demo, demo_client: InstanceClient
) -> None:
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ=ENV)
    seeded = await seeder.seed(
        thread_id,
        [
            _decl("slackApi"),
            _decl("slackApi"),
            _decl("notionApi", valid=False),
            _decl("githubApi", blank=True),
            _decl("httpHeaderAuth", name="My header"),
            _decl("openAiApi"),
        ],
    )
    assert [c.name for c in seeded] == [
        "[eval] Slack",
        "[eval] Slack #2",
        "[eval] Notion",
        "[eval] GitHub",
        "My header",
        "[eval] OpenAI",
    ]
    assert [c.working for c in seeded] == [True, True, False, False, True, True]
    assert seeder.bypassed_count == 4
    visible, passes = _view(demo, thread_id)
    assert visible == {c.id for c in seeded}
    assert passes == {c.id: c.working for c in seeded}, "placeholder/blank data fails, bypass passes"
    stored = {c.id: demo.store.get("credentials", c.id) for c in seeded}
    assert stored[seeded[0].id]["data"] == {"accessToken": SLACK_TOKEN}, "the real token reached the instance"
    assert stored[seeded[2].id]["data"] == {"apiKey": PLACEHOLDER_TOKEN}
    assert stored[seeded[3].id]["data"] == {}
    other = await _thread(demo_client)
    assert _view(demo, other)[0] >= visible, "an unpinned thread is untouched (sees everything)"
    await seeder.cleanup()
    assert all(demo.store.get("credentials", c.id) is None for c in seeded)
    assert seeder.seeded == []
    assert seeder.leftovers == []


async def test_an_empty_declaration_pins_a_view_of_nothing(demo: Demo, demo_client: InstanceClient) -> None:
    existing = await CredentialSeeder(demo_client, environ={}).seed(await _thread(demo_client), [_decl("slackApi")])
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ={})
    assert await seeder.seed(thread_id, []) == []
    assert _view(demo, thread_id)[0] == set()
    assert existing  # a credential exists on the instance, yet the pinned thread does not see it


async def test_proxy_created_credentials_share_the_name_counter_and_are_pinned_before_return(
    demo: Demo, demo_client: InstanceClient
) -> None:
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ={})
    [declared] = await seeder.seed(thread_id, [_decl("slackApi")])
    working = await seeder.create_for_proxy(thread_id, "slackApi")
    broken = await seeder.create_for_proxy(thread_id, "slackApi", working=False)
    assert (working.name, broken.name) == ("[eval] Slack #2", "[eval] Slack #3")
    visible, passes = _view(demo, thread_id)
    assert visible == {declared.id, working.id, broken.id}
    assert passes == {declared.id: True, working.id: True, broken.id: False}
    await seeder.mark_working(thread_id, [broken.id, "not-ours"])
    assert _view(demo, thread_id)[1][broken.id] is True
    assert seeder.bypassed_count == 3
    with pytest.raises(SeedingError, match="no credential template for type 'madeUpApi'"):
        await seeder.create_for_proxy(thread_id, "madeUpApi")
    await seeder.cleanup()
    assert not _view(demo, thread_id)[0]


async def test_credentials_are_deleted_even_when_the_run_is_cancelled(demo: Demo, demo_client: InstanceClient) -> None:
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ={})
    with anyio.CancelScope() as scope:
        try:
            await seeder.seed(thread_id, [_decl("slackApi"), _decl("notionApi")])
            scope.cancel()
            await anyio.sleep(5)  # the run, interrupted here
        finally:
            # Runs inside a cancelled scope: only a shielded cleanup gets its requests through.
            await seeder.cleanup()
    assert scope.cancelled_caught
    assert len(seeder.leftovers) == 0
    ids = {c.id for c in await demo_client.list_credentials()}
    assert not ids & set(demo.thread(thread_id)["allowlist"])


async def test_no_token_appears_in_any_log_line_error_or_record(
    demo: Demo, demo_client: InstanceClient, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ=ENV)
    seeded = await seeder.seed(thread_id, [_decl("slackApi"), _decl("openAiApi")])
    await seeder.create_for_proxy(thread_id, "slackApi")
    # A server that echoes what it was sent in an error: the excerpt must not carry the token.
    with pytest.raises(InstanceError) as caught:
        await demo_client.create_credential(name="x" * 300, type="slackApi", data={"accessToken": SLACK_TOKEN})
    await seeder.cleanup()
    out = capsys.readouterr()
    surfaces = [
        caplog.text,
        out.out,
        out.err,
        str(caught.value),
        repr(seeder.seeded),
        repr(seeded),
        "".join(c.model_dump_json() for c in seeded),
        repr(seeder.__dict__.get("seeded")),
    ]
    for surface in surfaces:
        assert SLACK_TOKEN not in surface
        assert OPENAI_KEY not in surface
    assert "created credential" in caplog.text, "the seeder does log (ids and names), so the scan saw real lines"


async def test_an_error_excerpt_echoing_a_token_is_redacted() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/rest/login":
            return httpx.Response(200, json={"data": {}})
        return httpx.Response(400, text=f"bad credential data: {request.content.decode()}")

    client = InstanceClient("http://x.test", email="e", password="p-123456", transport=httpx.MockTransport(handler))
    async with client:
        seeder = CredentialSeeder(client, environ=ENV)
        with pytest.raises(InstanceError) as caught:
            await seeder.seed("t", [_decl("slackApi")])
    assert SLACK_TOKEN not in str(caught.value)
    assert "[redacted]" in str(caught.value)


async def test_tokens_come_from_the_process_environment_as_it_was_when_the_seeder_was_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seeder keeps only the templates' variables of the environment (not a copy of all of it):
    still read at construction, still redacted, and an empty variable is no token."""
    monkeypatch.setenv("EVAL_SLACK_ACCESS_TOKEN", SLACK_TOKEN)
    monkeypatch.setenv("EVAL_NOTION_API_KEY", "")
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/rest/login":
            return httpx.Response(200, json={"data": {}})
        sent.append(request.content)
        return httpx.Response(400, text=f"bad credential data: {request.content.decode()}")

    client = InstanceClient("http://x.test", email="e", password="p-123456", transport=httpx.MockTransport(handler))
    async with client:
        seeder = CredentialSeeder(client)
        monkeypatch.setenv("EVAL_SLACK_ACCESS_TOKEN", "set-after-the-seeder-was-made")
        with pytest.raises(InstanceError) as slack:
            await seeder.seed("t", [_decl("slackApi")])
        with pytest.raises(InstanceError):
            await seeder.seed("t", [_decl("notionApi")])
    assert SLACK_TOKEN.encode() in sent[0]
    assert SLACK_TOKEN not in str(slack.value)
    assert PLACEHOLDER_TOKEN.encode() in sent[-1]


async def test_credentials_meant_to_fail_never_get_the_real_token_and_descriptions_are_sent(
    demo: Demo, demo_client: InstanceClient
) -> None:
    """Regression: a ``valid: false`` credential (and a proxy-created non-working one) got the real
    ``EVAL_*`` token, so its connection test passed and the invalid-credential case tested nothing;
    the declared description was never sent."""
    thread_id = await _thread(demo_client)
    seeder = CredentialSeeder(demo_client, environ=ENV)
    declared = await seeder.seed(
        thread_id,
        [_decl("slackApi", valid=False, description="Expired on purpose"), _decl("slackApi", description="  ")],
    )
    broken = await seeder.create_for_proxy(thread_id, "openAiApi", working=False)
    invalid, valid = declared
    stored = {c.id: demo.store.get("credentials", c.id) for c in [invalid, valid, broken]}
    assert stored[invalid.id]["data"] == {"accessToken": PLACEHOLDER_TOKEN}
    assert stored[broken.id]["data"] == {"apiKey": PLACEHOLDER_TOKEN}
    assert stored[valid.id]["data"] == {"accessToken": SLACK_TOKEN}
    assert stored[invalid.id]["description"] == "Expired on purpose"
    assert stored[valid.id]["description"] is None  # blank -> absent
    passes = _view(demo, thread_id)[1]
    assert passes == {invalid.id: False, valid.id: True, broken.id: False}
    await seeder.cleanup()
