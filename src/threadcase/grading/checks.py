"""Deterministic checks (the case's ``checks`` key): no model, run in every mode.

Each check is one unit with a one-sentence reason that quotes its evidence; a failure is the agent's
(``builder_issue``). ``review`` criteria are printed beside the reply for a person and are
``reviewed``, never passed. A check that could not have failed on this run (a rule whose risk never
arose, a node check with nothing built) is ``not_judged`` rather than a free pass.

Text checks read the live agent messages only (seeded turns are the case's, not the agent's);
``transcriptRules`` walk the whole transcript, seeded turns included, because the risk may have been
raised before the live turn.

Agent checks read ``record.artifacts.agents`` (each agent as the conversation left it) against the case's
inline seed: a seeded agent is found by its per-run id ``record.seed.id_map[seed_id]``. An agent that was
never read back cannot be inspected, so those checks are ``not_judged`` with the reason, never a pass.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from typing import Any

from threadcase.case import schema
from threadcase.records import AgentArtifact, RunRecord, Turn
from threadcase.render import normalise_question, widget_questions
from threadcase.verdicts import Attribution, UnitVerdict
from threadcase.wire import WorkflowNode

__all__ = ["EVENT_CHECKS", "evaluate_rule", "run_checks"]

EVENT_CHECKS = (
    "check:mustNotContain",
    "check:toolsNotCalled",
    "check:maxLines",
    "check:transcriptRules",
    "check:maxClarifyingQuestions",
    "check:noRepeatedQuestions",
)
"""Unit-id prefixes of checks that fail on something the agent already did (said, called, asked).

More time cannot undo such a failure, so it stays the builder's when a budget ends the conversation;
every other failing check (something missing or not yet right) could have passed with more time and
is blamed on the clock (``threadcase.grading``)."""

_QUOTE = 120


def _quote(text: str, limit: int = _QUOTE) -> str:
    flat = " ".join(text.split())
    return f'"{flat[:limit]}…"' if len(flat) > limit else f'"{flat}"'


def _around(text: str, start: int, end: int) -> str:
    lo, hi = max(0, start - 40), min(len(text), end + 40)
    return _quote(("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else ""), 160)


def _verdict(unit: str, label: str, ok: bool, reason: str, *, turn_index: int | None = None) -> UnitVerdict:
    return UnitVerdict(
        unit=unit,
        kind="check",
        label=label,
        status="pass" if ok else "fail",
        reason=reason,
        attribution=None if ok else "builder_issue",
        turn_index=turn_index,
    )


def _not_judged(unit: str, label: str, reason: str, attribution: Attribution = "verification_gap") -> UnitVerdict:
    return UnitVerdict(
        unit=unit, kind="check", label=label, status="not_judged", reason=reason, attribution=attribution
    )


def _live_agent_turns(record: RunRecord) -> list[Turn]:
    return [t for t in record.live_turns if t.role == "assistant" and t.text]


# --- text checks ------------------------------------------------------------------------------


def _must_contain(record: RunRecord, needles: list[str]) -> Iterator[UnitVerdict]:
    joined = " ".join(record.agent_messages)
    for i, needle in enumerate(needles):
        label = f"the agent's messages contain {needle!r}"
        at = joined.find(needle)
        if at >= 0:
            yield _verdict(f"check:mustContain#{i}", label, True, f"found {_around(joined, at, at + len(needle))}")
        else:
            where = f"{len(record.agent_messages)} live agent messages" if record.agent_messages else "no agent message"
            yield _verdict(f"check:mustContain#{i}", label, False, f"{needle!r} appears in none of the {where}")


def _must_not_contain(record: RunRecord, needles: list[str]) -> Iterator[UnitVerdict]:
    turns = _live_agent_turns(record)
    for i, needle in enumerate(needles):
        label = f"the agent's messages never contain {needle!r}"
        if not turns:
            # Silence contains nothing, but it is no evidence the agent would have avoided the text.
            reason = "the agent sent no live message, so it could not have said it"
            yield _not_judged(f"check:mustNotContain#{i}", label, reason)
            continue
        hit = next((t for t in turns if needle in t.text), None)
        if hit is None:
            joined = " ".join(record.agent_messages)
            # A needle spanning two messages still counts: the check is over the messages joined with a space.
            at = joined.find(needle)
            if at < 0:
                reason = f"{needle!r} appears in none of the {len(turns)} live agent messages"
                yield _verdict(f"check:mustNotContain#{i}", label, True, reason)
                continue
            reason = f"found {_around(joined, at, at + len(needle))} across two agent messages"
            yield _verdict(f"check:mustNotContain#{i}", label, False, reason)
            continue
        at = hit.text.find(needle)
        reason = f"turn {hit.index} says {_around(hit.text, at, at + len(needle))}"
        yield _verdict(f"check:mustNotContain#{i}", label, False, reason, turn_index=hit.index)


def _strip_trailing(text: str) -> str:
    """Trailing whitespace, emoji and their joiners/variation selectors removed."""
    chars = list(text.rstrip())
    while chars:
        ch = chars[-1]
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("So", "Sk", "Mn", "Cf") or ch in ("\u200d", "\ufe0f"):
            chars.pop()
            continue
        break
    return "".join(chars)


def _must_end_with_question(record: RunRecord, expected: bool) -> UnitVerdict:
    label = "the agent's last message ends with a question" + ("" if expected else " (must not)")
    turns = _live_agent_turns(record)
    if not turns:
        return _verdict("check:mustEndWithQuestion", label, False, "the agent sent no live message at all")
    last = turns[-1]
    stripped = _strip_trailing(last.text)
    is_question = stripped.endswith(("?", "？"))
    tail = _quote(stripped[-_QUOTE:])
    if is_question == expected:
        reason = f"turn {last.index} ends {'with' if is_question else 'without'} a question: {tail}"
    else:
        reason = (
            f"turn {last.index} ends {'with' if is_question else 'without'} a question, expected the opposite: {tail}"
        )
    return _verdict("check:mustEndWithQuestion", label, is_question == expected, reason, turn_index=last.index)


def _max_lines(record: RunRecord, limit: int) -> UnitVerdict:
    label = f"no agent message is longer than {limit} lines"
    turns = _live_agent_turns(record)
    if not turns:
        return _not_judged("check:maxLines", label, "the agent sent no live message to measure")
    counts = [(len(t.text.strip("\n").splitlines()), t) for t in turns]
    worst, turn = max(counts, key=lambda pair: pair[0])
    over = next(((n, t) for n, t in counts if n > limit), None)
    if over is None:
        return _verdict(
            "check:maxLines", label, True, f"the longest agent message (turn {turn.index}) has {worst} lines"
        )
    n, t = over
    reason = f"turn {t.index} has {n} lines: {_quote(t.text)}"
    return _verdict("check:maxLines", label, False, reason, turn_index=t.index)


def _review(record: RunRecord, criteria: list[str]) -> Iterator[UnitVerdict]:
    turns = _live_agent_turns(record)
    reply = f"the reply to review is turn {turns[-1].index}: {_quote(turns[-1].text)}" if turns else "no agent reply"
    for i, criterion in enumerate(criteria):
        yield UnitVerdict(unit=f"review#{i}", kind="review", label=criterion, status="reviewed", reason=reply)


# --- transcript rules -------------------------------------------------------------------------


def _walk_rule(rule: schema.TranscriptRule, turns: list[Turn]) -> tuple[int | None, list[int], bool]:
    """The state machine: (violating turn index or None, risk turns, whether a live agent turn was at risk)."""
    risk, clear, violation = rule.risk_pattern, rule.clear_pattern, rule.violation_pattern  # compiled at load
    at_risk = False
    exercised = False
    risk_turns: list[int] = []
    for turn in turns:
        if turn.role == "user":
            if risk.search(turn.text):
                at_risk = True
                risk_turns.append(turn.index)
            continue
        if at_risk and not turn.seeded:
            exercised = True
        if clear.search(turn.text):
            at_risk = False
            continue
        # A seeded agent turn was written by the case author: it may carry the risk forward, never violate.
        if at_risk and not turn.seeded and violation.search(turn.text):
            return turn.index, risk_turns, True
    return None, risk_turns, exercised


def evaluate_rule(rule: schema.TranscriptRule, turns: list[Turn]) -> tuple[int | None, list[int]]:
    """Walk ``turns`` with the rule's one bit of state; returns (violating turn index or None, risk turns).

    A user turn matching ``risk`` sets the bit; an agent turn matching ``clear`` resets it; an agent
    turn matching ``violation`` while the bit is set is the violation. Graded on the sequence: the same
    agent sentence with no unresolved risk before it is nothing at all. Seeded turns set and clear the
    bit like any other, but a seeded agent turn is authored by the case, so only a live one can violate.
    """
    violated, risk_turns, _ = _walk_rule(rule, turns)
    return violated, risk_turns


def _transcript_rule(record: RunRecord, rule: schema.TranscriptRule) -> UnitVerdict:
    unit = f"check:transcriptRules:{rule.name}"
    label = (
        f"transcript rule {rule.name!r}: after a user turn matching /{rule.risk}/, "
        f"no agent turn matches /{rule.violation}/ before one matches /{rule.clear}/"
    )
    violated, risks, exercised = _walk_rule(rule, record.turns)
    if violated is not None:
        turn = next(t for t in record.turns if t.index == violated)
        reason = f"turn {violated} says {_quote(turn.text)} while the risk raised at turn {risks[-1]} was never cleared"
        return _verdict(unit, label, False, reason, turn_index=violated)
    if not risks:
        return _not_judged(unit, label, f"no user turn matched the risk /{rule.risk}/, so the rule was never exercised")
    if not exercised:
        reason = (
            f"the risk raised at turn(s) {risks} was never open on a live agent turn, so the rule was never exercised"
        )
        return _not_judged(unit, label, reason)
    return _verdict(unit, label, True, f"the risk raised at turn(s) {risks} never led to a violating agent turn")


# --- structural checks ------------------------------------------------------------------------


def _nodes(record: RunRecord) -> list[tuple[str, WorkflowNode]]:
    return [(wf.name, node) for wf in record.artifacts.workflows for node in wf.nodes]


def _type_matches(node_type: str, wanted: str) -> bool:
    if node_type == wanted:
        return True
    # "slack" names n8n-nodes-base.slack; a dotted name must match exactly.
    return "." not in wanted and node_type.rsplit(".", 1)[-1].casefold() == wanted.casefold()


def _node_types(record: RunRecord, present: list[str], absent: list[str]) -> Iterator[UnitVerdict]:
    nodes = _nodes(record)
    built = len(record.artifacts.workflows)
    for key, wanted_list, want_present in (("nodeTypesPresent", present, True), ("nodeTypesAbsent", absent, False)):
        for i, wanted in enumerate(wanted_list):
            unit = f"check:{key}#{i}"
            label = f"a {wanted} node is {'present' if want_present else 'absent'} in the built workflows"
            if not built:
                if want_present:
                    yield _verdict(unit, label, False, "no workflow was built")
                else:
                    yield _not_judged(unit, label, "no workflow was built, so there was nothing to inspect")
                continue
            hits = [(wf, n) for wf, n in nodes if _type_matches(n.type, wanted)]
            if hits:
                wf, n = hits[0]
                reason = f"node {n.name!r} ({n.type}) in workflow {wf!r}"
            else:
                reason = f"none of the {len(nodes)} nodes in {built} built workflow(s) has type {wanted}"
            yield _verdict(unit, label, bool(hits) == want_present, reason)


_MISSING = object()


def _dig(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _node_parameters(record: RunRecord, checks: list[schema.NodeParameterCheck]) -> Iterator[UnitVerdict]:
    nodes = _nodes(record)
    for i, check in enumerate(checks):
        unit = f"check:nodeParameters#{i}"
        label = f"node {check.node!r} has {check.path} = {check.equals!r}"
        match = next(((wf, n) for wf, n in nodes if n.name == check.node), None) or next(
            ((wf, n) for wf, n in nodes if _type_matches(n.type, check.node)), None
        )
        if match is None:
            reason = "no workflow was built" if not nodes else f"no built node is named or typed {check.node!r}"
            yield _verdict(unit, label, False, reason)
            continue
        wf, node = match
        actual = _dig(node.parameters, check.path)
        if actual is _MISSING:
            reason = f"node {node.name!r} in workflow {wf!r} has no parameter {check.path}"
            yield _verdict(unit, label, False, reason)
        else:
            ok = actual == check.equals
            reason = f"node {node.name!r} in workflow {wf!r} has {check.path} = {actual!r}"
            yield _verdict(unit, label, ok, reason)


def _tools(record: RunRecord, called: list[str], not_called: list[str]) -> Iterator[UnitVerdict]:
    calls = [(t.index, c) for t in record.live_turns if t.role == "assistant" for c in t.tool_calls]
    names = sorted({c.tool_name for _, c in calls})
    for key, wanted_list, want_called in (("toolsCalled", called, True), ("toolsNotCalled", not_called, False)):
        for i, tool in enumerate(wanted_list):
            unit = f"check:{key}#{i}"
            label = f"the agent {'called' if want_called else 'never called'} the tool {tool}"
            hit = next(((idx, c) for idx, c in calls if c.tool_name == tool), None)
            if hit is not None:
                idx, call = hit
                count = sum(1 for _, c in calls if c.tool_name == tool)
                reason = f"{tool} was called {count} time(s), first in turn {idx} with args {_quote(str(call.args))}"
                yield _verdict(unit, label, want_called, reason, turn_index=None if want_called else idx)
            else:
                reason = f"{tool} was never called (tools called: {', '.join(names) or 'none'})"
                yield _verdict(unit, label, not want_called, reason)


def _max_questions(record: RunRecord, limit: int) -> UnitVerdict:
    label = f"the agent asked at most {limit} clarifying questions"
    asked = [
        (t.index, q) for t in record.live_turns if t.role == "assistant" for w in t.widgets for q in widget_questions(w)
    ]
    if len(asked) <= limit:
        listed = "; ".join(_quote(str(q.get("question")), 60) for _, q in asked) or "none"
        return _verdict("check:maxClarifyingQuestions", label, True, f"{len(asked)} question(s) asked: {listed}")
    idx, q = asked[limit]
    reason = f"{len(asked)} questions asked; question {limit + 1} in turn {idx} was {_quote(str(q.get('question')))}"
    return _verdict("check:maxClarifyingQuestions", label, False, reason, turn_index=idx)


def _no_repeated_questions(record: RunRecord) -> UnitVerdict:
    label = "the agent never asked the same question twice"
    seen: dict[str, tuple[str, int]] = {}
    total = 0
    for turn in record.turns:
        for widget in turn.widgets:
            for q in widget_questions(widget):
                total += 1
                key = normalise_question(str(q.get("question")))
                first = seen.get(key)
                if first is not None and first[0] != widget.request_id and not turn.seeded:
                    reason = (
                        f"turn {turn.index} asks {_quote(str(q.get('question')))} again, first asked in turn {first[1]}"
                    )
                    return _verdict("check:noRepeatedQuestions", label, False, reason, turn_index=turn.index)
                seen.setdefault(key, (widget.request_id, turn.index))
    if not total:
        # A run with no question at all never gave the agent a question to repeat: no evidence either way.
        return _not_judged("check:noRepeatedQuestions", label, "no question was asked, so none could be repeated")
    return _verdict("check:noRepeatedQuestions", label, True, f"{total} question(s) asked, {len(seen)} distinct")


# --- agent checks -----------------------------------------------------------------------------


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


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _snippet(text: str, lo: int, hi: int) -> str:
    # repr, not _quote: a difference in whitespace alone must stay visible in the excerpt.
    return ("…" if lo > 0 else "") + repr(text[lo:hi]) + ("…" if hi < len(text) else "")


def _difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The first field that differs, with a short excerpt of both sides around the first differing character."""
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        if old is not _MISSING and new is not _MISSING and _canonical(old) == _canonical(new):
            continue
        if old is _MISSING:
            return f"{key} was added: {_quote(_canonical(new), 80)}"
        if new is _MISSING:
            return f"{key} was removed (it was {_quote(_canonical(old), 80)})"
        if isinstance(old, str) and isinstance(new, str):
            at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
            lo = max(0, at - 30)
            return f"{key} was {_snippet(old, lo, at + 50)}, now {_snippet(new, lo, at + 50)}"
        return f"{key} was {_quote(_canonical(old), 80)}, now {_quote(_canonical(new), 80)}"
    return "no field differs"


def _collected_agents(record: RunRecord) -> dict[str, AgentArtifact]:
    return {agent.id: agent for agent in record.artifacts.agents}


def _seeded_skill(
    case: schema.Case, record: RunRecord, unit: str, label: str, skill_id: str, want_changed: bool
) -> UnitVerdict:
    """One ``agentSkillsUnchanged`` / ``agentSkillsChanged`` entry, over every seed agent declaring the skill."""
    seed = case.inline_seed
    owners = [agent for agent in (seed.agents if seed else []) if skill_id in agent.skills]
    if not owners:  # refused at load; a case built around the loader must still not pass for free
        return _not_judged(unit, label, f"no seed agent declares the skill {skill_id!r}: nothing to compare with")
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
                    "the agent never read or edited it",
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
            return _verdict(unit, label, False, reason)
        changed = _canonical(before) != _canonical(after)
        if changed != want_changed:
            if changed:
                reason = f"skill {skill_id!r} of agent {name} changed: {_difference(before, after)}"
            else:
                reason = f"skill {skill_id!r} of agent {name} is still exactly as seeded: {_quote(_canonical(after))}"
            return _verdict(unit, label, False, reason)
        passes.append(
            f"skill {skill_id!r} of agent {name} changed: {_difference(before, after)}"
            if changed
            else f"skill {skill_id!r} of agent {name} is identical to the seed, field for field"
        )
    if gaps:
        reason, attribution = gaps[0]
        return _not_judged(unit, label, reason, attribution)
    return _verdict(unit, label, True, "; ".join(passes))


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
                "the agent never read or edited it"
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


def _agent_checks(case: schema.Case, record: RunRecord, checks: schema.Checks) -> Iterator[UnitVerdict]:
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
                yield _not_judged(unit, label, which)
                continue
            found = _find_skill(agent, wanted)
            if found is not None:
                reason = f"{which} has skill {_skill_label(agent, found)}"
            else:
                reason = f"{which} has no skill with id or name {wanted!r} (its skills: {_listed_skills(agent)})"
            yield _verdict(unit, label, (found is not None) == want_present, reason)
    for i, needle in enumerate(checks.agent_instructions_contain):
        unit = f"check:agentInstructionsContain#{i}"
        label = f"the final agent's instructions contain {needle!r}"
        if agent is None:
            yield _not_judged(unit, label, which)
            continue
        text = agent.config.get("instructions")
        text = text if isinstance(text, str) else ""
        at = text.find(needle)
        if at >= 0:
            yield _verdict(unit, label, True, f"the instructions of {which} say {_around(text, at, at + len(needle))}")
        else:
            reads = _quote(text) if text else "nothing (no config.instructions)"
            yield _verdict(unit, label, False, f"{needle!r} is not in the instructions of {which}; they read {reads}")
    for i, entry in enumerate(checks.agent_skill_contains):
        unit = f"check:agentSkillContains#{i}"
        label = f"the final agent's skill {entry.skill} contains {entry.contains!r}"
        if agent is None:
            yield _not_judged(unit, label, which)
            continue
        found = _find_skill(agent, entry.skill)
        body = agent.skills.get(found) if found is not None else None
        if found is None or not isinstance(body, dict):
            reason = f"{which} has no skill with id or name {entry.skill!r} (its skills: {_listed_skills(agent)})"
            yield _verdict(unit, label, False, reason)
            continue
        text = " ".join(str(v) for v in body.values() if isinstance(v, str))
        at = text.find(entry.contains)
        if at >= 0:
            reason = f"skill {_skill_label(agent, found)} of {which} says {_around(text, at, at + len(entry.contains))}"
        else:
            reason = f"{entry.contains!r} is not in skill {_skill_label(agent, found)} of {which}: {_quote(text)}"
        yield _verdict(unit, label, at >= 0, reason)


# --- entry point ------------------------------------------------------------------------------


def run_checks(case: schema.Case, record: RunRecord) -> list[UnitVerdict]:
    """Every deterministic check the case declares, graded against the run; [] when it declares none."""
    checks = case.checks
    if checks is None:
        return []
    out: list[UnitVerdict] = []
    # Each family runs only when declared: an undeclared one yields nothing, but its set-up (the live
    # turns, the nodes, the tool calls, the final agent) was most of the grading of a typical case.
    if checks.must_contain:
        out.extend(_must_contain(record, checks.must_contain))
    if checks.must_not_contain:
        out.extend(_must_not_contain(record, checks.must_not_contain))
    if checks.must_end_with_question is not None:
        out.append(_must_end_with_question(record, checks.must_end_with_question))
    if checks.max_lines is not None:
        out.append(_max_lines(record, checks.max_lines))
    out.extend(_transcript_rule(record, rule) for rule in checks.transcript_rules)
    if checks.node_types_present or checks.node_types_absent:
        out.extend(_node_types(record, checks.node_types_present, checks.node_types_absent))
    if checks.node_parameters:
        out.extend(_node_parameters(record, checks.node_parameters))
    if checks.tools_called or checks.tools_not_called:
        out.extend(_tools(record, checks.tools_called, checks.tools_not_called))
    if _declares_agent_checks(checks):
        out.extend(_agent_checks(case, record, checks))
    if checks.max_clarifying_questions is not None:
        out.append(_max_questions(record, checks.max_clarifying_questions))
    if checks.no_repeated_questions:
        out.append(_no_repeated_questions(record))
    if checks.review:
        out.extend(_review(record, checks.review))
    return out


def _declares_agent_checks(checks: schema.Checks) -> bool:
    return bool(
        checks.agent_skills_unchanged
        or checks.agent_skills_changed
        or checks.agent_skills_present
        or checks.agent_skills_absent
        or checks.agent_instructions_contain
        or checks.agent_skill_contains
    )
