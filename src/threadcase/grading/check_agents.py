"""The ``agent*`` checks: an agent's skills and instructions after the conversation, against the seed.

They read ``record.artifacts.agents`` (each agent the conversation built, edited or read, as it left
it) and the end state of every seeded agent (``record.seed.agents``, read back whether or not the
conversation touched it); a seeded agent is found by its per-run id ``record.seed.id_map[seed_id]``.
An agent that could not be read back cannot be inspected, so those checks are ``not_judged`` with the
reason, never a pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from threadcase.case import schema
from threadcase.grading.check_util import MISSING, around, canonical, not_judged, quote, verdict
from threadcase.records import AgentArtifact, RunRecord
from threadcase.verdicts import Attribution, UnitVerdict

__all__ = ["agent_checks", "declares_agent_checks"]


def _agent_name(agent: AgentArtifact) -> str:
    return repr(str(agent.config.get("name") or agent.id))


def _skill_ids(agent: AgentArtifact) -> list[str]:
    """The skills the agent uses: its ``config.skills`` references, else (no such list) its skill bodies."""
    refs = agent.config.get("skills")
    if isinstance(refs, list):
        return [str(r["id"]) for r in refs if isinstance(r, dict) and r.get("id") is not None]
    return list(agent.skills)


def _skill_label(agent: AgentArtifact, skill_id: str) -> str:
    body = agent.skills.get(skill_id)
    name = body.get("name") if isinstance(body, dict) else None
    return f"{skill_id} ({name})" if name and name != skill_id else skill_id


def _listed_skills(agent: AgentArtifact) -> str:
    return ", ".join(_skill_label(agent, sid) for sid in _skill_ids(agent)) or "none"


def _find_skill(agent: AgentArtifact, wanted: str) -> str | None:
    """The id of the agent's skill whose id is ``wanted`` or whose name is ``wanted`` ignoring case."""
    ids = _skill_ids(agent)
    if wanted in ids:
        return wanted
    for sid in ids:
        body = agent.skills.get(sid)
        if isinstance(body, dict) and str(body.get("name", "")).casefold() == wanted.casefold():
            return sid
    return None


def _snippet(text: str, lo: int, hi: int) -> str:
    # repr, not _quote: a difference in whitespace alone must stay visible in the excerpt.
    return ("…" if lo > 0 else "") + repr(text[lo:hi]) + ("…" if hi < len(text) else "")


def _difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The first field that differs, with a short excerpt of both sides around the first differing character."""
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, MISSING), after.get(key, MISSING)
        if old is not MISSING and new is not MISSING and canonical(old) == canonical(new):
            continue
        if old is MISSING:
            return f"{key} was added: {quote(canonical(new), 80)}"
        if new is MISSING:
            return f"{key} was removed (it was {quote(canonical(old), 80)})"
        if isinstance(old, str) and isinstance(new, str):
            at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
            lo = max(0, at - 30)
            return f"{key} was {_snippet(old, lo, at + 50)}, now {_snippet(new, lo, at + 50)}"
        return f"{key} was {quote(canonical(old), 80)}, now {quote(canonical(new), 80)}"
    return "no field differs"


def _collected_agents(record: RunRecord) -> dict[str, AgentArtifact]:
    """Every agent read back after the conversation: those it touched, and every seeded one."""
    seeded = {s.id: s.final for s in record.seed.agents if s.final is not None}
    return seeded | {agent.id: agent for agent in record.artifacts.agents}


def _unread(record: RunRecord, run_id: str) -> str:
    """Why an agent with this per-run id has no end state."""
    seeded = next((s for s in record.seed.agents if s.id == run_id), None)
    if seeded is not None and seeded.final_error:
        return seeded.final_error
    return "the agent never read or edited it"


def _seeded_skill(
    case: schema.Case, record: RunRecord, unit: str, label: str, skill_id: str, want_changed: bool
) -> UnitVerdict:
    """One ``agentSkillsUnchanged`` / ``agentSkillsChanged`` entry, over every seed agent declaring the skill."""
    seed = case.inline_seed
    owners = [agent for agent in (seed.agents if seed else []) if skill_id in agent.skills]
    if not owners:  # refused at load; a case built around the loader must still not pass for free
        return not_judged(unit, label, f"no seed agent declares the skill {skill_id!r}: nothing to compare with")
    collected = _collected_agents(record)
    passes: list[str] = []
    gaps: list[tuple[str, Attribution]] = []
    for owner in owners:
        name = repr(str(owner.config.get("name") or owner.id))
        run_id = record.seed.id_map.get(owner.id)
        if run_id is None:
            gaps.append((f"seed agent {owner.id!r} has no per-run id: the seed was not restored", "framework_issue"))
            continue
        agent = collected.get(run_id)
        if agent is None:
            gaps.append(
                (
                    f"seed agent {name} (per-run id {run_id}) was not read back after the conversation: "
                    + _unread(record, run_id),
                    "verification_gap",
                )
            )
            continue
        before, after = owner.skills[skill_id], agent.skills.get(skill_id)
        if not isinstance(after, dict) or skill_id not in _skill_ids(agent):
            where = "has no body for it" if not isinstance(after, dict) else "no longer lists it in config.skills"
            reason = (
                f"skill {skill_id!r} was removed from agent {name}: it {where} (skills now: {_listed_skills(agent)})"
            )
            return verdict(unit, label, False, reason)
        changed = canonical(before) != canonical(after)
        if changed != want_changed:
            if changed:
                reason = f"skill {skill_id!r} of agent {name} changed: {_difference(before, after)}"
            else:
                reason = f"skill {skill_id!r} of agent {name} is still exactly as seeded: {quote(canonical(after))}"
            return verdict(unit, label, False, reason)
        passes.append(
            f"skill {skill_id!r} of agent {name} changed: {_difference(before, after)}"
            if changed
            else f"skill {skill_id!r} of agent {name} is identical to the seed, field for field"
        )
    if gaps:
        reason, attribution = gaps[0]
        return not_judged(unit, label, reason, attribution)
    return verdict(unit, label, True, "; ".join(passes))


def _final_agent(case: schema.Case, record: RunRecord) -> tuple[AgentArtifact | None, str]:
    """The agent the presence/instruction checks read, or None and why there is none."""
    collected = _collected_agents(record)
    attach = case.conversation[0].attach if case.conversation else None
    if attach is not None and attach.agent is not None:
        run_id = record.seed.id_map.get(attach.agent)
        if run_id is None:
            return None, f"the attached seed agent {attach.agent!r} has no per-run id: the seed was not restored"
        agent = collected.get(run_id)
        if agent is None:
            return None, (
                f"the attached agent {attach.agent!r} (per-run id {run_id}) was not read back after the conversation: "
                + _unread(record, run_id)
            )
        return agent, f"the attached agent {_agent_name(agent)}"
    saved: str | None = None
    for turn in record.live_turns:
        for call in turn.tool_calls:
            result = call.result if isinstance(call.result, dict) else {}
            if call.tool_name == "build-agent" and call.error is None:
                saved = str(result.get("agentId") or call.args.get("agentId") or "") or saved
    if saved is not None and saved in collected:
        return collected[saved], f"agent {_agent_name(collected[saved])}, saved last"
    if record.artifacts.agents:
        agent = record.artifacts.agents[-1]
        return agent, f"agent {_agent_name(agent)}"
    return None, "no agent was read back after the conversation: the agent neither built, edited nor read one"


def agent_checks(case: schema.Case, record: RunRecord, checks: schema.Checks) -> Iterator[UnitVerdict]:
    """Every ``agent*`` check the case declares."""
    for key, skill_ids, want_changed in (
        ("agentSkillsUnchanged", checks.agent_skills_unchanged, False),
        ("agentSkillsChanged", checks.agent_skills_changed, True),
    ):
        for i, skill_id in enumerate(skill_ids):
            label = (
                f"the seeded skill {skill_id} is {'changed' if want_changed else 'unchanged'} after the conversation"
            )
            yield _seeded_skill(case, record, f"check:{key}#{i}", label, skill_id, want_changed)
    agent, which = _final_agent(case, record)
    for key, wanted_list, want_present in (
        ("agentSkillsPresent", checks.agent_skills_present, True),
        ("agentSkillsAbsent", checks.agent_skills_absent, False),
    ):
        for i, wanted in enumerate(wanted_list):
            unit = f"check:{key}#{i}"
            label = f"the final agent {'has' if want_present else 'does not have'} the skill {wanted}"
            if agent is None:
                yield not_judged(unit, label, which)
                continue
            found = _find_skill(agent, wanted)
            if found is not None:
                reason = f"{which} has skill {_skill_label(agent, found)}"
            else:
                reason = f"{which} has no skill with id or name {wanted!r} (its skills: {_listed_skills(agent)})"
            yield verdict(unit, label, (found is not None) == want_present, reason)
    for i, needle in enumerate(checks.agent_instructions_contain):
        unit = f"check:agentInstructionsContain#{i}"
        label = f"the final agent's instructions contain {needle!r}"
        if agent is None:
            yield not_judged(unit, label, which)
            continue
        text = agent.config.get("instructions")
        text = text if isinstance(text, str) else ""
        at = text.find(needle)
        if at >= 0:
            yield verdict(unit, label, True, f"the instructions of {which} say {around(text, at, at + len(needle))}")
        else:
            reads = quote(text) if text else "nothing (no config.instructions)"
            yield verdict(unit, label, False, f"{needle!r} is not in the instructions of {which}; they read {reads}")
    for i, entry in enumerate(checks.agent_skill_contains):
        unit = f"check:agentSkillContains#{i}"
        label = f"the final agent's skill {entry.skill} contains {entry.contains!r}"
        if agent is None:
            yield not_judged(unit, label, which)
            continue
        found = _find_skill(agent, entry.skill)
        body = agent.skills.get(found) if found is not None else None
        if found is None or not isinstance(body, dict):
            reason = f"{which} has no skill with id or name {entry.skill!r} (its skills: {_listed_skills(agent)})"
            yield verdict(unit, label, False, reason)
            continue
        text = " ".join(str(v) for v in body.values() if isinstance(v, str))
        at = text.find(entry.contains)
        if at >= 0:
            reason = f"skill {_skill_label(agent, found)} of {which} says {around(text, at, at + len(entry.contains))}"
        else:
            reason = f"{entry.contains!r} is not in skill {_skill_label(agent, found)} of {which}: {quote(text)}"
        yield verdict(unit, label, at >= 0, reason)


def declares_agent_checks(checks: schema.Checks) -> bool:
    """The case has at least one ``agent*`` check."""
    return bool(
        checks.agent_skills_unchanged
        or checks.agent_skills_changed
        or checks.agent_skills_present
        or checks.agent_skills_absent
        or checks.agent_instructions_contain
        or checks.agent_skill_contains
    )
