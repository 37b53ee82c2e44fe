"""What the controls showed: per case and per unit, which controls turn it red (``control.json``).

A pure function of the runs :func:`threadcase.harness.control.run_controls` journaled. A unit is
*turned red* by a control when it fails there and did not fail in the clean run (a unit the clean
run did not judge counts too: the control made it judgeable and failing). A case is

- **proven** when it passes in the clean run and at least one control turns a unit of it red;
- **vacuous** when it passes in the clean run and no control turns anything red — it would report
  green while what it guards is broken (``allowed-vacuous`` when the user said it is a probe);
- **unproven** when the clean run did not pass it (failed, not judged, errored): nothing can show
  that a control turned it red.

Flags, which never fail the command on their own: a seeded case whose units all still pass without its
seed (**seed proves nothing**; a case with units that read the seed is not flagged: those units are
not tried either way), and a transcript rule that catches what it caught with
the history on the final turn alone (**catches the same without the history**: the final-turn control
of seed 000, applied to every transcript a rule caught under a control).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from threadcase.case.loader import LoadedCase
from threadcase.case.schema import TranscriptRule
from threadcase.grading.final_turn import read_final_turn
from threadcase.harness.control import (
    CLEAN,
    FINAL_TURN,
    NEEDS_THE_SEED,
    ControlKind,
    ControlOutcome,
    ControlRun,
    describe,
)
from threadcase.verdicts import CaseResult, UnitKind, UnitVerdict

__all__ = [
    "CONTROL_JSON",
    "CaseCell",
    "CaseControls",
    "CellStatus",
    "ControlInfo",
    "ControlReport",
    "FinalTurnCell",
    "UnitCell",
    "UnitControls",
    "control_report",
]

CONTROL_JSON = "control.json"

EXIT_PROVEN = 0
EXIT_VACUOUS = 1
EXIT_NOTHING_JUDGED = 3
EXIT_INTERRUPTED = 130

CellStatus = Literal["red", "green", "not_judged", "needs_seed", "errored", "not_run"]
CaseCellStatus = Literal[
    "red", "green", "not_judged", "needs_seed", "errored", "not_run", "history_needed", "same_without_history"
]
CaseVerdict = Literal["proven", "vacuous", "allowed-vacuous", "unproven"]

_RULE_PREFIX = "check:transcriptRules:"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UnitCell(_Model):
    """One unit under one control, over that control's iterations."""

    status: CellStatus
    """``red`` failed in some iteration; ``green`` passed and never failed; ``not_judged``; ``needs_seed``
    (seed-removed: the unit reads the seed); ``errored`` (no verdict: the case-iteration errored);
    ``not_run`` (the control did not run the case)."""
    reason: str = ""
    """The failing verdict's reason, why it was not judged, or why it needs the seed."""


class FinalTurnCell(_Model):
    """A transcript rule read on the final turn alone of one transcript it caught."""

    control: str
    """The control whose transcript was read."""
    iteration: int
    """Which iteration of that control."""
    caught: bool
    """The rule still fires on the final turn alone."""
    reason: str
    """What the rule saw on the final turn alone."""


class UnitControls(_Model):
    """One unit of a case: the clean run, every control, and which controls turn it red."""

    unit: str
    """The unit id (``check:nodeParameters#0``, ``process#1``, ...)."""
    kind: UnitKind
    """process, outcome, check, scenario or review."""
    label: str
    """What the unit asserts, in words."""
    clean: UnitCell
    """The unit in the clean run."""
    cells: dict[str, UnitCell] = Field(default_factory=dict)
    """Control name -> the unit under it (misbehaviours and seed-removed)."""
    red_under: list[str] = Field(default_factory=list)
    """The controls that turn it red (it fails there and did not fail in the clean run)."""
    final_turn: list[FinalTurnCell] = Field(default_factory=list)
    """Transcript rules: the final-turn reading of every transcript a control turned it red in."""
    history_needed: bool | None = None
    """Transcript rules: False when every final-turn reading still caught it (flagged), True when one
    missed it; None when no control turned the rule red (nothing to compare)."""


class CaseCell(_Model):
    """One cell of the matrix: a case under one control."""

    status: CaseCellStatus
    """``red`` (some unit turned red), ``green`` (judged, nothing turned red), ``not_judged``,
    ``needs_seed``, ``errored``, ``not_run``; the final-turn column says ``history_needed`` or
    ``same_without_history`` (a rule caught the same on the final turn alone), or ``not_run``."""
    red_units: list[str] = Field(default_factory=list)
    """The units this control turned red."""
    note: str = ""
    """Why (not run, not judged, errored, needs the seed), in one sentence."""


class CaseControls(_Model):
    """One case: its verdict, its row of the matrix, and every unit."""

    slug: str
    """The case's slug."""
    seeded: bool
    """The case has a seed (the seed-removed control applies)."""
    verdict: CaseVerdict
    """proven, vacuous, allowed-vacuous or unproven (see the module docstring)."""
    reason: str
    """Why, in one sentence."""
    red_under: list[str] = Field(default_factory=list)
    """The controls that turn at least one unit red."""
    cells: dict[str, CaseCell] = Field(default_factory=dict)
    """Control name -> the cell (the clean run is the ``clean`` cell)."""
    units: list[UnitControls] = Field(default_factory=list)
    """Every unit the clean run graded, in its order."""
    never_flipped: list[str] = Field(default_factory=list)
    """Units the clean run passed that no control turns red."""
    never_judged: list[str] = Field(default_factory=list)
    """Units judged in no run at all (e.g. expectations with no judge model)."""
    tried: list[str] = Field(default_factory=list)
    """The controls that ran this case (not ``not_run``)."""
    flags: list[str] = Field(default_factory=list)
    """``seed proves nothing: ...``, ``transcript rule 'x' catches the same without the history: ...``."""


class ControlInfo(_Model):
    """One control of the run."""

    name: str
    """``clean``, ``seed-removed``, ``final-turn`` or a misbehaviour's name."""
    kind: ControlKind
    """What kind of control it is."""
    description: str
    """What it does, in one line."""
    run_id: str = ""
    """The run id its journal lines carry ('' for final-turn, which reads the others' transcripts)."""
    journal: str | None = None
    """Its journal, relative to the output directory (None for final-turn)."""
    case_iterations: int = 0
    """Case-iterations it ran."""


class ControlReport(_Model):
    """``control.json``: every case under every control, and what it says about the suite."""

    run_id: str
    """The clean run's id."""
    suite: str
    """The suite path as given."""
    output_dir: str
    """Where the journals and reports are."""
    controls: list[ControlInfo]
    """Every control that ran, the clean run first."""
    unavailable: dict[str, str] = Field(default_factory=dict)
    """Controls that could not run here, and why."""
    cases: list[CaseControls]
    """Every selected case, in suite order."""
    vacuous: list[str] = Field(default_factory=list)
    """Cases no control turns red (not allowed)."""
    allowed_vacuous: list[str] = Field(default_factory=list)
    """Cases no control turns red, allowed by ``--allow-vacuous``."""
    unproven: list[str] = Field(default_factory=list)
    """Cases the clean run did not pass."""
    warnings: list[str] = Field(default_factory=list)
    """Things a person should know (unknown ``--allow-vacuous`` slugs, allowed cases that are proven, ...)."""
    interrupted: bool = False
    """The run was interrupted: what finished is reported."""
    exit_code: int = EXIT_PROVEN
    """0 every case proven (or allowed); 1 a case vacuous or unproven; 3 the clean run judged nothing; 130
    interrupted."""


def _collate(verdicts: Sequence[UnitVerdict], errored: Sequence[str]) -> UnitCell:
    """One unit over a control's iterations (``errored``: the errors of iterations that graded nothing)."""
    failed = next((v for v in verdicts if v.status == "fail"), None)
    if failed is not None:
        return UnitCell(status="red", reason=failed.reason)
    if any(v.status == "pass" for v in verdicts):
        return UnitCell(status="green")
    needs = next((v for v in verdicts if v.reason.startswith(NEEDS_THE_SEED)), None)
    if needs is not None:
        return UnitCell(status="needs_seed", reason=needs.reason.removeprefix(f"{NEEDS_THE_SEED}: "))
    if verdicts:
        return UnitCell(status="not_judged", reason=verdicts[0].reason)
    if errored:
        return UnitCell(status="errored", reason=errored[0])
    return UnitCell(status="not_run")


def _by_unit(results: Sequence[CaseResult]) -> tuple[dict[str, list[UnitVerdict]], list[str]]:
    verdicts: dict[str, list[UnitVerdict]] = {}
    for result in results:
        for verdict in result.verdicts:
            verdicts.setdefault(verdict.unit, []).append(verdict)
    errors = [f"{r.error.type}: {r.error.message}" for r in results if r.error is not None and not r.verdicts]
    return verdicts, errors


def _rules(loaded: LoadedCase) -> dict[str, TranscriptRule]:
    checks = loaded.case.checks
    return {f"{_RULE_PREFIX}{rule.name}": rule for rule in (checks.transcript_rules if checks else [])}


class _CaseView:
    """The results of one case, per control."""

    def __init__(self, loaded: LoadedCase, runs: Mapping[str, ControlRun]) -> None:
        self.loaded = loaded
        self.slug = loaded.slug
        self.results = {name: [r for r in run.results if r.case_slug == loaded.slug] for name, run in runs.items()}
        self.runs = runs

    def clean_units(self) -> list[UnitVerdict]:
        """One verdict per unit of the clean run (the first iteration's labels), in the grader's order."""
        first: dict[str, UnitVerdict] = {}
        for result in self.results[CLEAN]:
            for verdict in result.verdicts:
                first.setdefault(verdict.unit, verdict)
        return list(first.values())


def _unit(view: _CaseView, verdict: UnitVerdict, controls: Sequence[str], final_turn: bool) -> UnitControls:
    clean_verdicts, clean_errors = _by_unit(view.results[CLEAN])
    clean = _collate(clean_verdicts.get(verdict.unit, []), clean_errors)
    unit = UnitControls(unit=verdict.unit, kind=verdict.kind, label=verdict.label, clean=clean)
    rule = _rules(view.loaded).get(verdict.unit) if final_turn else None
    for name in controls:
        if view.slug in view.runs[name].not_run:
            note = view.runs[name].not_run[view.slug]
            needs = view.runs[name].needs_seed.get(view.slug, {}).get(verdict.unit)
            unit.cells[name] = (
                UnitCell(status="needs_seed", reason=needs) if needs else UnitCell(status="not_run", reason=note)
            )
            continue
        by_unit, errors = _by_unit(view.results[name])
        cell = _collate(by_unit.get(verdict.unit, []), errors)
        unit.cells[name] = cell
        if cell.status != "red" or clean.status == "red":
            continue
        unit.red_under.append(name)
        if rule is None:
            continue
        for result in view.results[name]:
            caught_here = any(v.unit == verdict.unit and v.status == "fail" for v in result.verdicts)
            if caught_here and result.record is not None:
                reading = read_final_turn(rule, result.record.turns)
                unit.final_turn.append(
                    FinalTurnCell(
                        control=name, iteration=result.iteration, caught=reading.caught, reason=reading.reason
                    )
                )
    if unit.final_turn:
        unit.history_needed = not all(cell.caught for cell in unit.final_turn)
    return unit


def _clean_problem(view: _CaseView) -> str | None:
    """Why the clean run did not pass the case, or None when every clean iteration passed."""
    results = view.results[CLEAN]
    if not results:
        return "the clean run did not finish it"
    for result in results:
        if result.status == "fail":
            failed = [v.unit for v in result.verdicts if v.status == "fail"]
            return f"it fails in the clean run ({', '.join(failed)}), so no control can be seen to turn it red"
        if result.status == "errored" and result.error is not None:
            return f"it errored in the clean run ({result.error.type}: {result.error.message})"
        if result.status != "pass":
            reason = next((v.reason for v in result.verdicts if v.status == "not_judged"), "no unit was judged")
            return f"the clean run judged none of its units ({reason})"
    return None


def _case_cell(view: _CaseView, name: str, units: Sequence[UnitControls]) -> CaseCell:
    run = view.runs[name]
    if view.slug in run.not_run:
        note = run.not_run[view.slug]
        return CaseCell(status="needs_seed" if note.startswith(NEEDS_THE_SEED) else "not_run", note=note)
    red = [u.unit for u in units if name in u.red_under]
    if red:
        return CaseCell(status="red", red_units=red)
    cells = [u.cells.get(name) for u in units]
    if any(c is not None and c.status in ("green", "red") for c in cells):
        return CaseCell(status="green")
    results = view.results[name]
    errored = next((r.error for r in results if r.error is not None and not r.verdicts), None)
    if errored is not None:
        return CaseCell(status="errored", note=f"{errored.type}: {errored.message}")
    reason = next(
        (c.reason for c in cells if c is not None and c.status == "not_judged" and c.reason),
        "no unit was judged",
    )
    return CaseCell(status="not_judged", note=reason)


def _final_turn_cell(units: Sequence[UnitControls]) -> CaseCell:
    rules = [u for u in units if u.unit.startswith(_RULE_PREFIX)]
    if not rules:
        return CaseCell(status="not_run", note="no transcript rule")
    compared = [u for u in rules if u.history_needed is not None]
    if not compared:
        return CaseCell(status="not_run", note="no control turned a transcript rule red: nothing to read again")
    same = [u.unit for u in compared if u.history_needed is False]
    if same:
        return CaseCell(
            status="same_without_history",
            red_units=same,
            note="caught the same on the final turn alone: the history was not needed",
        )
    return CaseCell(status="history_needed", note="the final turn alone misses what the whole transcript caught")


def _flags(view: _CaseView, units: Sequence[UnitControls], seed_control: str | None) -> list[str]:
    flags: list[str] = []
    if seed_control is not None and view.slug not in view.runs[seed_control].not_run:
        cells = [u.cells[seed_control] for u in units if seed_control in u.cells]
        judged = [c for c in cells if c.status in ("green", "red")]
        # A unit that reads the seed shows the seed matters to the case; only a case whose every unit
        # was tried without it, and still passed, is shown to need nothing of its seed.
        needs = any(c.status == "needs_seed" for c in cells)
        if judged and not needs and all(c.status == "green" for c in judged):
            flags.append(f"seed proves nothing: without the seed all {len(judged)} unit(s) judged still pass")
    for unit in units:
        if unit.history_needed is False:
            where = ", ".join(dict.fromkeys(cell.control for cell in unit.final_turn))
            name = unit.unit.removeprefix(_RULE_PREFIX)
            flags.append(
                f"transcript rule {name!r} catches the same without the history: on the final turn alone it still "
                f"fires (under {where}); a single-turn check would do"
            )
    return flags


def _case(
    view: _CaseView,
    controls: Sequence[str],
    *,
    final_turn: bool,
    allow_vacuous: Sequence[str],
) -> CaseControls:
    units = [_unit(view, verdict, controls, final_turn) for verdict in view.clean_units()]
    cells = {CLEAN: CaseCell(status="green" if _clean_problem(view) is None else "not_judged")}
    clean_statuses = {r.status for r in view.results[CLEAN]}
    if "fail" in clean_statuses:
        cells[CLEAN] = CaseCell(status="red", red_units=[u.unit for u in units if u.clean.status == "red"])
    elif "errored" in clean_statuses:
        cells[CLEAN] = CaseCell(status="errored")
    for name in controls:
        cells[name] = _case_cell(view, name, units)
    if final_turn:
        cells[FINAL_TURN] = _final_turn_cell(units)
    red_under = [name for name in controls if cells[name].status == "red"]
    problem = _clean_problem(view)
    verdict: CaseVerdict
    if problem is not None:
        verdict, reason = "unproven", problem
    elif red_under:
        verdict, reason = "proven", f"turned red by {', '.join(red_under)}"
    else:
        verdict = "allowed-vacuous" if view.slug in allow_vacuous else "vacuous"
        tried = [name for name in controls if cells[name].status not in ("not_run", "needs_seed")]
        reason = f"no control turns it red (tried: {', '.join(tried) or 'none'})"
    seed_control = next((n for n in controls if view.runs[n].kind == "seed-removed"), None)
    return CaseControls(
        slug=view.slug,
        seeded=view.loaded.case.seed is not None,
        verdict=verdict,
        reason=reason,
        red_under=red_under,
        cells=cells,
        units=units,
        never_flipped=[u.unit for u in units if u.clean.status == "green" and not u.red_under],
        never_judged=[
            u.unit
            for u in units
            if u.clean.status == "not_judged" and all(c.status not in ("green", "red") for c in u.cells.values())
        ],
        tried=[name for name in controls if cells[name].status not in ("not_run", "needs_seed")],
        flags=_flags(view, units, seed_control),
    )


def control_report(outcome: ControlOutcome) -> ControlReport:
    """Read every control's results against the clean run (see the module docstring)."""
    controls = [name for name in outcome.runs if name != CLEAN]
    cases = [
        _case(
            _CaseView(loaded, outcome.runs),
            controls,
            final_turn=outcome.final_turn,
            allow_vacuous=outcome.allow_vacuous,
        )
        for loaded in outcome.cases
    ]
    infos = [
        ControlInfo(
            name=name,
            kind=run.kind,
            description=run.description,
            run_id=run.run_id,
            journal=str(run.output_dir.relative_to(outcome.output_dir) / "journal.jsonl")
            if run.output_dir != outcome.output_dir
            else "journal.jsonl",
            case_iterations=len(run.results),
        )
        for name, run in outcome.runs.items()
    ]
    if outcome.final_turn:
        infos.append(ControlInfo(name=FINAL_TURN, kind="final-turn", description=describe(FINAL_TURN)))
    slugs = {case.slug for case in cases}
    warnings = [f"control {name} not run: {why}" for name, why in outcome.unavailable.items()]
    warnings += [
        f"--allow-vacuous {slug}: no selected case has this slug" for slug in outcome.allow_vacuous if slug not in slugs
    ]
    warnings += [
        f"{case.slug} is allowed to be vacuous, but {', '.join(case.red_under)} turn(s) it red: "
        "take it out of --allow-vacuous"
        for case in cases
        if case.slug in outcome.allow_vacuous and case.verdict == "proven"
    ]
    report = ControlReport(
        run_id=outcome.run_id,
        suite=str(outcome.suite),
        output_dir=str(outcome.output_dir),
        controls=infos,
        unavailable=dict(outcome.unavailable),
        cases=cases,
        vacuous=[c.slug for c in cases if c.verdict == "vacuous"],
        allowed_vacuous=[c.slug for c in cases if c.verdict == "allowed-vacuous"],
        unproven=[c.slug for c in cases if c.verdict == "unproven"],
        warnings=warnings,
        interrupted=outcome.interrupted,
    )
    report.exit_code = _exit_code(report, outcome.runs[CLEAN].results)
    return report


def _exit_code(report: ControlReport, clean: Sequence[CaseResult]) -> int:
    """130 interrupted; 3 the clean run judged nothing; 1 a case vacuous or unproven; else 0."""
    if report.interrupted:
        return EXIT_INTERRUPTED
    if not any(v.status in ("pass", "fail") for r in clean for v in r.verdicts):
        return EXIT_NOTHING_JUDGED
    if report.vacuous or report.unproven:
        return EXIT_VACUOUS
    return EXIT_PROVEN
