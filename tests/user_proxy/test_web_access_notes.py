"""Web access in authors' own words: the scripted user answers a web-access prompt as its note says.

The demo instance never asks for web access, so this runs the scripted user on the prompt itself (the
wire shape n8n sends). Before the grammar was widened, none of these notes was understood.
"""

from __future__ import annotations

from typing import Any

import pytest

from threadcase import wire
from threadcase.case.notes import Script
from threadcase.user_proxy import ConversationView, ScriptedProxy

pytestmark = pytest.mark.anyio


class _NoCredentials:
    async def create(self, credential_type: str, *, working: bool) -> str:
        raise AssertionError("no credential is created for a web-access prompt")


@pytest.mark.parametrize(
    ("note", "body"),
    [
        ("[Don't let it go online.]", {"kind": "domainAccessDeny"}),
        ("[Keep it offline.]", {"kind": "domainAccessDeny"}),
        (
            "[If it wants to look something up online, let it.]",
            {"kind": "domainAccessApprove", "domainAccessAction": "allow_all"},
        ),
        (
            "[When it asks to search online, say yes.]",
            {"kind": "domainAccessApprove", "domainAccessAction": "allow_all"},
        ),
    ],
)
@pytest.mark.parametrize("kind", ["domain-access", "web-search"])
async def test_a_web_access_prompt_is_answered_as_the_note_says(note: str, body: dict[str, Any], kind: str) -> None:
    proxy = ScriptedProxy(Script.from_texts([("user", "Summarise the n8n docs page on webhooks"), ("user", note)]))
    prompts: dict[str, dict[str, Any]] = {
        "domain-access": {"domainAccess": {"host": "docs.n8n.io"}},
        "web-search": {"webSearch": {}},
    }
    prompt = prompts[kind]
    request = wire.ConfirmationRequest.model_validate({"requestId": "r1", "inputType": kind, **prompt})
    answer = await proxy.answer(request, ConversationView(), _NoCredentials())
    assert answer.answered_by == "scripted"
    assert answer.body.model_dump(mode="json", exclude_none=True) == body
    delivery = proxy.delivery(ended_by="script-exhausted", follow_ups=0, budget=None)
    assert delivery.not_understood == []
    assert [d.fired for d in delivery.directives] == [True]
