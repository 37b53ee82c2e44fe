"""The simulated user's premises: it understood its notes, delivered its script, and followed it.

A case whose user did not play its script tested something else than it says, so its units are *not
judged* — never a pass the builder did not earn, never a failure charged to it:

- ``notes-understood`` (scripted user): a note, or part of one, the scripted user cannot follow —
  ``not judged: the scripted user could not follow note "…"`` (``proxy_issue``);
- ``script-delivered``: every scripted turn reached the agent, and every directive the case depends
  on fired (its moment came: the plan was shown, the question was asked); else the reason names the
  turn or note and why (the message budget was spent, the conversation ended, the event never came;
  ``timeout`` when the clock ended the conversation, else ``verification_gap``). A model user reads
  the notes as text, so only its turns count, and only when the conversation was cut short (a model
  that declared done judged its script delivered);
- ``user-followed-script`` (scripted user): what the user could not do as a note says (recorded as it
  happened), and an audit of what it actually answered, widget by widget, against the notes that
  governed that moment — a declined detail given anyway, a value other than the note's, a value the
  script states replaced by another, a plan approved that a note said to push back on
  (``proxy_issue``).
"""

from __future__ import annotations

from collections.abc import Iterator

from threadcase.case import note_topics as topics
from threadcase.case import schema
from threadcase.case.details import detail_kind, stated_values
from threadcase.case.directives import Answer, Decline, Directive, PlanReview
from threadcase.case.notes import Script, ScriptTurn
from threadcase.records import TIMEOUT_ENDINGS, RunRecord, ScriptDelivery, WidgetRecord
from threadcase.verdicts import PremiseResult

__all__ = ["audit_user", "user_premises"]

_CUT_ENDINGS = frozenset({*TIMEOUT_ENDINGS, "budget", "error", "cancelled"})


def _cut(text: str, limit: int = 60) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def user_premises(case: schema.Case, record: RunRecord) -> list[PremiseResult]:
    """The simulated user's premises for this run; none for a single-prompt case (no user)."""
    delivery = record.script
    if delivery is None or record.mode == "single-prompt":
        return []
    scripted = record.user is None or record.user.kind == "scripted"
    premises: list[PremiseResult] = []
    if scripted:
        premises.append(_understood(delivery))
    premises.append(_delivered(delivery, record, scripted=scripted))
    if scripted:
        premises.append(_followed(case, record, delivery))
    return premises


def _understood(delivery: ScriptDelivery) -> PremiseResult:
    if not delivery.not_understood:
        return PremiseResult(name="notes-understood", held=True, reason="the scripted user understood every note")
    first = delivery.not_understood[0]
    more = f" (and {len(delivery.not_understood) - 1} more)" if len(delivery.not_understood) > 1 else ""
    return PremiseResult(
        name="notes-understood",
        held=False,
        reason=f"the scripted user could not follow {first}{more}",
        attribution="proxy_issue",
    )


def _delivered(delivery: ScriptDelivery, record: RunRecord, *, scripted: bool) -> PremiseResult:
    missing: list[str] = []
    if scripted or record.ended_by in _CUT_ENDINGS:
        for turn in delivery.undelivered:
            what = f'"{_cut(turn.says)}"' if turn.says else "(notes only)"
            missing.append(f"conversation[{turn.turn}] {what} was never sent: {turn.why_not}")
    if scripted:
        for directive in delivery.unfired:
            missing.append(
                f'note "{_cut(directive.note)}" (conversation[{directive.turn}]) never fired: {directive.why_not}'
            )
    if not missing:
        what = "every scripted turn was delivered" + (" and every note it depends on fired" if scripted else "")
        return PremiseResult(name="script-delivered", held=True, reason=what)
    more = f" (and {len(missing) - 2} more)" if len(missing) > 2 else ""
    return PremiseResult(
        name="script-delivered",
        held=False,
        reason="; ".join(missing[:2]) + more,
        attribution="timeout" if record.ended_by in TIMEOUT_ENDINGS else "verification_gap",
    )


def _followed(case: schema.Case, record: RunRecord, delivery: ScriptDelivery) -> PremiseResult:
    faults = [*delivery.faults, *audit_user(case, record)]
    if not faults:
        return PremiseResult(name="user-followed-script", held=True, reason="the scripted user followed its notes")
    more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
    return PremiseResult(
        name="user-followed-script",
        held=False,
        reason=f"the simulated user did not follow its script: {faults[0]}{more}",
        attribution="proxy_issue",
    )


# --- the audit -------------------------------------------------------------------------------------


def _script_of(case: schema.Case, record: RunRecord) -> Script:
    """The script as the run played it, delivery positions included."""
    turns = [(t.role, t.text) for t in case.conversation]
    live = next((t.text for t in record.live_turns if t.role == "user" and t.sent_by == "replay"), None)
    if live is not None:
        turns.insert(0, ("user", live))
    script = Script.from_texts(turns or [("user", "")])
    delivery = record.script
    speaking = {t.index for t in script.user_turns if script.speaks(t)}
    sent_at = {
        t.turn: t.message
        for t in (delivery.turns if delivery is not None else [])
        if t.turn in speaking and t.message is not None and t.delivered
    }
    script.replay(sent_at, messages=record.follow_ups_sent)
    return script


def _widgets(record: RunRecord) -> Iterator[tuple[int, WidgetRecord]]:
    """Every answered widget of the live conversation, with the user message its run answered."""
    message = -1
    for turn in record.live_turns:
        if turn.role == "user":
            message += 1
            continue
        for widget in turn.widgets:
            if widget.answer is not None and widget.answered_by in ("scripted", "fallback", "model"):
                yield max(message, 0), widget


def _setup_issues(widget: WidgetRecord) -> dict[str, dict[str, str]]:
    """node name -> parameter -> its problems as one line (as the scripted user reads a setup card)."""
    issues: dict[str, dict[str, str]] = {}
    for entry in widget.request.get("setupRequests", []):
        if not isinstance(entry, dict):
            continue
        node = entry.get("node")
        name = str(node.get("name", "")) if isinstance(node, dict) else str(node)
        raw = entry.get("parameterIssues") or {}
        issues[name] = {str(p): "; ".join(str(i) for i in v) if isinstance(v, list) else str(v) for p, v in raw.items()}
    return issues


def _asked_in(widget: WidgetRecord) -> list[str]:
    """Every question (or setup-card parameter) a widget asks, answered or not."""
    asked = [
        str(q.get("question", ""))
        for q in widget.request.get("questions", [])
        if isinstance(q, dict) and not str(q.get("id", "")).startswith("credential:")
    ]
    issues = _setup_issues(widget)
    asked += [f"{node}.{param}: {issue}" for node, params in issues.items() for param, issue in params.items()]
    return asked


def _given_values(widget: WidgetRecord) -> Iterator[tuple[str, str, bool]]:
    """``(what was asked, the value given, whether it is an offered option)`` for every value a widget's
    answer carries (skipped answers give none)."""
    answer = widget.answer or {}
    if answer.get("kind") == "questions":
        asked = {str(q.get("id")): q for q in widget.request.get("questions", []) if isinstance(q, dict)}
        for item in answer.get("answers", []):
            if not isinstance(item, dict) or item.get("skipped"):
                continue
            question = asked.get(str(item.get("questionId")), {})
            if str(question.get("id", "")).startswith("credential:"):
                continue
            text = str(question.get("question", ""))
            if item.get("customText"):
                yield text, str(item["customText"]), False
            for option in item.get("selectedOptions") or []:
                yield text, str(option), True
    elif answer.get("kind") == "setupWorkflowApply":
        issues = _setup_issues(widget)
        for node, values in (answer.get("nodeParameters") or {}).items():
            for param, value in (values or {}).items():
                issue = issues.get(str(node), {}).get(param, "")
                yield f"{node}.{param}: {issue}", str(value), False


def _same(a: str, b: str) -> bool:
    x, y = a.strip().lower(), b.strip().lower()
    return bool(x and y) and (x in y or y in x)


def audit_user(case: schema.Case, record: RunRecord) -> list[str]:
    """What the user answered against the notes that governed that moment (one line each)."""
    script = _script_of(case, record)
    fired_declines = {
        (d.turn, d.note) for d in (record.script.directives if record.script is not None else []) if d.fired
    }
    corpus = "\n".join([script.spoken_corpus(), *(n for t in script.user_turns for n in t.loose_notes)])
    found: list[str] = []
    for message, widget in _widgets(record):
        active = script.active_turns(message)
        governing = [(t, d) for t in active for d in t.directives]
        held = [
            (t, d)
            for t in script.user_turns
            for r in t.readings
            for d in r.directives
            if isinstance(d, Decline) and (t.index, r.note) in fired_declines
        ]
        siblings = _asked_in(widget)
        declines = [(t, d) for t, d in [*governing, *held] if isinstance(d, Decline)]
        answers = [d for _, d in governing if isinstance(d, Answer)]
        for asked, value, is_option in _given_values(widget):
            # The same choice the scripted user makes: the note that names this question best, in this widget.
            at = topics.governing([d.trigger for _, d in declines], asked, siblings)
            declined = declines[at] if at is not None else None
            if declined is not None:
                found.append(
                    f'answered "{_cut(asked)}" with {value!r} although conversation[{declined[0].index}] '
                    f'declines it ("{_cut(declined[1].clause)}")'
                )
                continue
            at = topics.governing([d.trigger for d in answers], asked, siblings)
            note = answers[at] if at is not None else None
            if note is not None:
                if not _same(note.value, value):
                    found.append(f'answered "{_cut(asked)}" with {value!r} where a note says {note.value!r}')
                continue
            kind = detail_kind(asked)
            stated = stated_values(kind, corpus) if kind is not None and not is_option else []
            if stated and not any(_same(s, value) for s in stated):
                found.append(
                    f'answered "{_cut(asked)}" with {value!r}, which the script does not give (it states '
                    f"{', '.join(repr(s) for s in stated[:3])})"
                )
        if widget.input_type == "plan-review" and (widget.answer or {}).get("approved") is True:
            found.extend(_approved_against(script, record, message, widget, governing))
    return found


def _approved_against(
    script: Script,
    record: RunRecord,
    message: int,
    widget: WidgetRecord,
    governing: list[tuple[ScriptTurn, Directive]],
) -> list[str]:
    plan = next(
        (d for _, d in governing if isinstance(d, PlanReview) and (d.feedback is not None or d.then == "reject")),
        None,
    )
    if plan is None:
        return []
    steps = [s for s in widget.request.get("plan") or [] if isinstance(s, dict)]
    said = str(widget.request.get("message", ""))
    text = " ".join(f"{s.get('title', '')} {s.get('detail', '')}" for s in steps) or said
    if plan.conditional:
        if plan.satisfied_by(text, said):
            return []
        words = ", ".join(plan.until_absent or plan.until_present)
        state = "still mentions" if plan.until_absent else "does not mention"
        return [f'approved a plan that {state} {words}, against "{_cut(plan.clause)}"']
    if plan.then == "reject":
        return [f'approved a plan that "{_cut(plan.clause)}" rejects']
    rejections = sum(
        1
        for m, w in _widgets(record)
        if m <= message and w.input_type == "plan-review" and (w.answer or {}).get("approved") is False
    )
    if rejections < plan.pushes:
        return [f'approved the plan without pushing back as "{_cut(plan.clause)}" says']
    return []
