"""Credentials: attach, ask which, or show a setup card; and the standalone "connect my account" card.

The agent sees only what ``list-credentials`` returns (the platform scopes it to the thread's
allowlist). Exactly one credential of a needed type is attached silently; two or more are a question
(names as options); either way the attached credential is connection-tested and a failure reported.
None is a setup card naming the node, the credential type and any parameter that is still a
placeholder. Whatever the user does with a card, the outcome is reported honestly: a deferred
credential means the workflow needs setup before it can run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from threadcase.demo_instance.agent import misbehave as mb
from threadcase.demo_instance.agent.nodes import CREDENTIAL_TYPES, SERVICE_NAMES, placeholder_parameters
from threadcase.demo_instance.agent.protocol import AgentContext, ToolFailed
from threadcase.demo_instance.agent.talk import answer_values
from threadcase.demo_instance.slack import SLACK_TYPE, write_parameters

__all__ = ["CredentialOutcome", "connect_account", "resolve_credentials", "service_name"]


def service_name(credential_type: str) -> str:
    """The service a credential type belongs to (``slackApi`` -> ``Slack``)."""
    return SERVICE_NAMES.get(credential_type, credential_type)


@dataclass
class CredentialOutcome:
    """What happened to each credential the workflow needed."""

    attached: list[tuple[str, str]] = field(default_factory=list)
    """(credential type, credential name) attached without asking or after the user chose."""
    connected: list[tuple[str, str]] = field(default_factory=list)
    """(credential type, credential name) connected through a setup card and tested OK."""
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    """(credential type, credential name, test message) whose connection test failed."""
    deferred: list[str] = field(default_factory=list)
    """Credential types left unconnected (declined, skipped or dismissed)."""
    parameters_filled: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """Sentences for the reply (the clean agent's honest account)."""
        notes: list[str] = []
        for cred_type, name in self.connected:
            notes.append(f"Connected {service_name(cred_type)} with “{name}” (connection test passed).")
        for cred_type, name, message in self.failed:
            notes.append(
                f"The {service_name(cred_type)} credential “{name}” failed its connection test ({message}) — "
                "fix it before running."
            )
        if self.deferred:
            services = " and ".join(sorted({service_name(t) for t in self.deferred}))
            notes.append(f"I'll leave {services} unconnected — the workflow needs setup before it can run.")
        return notes


def _credentials_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in result.get("credentials", []) if isinstance(c, dict)]


def _attach(node: dict[str, Any], cred_type: str, credential: dict[str, Any]) -> None:
    node["credentials"] = {cred_type: {"id": str(credential["id"]), "name": str(credential.get("name", ""))}}


def _parameter_issues(node: dict[str, Any]) -> dict[str, list[str]]:
    # n8n's shape: parameter -> a list of its problems, keyed by the node's own parameter name: a Slack
    # node's channel is its locator, ``channelId`` (observed on n8n 2.41: {"channelId": ['Parameter
    # "Channel" is required.']}; a plain name sent back for it is saved as the locator's value).
    slack = node.get("type") == SLACK_TYPE
    return {
        ("channelId" if slack and key == "channel" else key): ["Not set — you skipped this detail"]
        for key in placeholder_parameters(node)
    }


def _setup_node(node: dict[str, Any]) -> dict[str, Any]:
    """The node as n8n's setup card carries it (the node itself, not its name)."""
    return {
        "name": node["name"],
        "type": node["type"],
        "typeVersion": node.get("typeVersion", 1),
        "parameters": dict(node.get("parameters") or {}),
        "position": list(node.get("position") or [0, 0]),
        "id": str(node.get("id") or node["name"]),
    }


async def resolve_credentials(
    ctx: AgentContext,
    workflow: dict[str, Any],
    *,
    only_nodes: set[str] | None = None,
    misbehaviours: frozenset[str] = frozenset(),
) -> CredentialOutcome:
    """Attach credentials to every node of ``workflow`` that needs one (mutates the nodes)."""
    outcome = CredentialOutcome()
    needing: dict[str, list[dict[str, Any]]] = {}
    for node in workflow["nodes"]:
        cred_type = CREDENTIAL_TYPES.get(node.get("type", ""))
        if cred_type is None or node.get("credentials") or (only_nodes is not None and node["name"] not in only_nodes):
            continue
        needing.setdefault(cred_type, []).append(node)
    if not needing:
        return outcome

    available: dict[str, list[dict[str, Any]]] = {}
    for cred_type in needing:
        available[cred_type] = _credentials_of(await ctx.call_tool("list-credentials", {"type": cred_type}))

    questions: list[dict[str, Any]] = []
    setup: list[dict[str, Any]] = []
    for cred_type, nodes in needing.items():
        creds = available[cred_type]
        if len(creds) == 1:
            for node in nodes:
                _attach(node, cred_type, creds[0])
            await _test_attached(ctx, cred_type, creds[0], outcome)
        elif len(creds) >= 2:
            questions.append(
                {
                    "id": f"credential:{cred_type}",
                    "question": f"Which {service_name(cred_type)} credential should I use?",
                    "type": "single",
                    "options": [str(c.get("name", "")) for c in creds],
                }
            )
        else:
            setup.extend(
                {
                    "node": _setup_node(node),
                    "credentialType": cred_type,
                    "existingCredentials": [],
                    "isTrigger": False,
                    "parameterIssues": _parameter_issues(node),
                }
                for node in nodes
            )

    if questions:
        values = answer_values(await ctx.ask({"inputType": "questions", "questions": questions}))
        for cred_type in [q["id"].split(":", 1)[1] for q in questions]:
            chosen = values.get(f"credential:{cred_type}")
            match = next((c for c in available[cred_type] if chosen and str(c.get("name")) == chosen), None)
            if match is None:
                outcome.deferred.append(cred_type)
                continue
            for node in needing[cred_type]:
                _attach(node, cred_type, match)
            await _test_attached(ctx, cred_type, match, outcome)

    if setup:
        body = await ctx.ask(
            {
                # As n8n: a setup card has no inputType; its setupRequests say what it is.
                "message": "Connect these accounts so the workflow can run.",
                "setupRequests": setup,
            }
        )
        await _apply_setup_answer(ctx, workflow, body, setup, outcome)
    if mb.CLAIMS_DONE_WITHOUT_CREDENTIALS in misbehaviours:
        # The defect: a failed connection test is reported as a connected credential.
        outcome.connected += [(cred_type, name) for cred_type, name, _ in outcome.failed]
        outcome.failed = []
    if mb.DROPS_CREDENTIAL in misbehaviours:
        # The defect: the credential is tested and reported, but the node is saved without it.
        for nodes in needing.values():
            for node in nodes:
                node.pop("credentials", None)
    return outcome


async def _lookup(ctx: AgentContext, cred_type: str, credential_id: str) -> dict[str, Any]:
    # The user may have just created it in the card, so list again rather than trusting the first list.
    creds = _credentials_of(await ctx.call_tool("list-credentials", {"type": cred_type}))
    return next((c for c in creds if str(c.get("id")) == credential_id), {"id": credential_id, "name": credential_id})


async def _test(ctx: AgentContext, credential_id: str) -> tuple[bool, str]:
    try:
        result = await ctx.call_tool("test-credential", {"credentialId": credential_id})
    except ToolFailed as exc:
        return False, str(exc) or "test failed"
    return bool(result.get("success")), str(result.get("message") or "")


async def _test_attached(
    ctx: AgentContext, cred_type: str, credential: dict[str, Any], outcome: CredentialOutcome
) -> None:
    """A credential attached without a card is tested too; a failure is reported as the card path does."""
    name = str(credential.get("name", ""))
    ok, message = await _test(ctx, str(credential["id"]))
    if ok:
        outcome.attached.append((cred_type, name))
    else:
        outcome.failed.append((cred_type, name, message or "test failed"))


async def _apply_setup_answer(
    ctx: AgentContext,
    workflow: dict[str, Any],
    body: dict[str, Any],
    setup: list[dict[str, Any]],
    outcome: CredentialOutcome,
) -> None:
    nodes = {n["name"]: n for n in workflow["nodes"]}
    chosen: dict[str, dict[str, str]] = {}  # node -> {type: id}
    kind = body.get("kind")
    if kind == "setupWorkflowApply":
        chosen = {k: dict(v) for k, v in (body.get("nodeCredentials") or {}).items()}
        for node_name, params in (body.get("nodeParameters") or {}).items():
            if node_name in nodes:
                write_parameters(nodes[node_name], params)
                outcome.parameters_filled.extend(f"{node_name}.{p}" for p in params)
    elif kind == "credentialSelection":
        by_type = body.get("credentials") or {}
        chosen = {
            r["node"]["name"]: {r["credentialType"]: by_type[r["credentialType"]]}
            for r in setup
            if r["credentialType"] in by_type
        }
    tested: dict[str, tuple[bool, str, str]] = {}
    for request in setup:
        cred_type = request["credentialType"]
        credential_id = chosen.get(request["node"]["name"], {}).get(cred_type)
        if not credential_id:
            if cred_type not in outcome.deferred:
                outcome.deferred.append(cred_type)
            continue
        if credential_id not in tested:
            credential = await _lookup(ctx, cred_type, credential_id)
            ok, message = await _test(ctx, credential_id)
            tested[credential_id] = (ok, message, str(credential.get("name", credential_id)))
            if ok:
                outcome.connected.append((cred_type, tested[credential_id][2]))
            else:
                outcome.failed.append((cred_type, tested[credential_id][2], message or "test failed"))
        _attach(nodes[request["node"]["name"]], cred_type, {"id": credential_id, "name": tested[credential_id][2]})


async def connect_account(ctx: AgentContext, cred_type: str, *, misbehaviours: frozenset[str] = frozenset()) -> str:
    """The standalone credential card for "connect my Slack account"; returns the reply text."""
    existing = _credentials_of(await ctx.call_tool("list-credentials", {"type": cred_type}))
    body = await ctx.ask(
        {
            "message": f"Connect your {service_name(cred_type)} account.",
            "credentialRequests": [
                {
                    "credentialType": cred_type,
                    "reason": f"To use {service_name(cred_type)} in your workflows.",
                    "existingCredentials": [{"id": str(c["id"]), "name": str(c.get("name", ""))} for c in existing],
                }
            ],
        }
    )
    service = service_name(cred_type)
    selected = (body.get("credentials") or {}).get(cred_type) if body.get("kind") == "credentialSelection" else None
    if body.get("kind") == "credentialAutoSetup":
        return f"I started the {service} setup — finish it in the window that opened, then tell me."
    if not selected:
        return f"Okay, {service} is not connected yet — connect it whenever you're ready."
    credential = await _lookup(ctx, cred_type, str(selected))
    ok, message = await _test(ctx, str(selected))
    name = credential.get("name", selected)
    # claims-done-without-credentials: the failed test is reported as a pass.
    if ok or mb.CLAIMS_DONE_WITHOUT_CREDENTIALS in misbehaviours:
        return f"{service} is connected with “{name}” — the connection test passed."
    return f"The {service} credential “{name}” failed its connection test ({message or 'test failed'})."
