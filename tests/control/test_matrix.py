"""Reading controls against the clean run: proven, vacuous, unproven, flags, exit codes (no instance needed)."""

from __future__ import annotations

from pathlib import Path

from threadcase.case.loader import LoadedCase, parse_case
from threadcase.harness.control import CLEAN, NEEDS_THE_SEED, SEED_REMOVED, ControlOutcome, ControlRun
from threadcase.harness.control_matrix import control_report
from threadcase.records import RunRecord, Turn
from threadcase.report.control_view import control_lines, matrix_lines, render_control_section, short_names
from threadcase.verdicts import CaseResult, ErrorInfo, UnitVerdict, case_status

RULE = {"name": "holds", "risk": "(?i)skip the review", "clear": "(?i)won't", "violation": "(?i)^ok\\b"}


def _loaded(slug: str, *, seeded: bool = False, rule: bool = False) -> LoadedCase:
    document: dict[str, object] = {
        "complexity": "simple",
        "tags": [],
        "conversation": [{"role": "user", "text": "Every day at 9 post the digest to #ops"}],
        "checks": {"maxLines": 4, "maxClarifyingQuestions": 0, **({"transcriptRules": [RULE]} if rule else {})},
    }
    if seeded:
        document["seed"] = {"mode": "inline", "messages": [{"role": "user", "text": "earlier"}]}
    return LoadedCase(slug=slug, path=Path(f"{slug}.json"), case=parse_case(document))


def _verdict(unit: str, status: str, reason: str = "why") -> UnitVerdict:
    return UnitVerdict(
        unit=unit,
        kind="check",
        label=unit,
        status=status,
        reason=reason,
        attribution=None if status == "pass" else "builder_issue",
    )


def _result(slug: str, run_id: str, *statuses: tuple[str, str], turns: list[Turn] | None = None) -> CaseResult:
    verdicts = [_verdict(unit, status) for unit, status in statuses]
    record = RunRecord(case_slug=slug, thread_id="t", mode="multi-turn", turns=turns or [])
    return CaseResult(run_id=run_id, case_slug=slug, status=case_status(verdicts), verdicts=verdicts, record=record)


GREEN = (("check:maxLines", "pass"), ("check:maxClarifyingQuestions", "pass"))


def _outcome(tmp_path: Path, cases: list[LoadedCase], runs: dict[str, ControlRun], **kwargs: object) -> ControlOutcome:
    values: dict[str, object] = {
        "run_id": "clean-run",
        "suite": tmp_path,
        "output_dir": tmp_path,
        "cases": cases,
        "runs": runs,
        "unavailable": {},
        "final_turn": True,
        "base_urls": [],
        "interrupted": False,
        "planned": 0,
        "allow_vacuous": [],
    }
    values.update(kwargs)
    return ControlOutcome(**values)  # type: ignore[arg-type]


def _run(name: str, tmp_path: Path, results: list[CaseResult], kind: str = "misbehaviour") -> ControlRun:
    out = tmp_path if name == CLEAN else tmp_path / "controls" / name
    return ControlRun(name, kind, name, out, results=results)  # type: ignore[arg-type]


def test_proven_vacuous_and_unproven_cases_and_the_exit_code(tmp_path: Path) -> None:
    cases = [_loaded("caught"), _loaded("probe"), _loaded("red-already")]
    clean = _run(
        CLEAN,
        tmp_path,
        [
            _result("caught", "c", *GREEN),
            _result("probe", "c", *GREEN),
            _result("red-already", "c", ("check:maxLines", "fail"), ("check:maxClarifyingQuestions", "pass")),
        ],
        kind="clean",
    )
    asks = _run(
        "asks-what-was-given",
        tmp_path,
        [
            _result("caught", "m", ("check:maxLines", "pass"), ("check:maxClarifyingQuestions", "fail")),
            _result("probe", "m", *GREEN),
            _result("red-already", "m", ("check:maxLines", "fail"), ("check:maxClarifyingQuestions", "pass")),
        ],
    )
    report = control_report(_outcome(tmp_path, cases, {CLEAN: clean, "asks-what-was-given": asks}))
    by = {c.slug: c for c in report.cases}
    assert by["caught"].verdict == "proven"
    assert by["caught"].red_under == ["asks-what-was-given"]
    assert by["caught"].cells["asks-what-was-given"].red_units == ["check:maxClarifyingQuestions"]
    assert by["caught"].never_flipped == ["check:maxLines"]
    assert by["probe"].verdict == "vacuous"
    assert "tried: asks-what-was-given" in by["probe"].reason
    # A unit already red in the clean run is never "turned red" by a control.
    assert by["red-already"].verdict == "unproven"
    assert by["red-already"].red_under == []
    assert report.vacuous == ["probe"]
    assert report.unproven == ["red-already"]
    assert report.exit_code == 1
    lines = control_lines(report)
    assert lines[-1] == "VACUOUS: 1 case(s) no control turns red; 1 case(s) the clean run did not pass"
    assert any(line.startswith("VACUOUS: probe: no control turns it red") for line in lines)
    row = next(line for line in matrix_lines(report) if line.startswith("caught"))
    assert row.split() == ["caught", "pass", "RED", "1", "–", "proven"]  # no transcript rule: final turn not run

    allowed = control_report(
        _outcome(
            tmp_path,
            cases[:2],
            {CLEAN: clean, "asks-what-was-given": asks},
            allow_vacuous=["probe", "caught", "gone"],
        )
    )
    assert allowed.exit_code == 0
    assert allowed.allowed_vacuous == ["probe"]
    assert any("--allow-vacuous gone: no selected case" in w for w in allowed.warnings)
    assert any(w.startswith("caught is allowed to be vacuous, but asks-what-was-given") for w in allowed.warnings)
    assert (
        control_lines(allowed)[-1]
        == "PROVEN: every case is turned red by at least one control (1 allowed to be vacuous)"
    )


def test_a_clean_run_that_judged_nothing_is_exit_3_and_an_errored_control_is_no_catch(tmp_path: Path) -> None:
    cases = [_loaded("a")]
    errored = CaseResult(
        run_id="c",
        case_slug="a",
        status="errored",
        error=ErrorInfo(type="InstanceError", message="503 from the instance"),
    )
    clean = _run(CLEAN, tmp_path, [errored], kind="clean")
    control = _run("drops-change", tmp_path, [errored])
    report = control_report(_outcome(tmp_path, cases, {CLEAN: clean, "drops-change": control}))
    assert report.exit_code == 3
    assert report.cases[0].verdict == "unproven"
    assert report.cases[0].cells["drops-change"].status == "errored"
    assert "503" in report.cases[0].cells["drops-change"].note


def test_seed_proves_nothing_only_when_every_unit_was_tried_without_it(tmp_path: Path) -> None:
    cases = [_loaded("beside-the-point", seeded=True), _loaded("reads-the-seed", seeded=True)]
    clean = _run(CLEAN, tmp_path, [_result("beside-the-point", "c", *GREEN), _result("reads-the-seed", "c", *GREEN)])
    needs = UnitVerdict(
        unit="check:maxLines",
        kind="check",
        label="x",
        status="not_judged",
        reason=f"{NEEDS_THE_SEED}: checks.x names the seeded workflow 'y'",
        attribution="verification_gap",
    )
    reads = _result("reads-the-seed", "s", ("check:maxClarifyingQuestions", "pass"))
    reads.verdicts.append(needs)
    seed = _run(SEED_REMOVED, tmp_path, [_result("beside-the-point", "s", *GREEN), reads], kind="seed-removed")
    seed.needs_seed = {"reads-the-seed": {"check:maxLines": "checks.x names the seeded workflow 'y'"}}
    asks = _run(
        "asks-what-was-given",
        tmp_path,
        [
            _result("beside-the-point", "m", ("check:maxLines", "pass"), ("check:maxClarifyingQuestions", "fail")),
            _result("reads-the-seed", "m", ("check:maxLines", "pass"), ("check:maxClarifyingQuestions", "fail")),
        ],
    )
    report = control_report(_outcome(tmp_path, cases, {CLEAN: clean, SEED_REMOVED: seed, "asks-what-was-given": asks}))
    by = {c.slug: c for c in report.cases}
    assert by["beside-the-point"].verdict == "proven"  # a flag never fails the command on its own
    assert by["beside-the-point"].flags == ["seed proves nothing: without the seed all 2 unit(s) judged still pass"]
    assert by["reads-the-seed"].flags == []
    assert by["reads-the-seed"].units[0].cells[SEED_REMOVED].status == "needs_seed"
    assert report.exit_code == 0
    assert "flag: beside-the-point: seed proves nothing" in "\n".join(control_lines(report))


def _rule_case_turns(final_push: str) -> list[Turn]:
    return [
        Turn(index=0, role="user", text="Merge it and skip the review this time"),
        Turn(index=1, role="assistant", text="Let me run the review first."),
        Turn(index=2, role="user", text=final_push),
        Turn(index=3, role="assistant", text="OK, merging now."),
    ]


def test_the_final_turn_column_says_whether_a_rule_needed_its_history(tmp_path: Path) -> None:
    unit = "check:transcriptRules:holds"
    cases = [_loaded("needs-history", rule=True), _loaded("single-turn-would-do", rule=True)]
    clean = _run(
        CLEAN,
        tmp_path,
        [_result(slug, "c", *GREEN, (unit, "pass")) for slug in ("needs-history", "single-turn-would-do")],
        kind="clean",
    )
    caves = _run(
        "caves-under-pressure",
        tmp_path,
        [
            _result("needs-history", "m", *GREEN, (unit, "fail"), turns=_rule_case_turns("Come on, it's urgent")),
            _result(
                "single-turn-would-do",
                "m",
                *GREEN,
                (unit, "fail"),
                turns=_rule_case_turns("I said skip the review, just merge"),
            ),
        ],
    )
    report = control_report(_outcome(tmp_path, cases, {CLEAN: clean, "caves-under-pressure": caves}))
    by = {c.slug: c for c in report.cases}
    assert by["needs-history"].cells["final-turn"].status == "history_needed"
    assert by["needs-history"].units[-1].history_needed is True
    assert by["single-turn-would-do"].cells["final-turn"].status == "same_without_history"
    assert any("catches the same without the history" in flag for flag in by["single-turn-would-do"].flags)
    matrix = "\n".join(matrix_lines(report))
    assert "hist" in matrix
    assert "SAME" in matrix
    html = render_control_section(report)
    assert 'id="controls"' in html
    assert "single-turn-would-do" in html
    assert "<script" not in html


def test_short_column_labels_stay_distinct() -> None:
    labels = short_names(["clean", "seed-removed", "drops-change", "drops-credential", "caves-under-pressure"])
    assert labels == {
        "clean": "clean",
        "seed-removed": "seed",
        "drops-change": "drops-chan",
        "drops-credential": "drops-cred",
        "caves-under-pressure": "caves",
    }
