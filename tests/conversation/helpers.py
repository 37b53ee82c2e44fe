"""Drive :func:`converse` against a real demo server over loopback, with a chosen builder agent."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from threadcase import records, wire
from threadcase.case import schema
from threadcase.credentials.seeder import CredentialSeeder
from threadcase.demo_instance import DemoSettings, demo_server
from threadcase.demo_instance.agent.protocol import AgentContext, BuilderAgent, TurnInput
from threadcase.harness.conversation import Budgets, converse
from threadcase.instance import InstanceClient
from threadcase.models import ModelSettings
from threadcase.seeds.inline import RestoredSeed, cleanup_created, restore_inline_seed, take_snapshot

FAST = Budgets(turn_seconds=20, inactivity_seconds=10, settle_seconds=0.01, status_poll_seconds=0.02)


def make_case(conversation: Sequence[dict[str, Any] | str], **extra: Any) -> schema.Case:
    turns = [t if isinstance(t, dict) else {"role": "user", "text": t} for t in conversation]
    doc: dict[str, Any] = {
        "conversation": turns,
        "complexity": "simple",
        "tags": ["test"],
        "processExpectations": ["the agent responds"],
        **extra,
    }
    return schema.Case.model_validate(doc)


@dataclass
class Outcome:
    record: records.RunRecord
    messages: list[wire.ThreadMessage]
    """Every message the server stored for the thread (what the agent received)."""
    credentials: list[wire.CredentialSummary] = field(default_factory=list)
    status: wire.ThreadStatus | None = None
    """The thread's status right after the conversation returned."""

    @property
    def user_texts(self) -> list[str]:
        out = []
        for m in self.messages:
            if m.role == "user":
                out.append(" ".join(str(b.get("text", "")) for b in m.blocks if b.get("type") == "text"))
        return out


async def drive(
    case: schema.Case,
    *,
    agent: BuilderAgent | None = None,
    budgets: Budgets = FAST,
    models: ModelSettings | None = None,
    existing_credentials: tuple[tuple[str, str], ...] = (),
    settings: DemoSettings | None = None,
    live_opening: str | None = None,
    headers: dict[str, str] | None = None,
) -> Outcome:
    """Run ``case``'s conversation on a fresh demo server; returns the record and what the server stored.

    Mirrors the runner's pipeline: thread, declared credentials, inline seed, converse, cleanup.
    """
    settings = settings or DemoSettings()
    async with (
        demo_server(settings, agent=agent) as url,
        InstanceClient(url, email=settings.email, password=settings.password.get_secret_value()) as client,
    ):
        project = await client.personal_project()
        thread_id = str(uuid.uuid4())
        await client.create_thread(thread_id, project.id)
        seeder = CredentialSeeder(client, environ={})
        declared = [schema.CredentialDecl(type=t, name=n) for t, n in existing_credentials]
        await seeder.seed(thread_id, declared)
        record = records.RunRecord(case_slug="t", thread_id=thread_id, mode=case.mode)
        restored: RestoredSeed | None = None
        try:
            if isinstance(case.seed, schema.InlineSeed):
                snapshot = await take_snapshot(client, project.id)
                restored = await restore_inline_seed(
                    client, case.seed, thread_id=thread_id, project_id=project.id, run_suffix="t1", snapshot=snapshot
                )
                record.seed = restored.outcome
            await converse(
                case,
                client=client,
                thread_id=thread_id,
                project_id=project.id,
                seed=restored,
                live_opening=live_opening,
                credentials=seeder,
                models=models or ModelSettings(),
                budgets=budgets,
                record=record,
                headers=headers,
            )
            status = await client.thread_status(thread_id)
            messages = await client.thread_messages(thread_id)
            creds = await client.list_credentials()
        finally:
            await seeder.cleanup()
            if restored is not None:
                await cleanup_created(client, restored.created)
    return Outcome(record=record, messages=messages, credentials=creds, status=status)


# --- small scripted builder agents for the tests ------------------------------------------------


async def echo_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Builds (or edits) one workflow per message and says what it applied."""
    wid = turn.state.get("workflowId")
    args: dict[str, Any] = {"workflow": {"name": "Demo flow", "nodes": [], "connections": {}}}
    if wid:
        args["workflowId"] = wid
    result = await ctx.call_tool("build-workflow", args)
    turn.state["workflowId"] = result["workflowId"]
    turn.state.setdefault("applied", []).append(turn.message)
    await ctx.say(f"Applied: {turn.message}")


async def asking_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Asks for the Slack channel (once), then builds with whatever it got, or a marked placeholder."""
    if "channel" not in turn.state:
        answer = await ctx.ask(
            {
                "inputType": "questions",
                "questions": [{"id": "channel", "question": "Which Slack channel should I post to?", "type": "text"}],
            }
        )
        item = (answer.get("answers") or [{}])[0]
        turn.state["channel"] = None if item.get("skipped") else (item.get("customText") or None)
    channel = turn.state["channel"] or "<CHANNEL: not given>"
    await ctx.call_tool(
        "build-workflow",
        {
            "workflow": {
                "name": "Slack post",
                "nodes": [{"name": "Slack", "type": "n8n-nodes-base.slack", "parameters": {"channel": channel}}],
                "connections": {},
            }
        },
    )
    await ctx.say(f"Built it, posting to {channel}.")


async def stalling_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Says one thing and then never finishes."""
    import anyio

    await ctx.say("Working on it")
    await anyio.sleep_forever()


async def credential_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Shows a standalone Slack credential card listing what it can see; tests what it was given."""
    listed = await ctx.call_tool("list-credentials", {"type": "slackApi"})
    existing = [{"id": c["id"], "name": c["name"]} for c in listed["credentials"]]
    answer = await ctx.ask(
        {
            "inputType": "credentials",
            "message": "Connect Slack so I can post.",
            "credentialRequests": [{"credentialType": "slackApi", "reason": "post", "existingCredentials": existing}],
        }
    )
    chosen = (answer.get("credentials") or {}).get("slackApi") if answer.get("kind") == "credentialSelection" else None
    if not chosen:
        await ctx.say("Okay, I'll leave Slack unconnected — set it up before running.")
        return
    tested = await ctx.call_tool("test-credential", {"credentialId": chosen})
    await ctx.say(f"Connected {chosen}; test {'passed' if tested.get('success') else 'failed'}.")


async def wizard_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Shows a setup-wizard card with one credential-only Slack entry."""
    listed = await ctx.call_tool("list-credentials", {"type": "slackApi"})
    existing = [{"id": c["id"], "name": c["name"]} for c in listed["credentials"]]
    answer = await ctx.ask(
        {
            "setupRequests": [
                {
                    "node": {"name": "Post", "type": "n8n-nodes-base.slack"},
                    "credentialType": "slackApi",
                    "existingCredentials": existing,
                }
            ],
        }
    )
    creds = (answer.get("nodeCredentials") or {}).get("Post", {}) if answer.get("kind") == "setupWorkflowApply" else {}
    await ctx.say(f"Setup: {creds.get('slackApi') or 'none'}")


async def planning_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Proposes a plan that never names a channel; applies rejection feedback into the next plan."""
    feedback = ""
    for _ in range(3):
        plan = [
            {"title": "Schedule trigger", "detail": "every morning"},
            {"title": "Post to Slack", "detail": feedback},
        ]
        answer = await ctx.ask({"inputType": "plan-review", "message": "Here is my plan.", "plan": plan})
        if answer.get("approved"):
            await ctx.call_tool("build-workflow", {"workflow": {"name": "Weather", "nodes": [], "connections": {}}})
            await ctx.say("Built as planned.")
            return
        feedback = str(answer.get("userInput") or "")
        turn.state.setdefault("rejections", []).append(feedback)
    await ctx.say("I could not agree on a plan.")


async def introspecting_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Reports what it was handed: attachments, context, misbehaviours and how much history it sees."""
    attached = ", ".join(f"{a['type']}:{a['name']}" for a in turn.attachments) or "none"
    source = (turn.context or {}).get("source", "none")
    misbehave = ",".join(sorted(turn.misbehaviours)) or "none"
    await ctx.say(f"attached={attached}; context={source}; misbehave={misbehave}; history={len(turn.history)}")


async def build_once_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Builds one workflow on the first message; afterwards only answers."""
    if "workflowId" not in turn.state:
        result = await ctx.call_tool(
            "build-workflow", {"workflow": {"name": "Demo flow", "nodes": [], "connections": {}}}
        )
        turn.state["workflowId"] = result["workflowId"]
        await ctx.say("Built Demo flow.")
        return
    await ctx.say("Noted.")


async def domain_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Asks for web access, then reports the answer's kind."""
    answer = await ctx.ask({"inputType": "domain-access", "domainAccess": {"host": "api.weather.dev"}})
    await ctx.say(f"domain answer: {answer.get('kind')}")


async def reasking_agent(turn: TurnInput, ctx: AgentContext) -> None:
    """Asks for the channel on every message, however often it was declined."""
    answer = await ctx.ask(
        {
            "inputType": "questions",
            "questions": [{"id": "channel", "question": "Which Slack channel should I post to?", "type": "text"}],
        }
    )
    item = (answer.get("answers") or [{}])[0]
    await ctx.say("Still no channel." if item.get("skipped") else f"Channel {item.get('customText')}.")
