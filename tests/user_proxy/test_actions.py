"""Each menu action's encoding to the wire confirm body, including mid-run credential creation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from threadcase import wire
from threadcase.user_proxy.actions import (
    AnswerQuestions,
    ApplySetupWizard,
    ApproveOrReject,
    ChooseCredentialSetupOption,
    ConfirmationDecision,
    PickResourceDecision,
    QuestionAnswerItem,
    RespondToDomainAccess,
    UnencodableAction,
    UserTurnDecision,
    encode_confirmation,
)


class FakeCredentials:
    def __init__(self) -> None:
        self.created: list[tuple[str, bool]] = []

    async def create(self, credential_type: str, *, working: bool) -> str:
        self.created.append((credential_type, working))
        return f"new-{credential_type}-{len(self.created)}"


def _request(**fields: Any) -> wire.ConfirmationRequest:
    return wire.ConfirmationRequest.model_validate({"requestId": "r1", **fields})


def _body(encoded_body: Any) -> dict[str, Any]:
    return dict(encoded_body.model_dump(mode="json", exclude_none=True))


pytestmark = pytest.mark.anyio


async def test_answer_questions_maps_options_and_skips() -> None:
    request = _request(
        inputType="questions",
        questions=[
            {"id": "q1", "question": "Channel?", "type": "text"},
            {"id": "q2", "question": "Which?", "type": "single", "options": ["Daily", "Weekly"]},
            {"id": "q3", "question": "Recipient?", "type": "text"},
        ],
    )
    action = AnswerQuestions(
        action="answer_questions",
        answers=[
            QuestionAnswerItem(question_id="q1", selected_options=[], custom_text="#ops", skipped=False),
            QuestionAnswerItem(question_id="q2", selected_options=["weekly"], custom_text=None, skipped=False),
            QuestionAnswerItem(question_id="nope", selected_options=[], custom_text="x", skipped=False),
        ],
    )
    encoded = await encode_confirmation(action, request, FakeCredentials())
    assert _body(encoded.body) == {
        "kind": "questions",
        "answers": [
            {"questionId": "q1", "selectedOptions": [], "customText": "#ops", "skipped": False},
            {"questionId": "q2", "selectedOptions": ["Weekly"], "skipped": False},
            {"questionId": "q3", "selectedOptions": [], "skipped": True},
        ],
    }
    assert encoded.outcome == "answered"


async def test_answer_questions_on_a_plan_is_unencodable() -> None:
    action = AnswerQuestions(action="answer_questions", answers=[])
    with pytest.raises(UnencodableAction):
        await encode_confirmation(action, _request(inputType="plan-review"), FakeCredentials())


async def test_wizard_parameters_credentials_and_creation() -> None:
    request = _request(
        inputType="setup",
        setupRequests=[
            {"node": {"name": "Slack"}, "credentialType": "slackApi", "parameterIssues": {"channel": ["missing"]}},
            {
                "node": {"name": "GitHub"},
                "credentialType": "githubApi",
                "existingCredentials": [{"id": "g1", "name": "GH"}],
            },
            {
                "node": {"name": "Notion"},
                "credentialType": "notionApi",
                "existingCredentials": [{"id": "n1", "name": "A"}, {"id": "n2", "name": "B"}],
            },
        ],
    )
    creds = FakeCredentials()
    action = ApplySetupWizard(
        action="apply_setup_wizard",
        node_parameters_json=json.dumps({"Slack": {"channel": "#ops"}, "Ghost": {"x": 1}}),
        node_credentials_json=json.dumps(
            {"Slack": {"slackApi": "create"}, "GitHub": {"githubApi": "create"}, "Notion": {"notionApi": "create"}}
        ),
        working_credential_types=["githubApi"],
    )
    encoded = await encode_confirmation(action, request, creds)
    assert _body(encoded.body) == {
        "kind": "setupWorkflowApply",
        "nodeParameters": {"Slack": {"channel": "#ops"}},
        # 0 existing -> created (not working: not in workingCredentialTypes); 1 -> that one; 2 unnamed -> declined
        "nodeCredentials": {"Slack": {"slackApi": "new-slackApi-1"}, "GitHub": {"githubApi": "g1"}},
    }
    assert creds.created == [("slackApi", False)]
    assert encoded.outcome == "filled"
    assert encoded.created_credentials == ["new-slackApi-1"]


@pytest.mark.parametrize(("working_types", "created_working"), [(None, True), ([], False), (["slackApi"], True)])
async def test_wizard_working_types_none_means_all_and_empty_means_none(
    working_types: list[str] | None, created_working: bool
) -> None:
    """Regression: an empty list (a note scripting the credential as invalid) used to mean "all work"."""
    request = _request(inputType="setup", setupRequests=[{"node": {"name": "Slack"}, "credentialType": "slackApi"}])
    creds = FakeCredentials()
    action = ApplySetupWizard(
        action="apply_setup_wizard",
        node_parameters_json="{}",
        node_credentials_json=json.dumps({"Slack": {"slackApi": "create"}}),
        working_credential_types=working_types,
    )
    await encode_confirmation(action, request, creds)
    assert creds.created == [("slackApi", created_working)]


async def test_wizard_bad_json_is_unencodable() -> None:
    request = _request(inputType="setup", setupRequests=[{"node": {"name": "Slack"}, "credentialType": "slackApi"}])
    action = ApplySetupWizard(
        action="apply_setup_wizard",
        node_parameters_json="{oops",
        node_credentials_json=None,
        working_credential_types=None,
    )
    with pytest.raises(UnencodableAction, match="nodeParametersJson"):
        await encode_confirmation(action, request, FakeCredentials())


@pytest.mark.parametrize(
    ("approved", "input_type", "outcome"),
    [(True, "plan-review", "approved"), (False, "plan-review", "rejected"), (False, "approval", "rejected")],
)
async def test_approve_or_reject(approved: bool, input_type: str, outcome: str) -> None:
    action = ApproveOrReject(action="approve_or_reject", approved=approved, user_input="add retries")
    encoded = await encode_confirmation(action, _request(inputType=input_type), FakeCredentials())
    assert _body(encoded.body) == {"kind": "approval", "approved": approved, "userInput": "add retries"}
    assert encoded.outcome == outcome


async def test_domain_access_and_resource_decision() -> None:
    allow = await encode_confirmation(
        RespondToDomainAccess(action="respond_to_domain_access", decision="allow_once"),
        _request(inputType="domain-access"),
        FakeCredentials(),
    )
    assert _body(allow.body) == {"kind": "domainAccessApprove", "domainAccessAction": "allow_once"}
    deny = await encode_confirmation(
        RespondToDomainAccess(action="respond_to_domain_access", decision="deny"),
        _request(inputType="domain-access"),
        FakeCredentials(),
    )
    assert _body(deny.body) == {"kind": "domainAccessDeny"}
    pick = await encode_confirmation(
        PickResourceDecision(action="pick_resource_decision", decision="made-up"),
        _request(inputType="resource-decision", resourceDecision={"options": ["deny", "allowOnce"]}),
        FakeCredentials(),
    )
    assert _body(pick.body) == {"kind": "resourceDecision", "resourceDecision": "allowOnce"}


def _cred_card(existing: list[dict[str, str]]) -> wire.ConfirmationRequest:
    return _request(
        inputType="credentials", credentialRequests=[{"credentialType": "slackApi", "existingCredentials": existing}]
    )


def _choose(option: str, existing_id: str | None = None, works: bool | None = None) -> ChooseCredentialSetupOption:
    return ChooseCredentialSetupOption(
        action="choose_credential_setup_option",
        option=option,
        credential_type="slackApi",
        existing_credential_id=existing_id,
        credential_should_work=works,
    )


async def test_credential_manual_with_zero_one_two_existing() -> None:
    creds = FakeCredentials()
    zero = await encode_confirmation(_choose("manual", works=False), _cred_card([]), creds)
    assert _body(zero.body) == {"kind": "credentialSelection", "credentials": {"slackApi": "new-slackApi-1"}}
    assert creds.created == [("slackApi", False)]
    one = await encode_confirmation(_choose("manual"), _cred_card([{"id": "s1", "name": "S"}]), creds)
    assert _body(one.body) == {"kind": "credentialSelection", "credentials": {"slackApi": "s1"}}
    two = [{"id": "s1", "name": "A"}, {"id": "s2", "name": "B"}]
    named = await encode_confirmation(_choose("manual", "s2"), _cred_card(two), creds)
    assert _body(named.body) == {"kind": "credentialSelection", "credentials": {"slackApi": "s2"}}
    unnamed = await encode_confirmation(_choose("manual"), _cred_card(two), creds)
    assert _body(unnamed.body) == {"kind": "approval", "approved": False}
    assert unnamed.outcome == "deferred"
    assert len(creds.created) == 1


async def test_credential_skip_auto_and_wizard_reroute() -> None:
    creds = FakeCredentials()
    skip = await encode_confirmation(_choose("skip"), _cred_card([]), creds)
    assert _body(skip.body) == {"kind": "approval", "approved": False}
    auto = await encode_confirmation(_choose("auto"), _cred_card([]), creds)
    assert _body(auto.body) == {"kind": "credentialAutoSetup", "credentialType": "slackApi"}
    wizard = _request(inputType="setup", setupRequests=[{"node": {"name": "Post"}, "credentialType": "slackApi"}])
    rerouted = await encode_confirmation(_choose("manual"), wizard, creds)
    assert _body(rerouted.body) == {
        "kind": "setupWorkflowApply",
        "nodeCredentials": {"Post": {"slackApi": "new-slackApi-1"}},
    }
    auto_on_wizard = await encode_confirmation(_choose("auto"), wizard, creds)
    assert _body(auto_on_wizard.body) == {"kind": "approval", "approved": False}


def test_decision_schemas_advertise_any_of_and_parse_by_discriminator() -> None:
    schema = json.dumps(ConfirmationDecision.model_json_schema())
    assert "oneOf" not in schema
    assert "anyOf" in schema
    assert "discriminator" not in schema
    parsed = UserTurnDecision.model_validate_json('{"decision": {"action": "declare_done"}}')
    assert parsed.decision.action == "declare_done"
    parsed2 = ConfirmationDecision.model_validate(
        {"decision": {"action": "approve_or_reject", "approved": False, "userInput": "x"}}
    )
    assert isinstance(parsed2.decision, ApproveOrReject)
    assert parsed2.decision.user_input == "x"


@pytest.mark.parametrize(
    "action",
    [
        PickResourceDecision(action="pick_resource_decision", decision="allowOnce"),
        RespondToDomainAccess(action="respond_to_domain_access", decision="allow_all"),
        _choose("manual"),
    ],
)
async def test_menu_items_that_do_not_fit_the_widget_are_unencodable(action: Any) -> None:
    questions = _request(inputType="questions", questions=[{"id": "q", "question": "?"}])
    with pytest.raises(UnencodableAction):
        await encode_confirmation(action, questions, FakeCredentials())
