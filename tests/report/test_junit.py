"""junit.xml is written as text: byte for byte what the ElementTree original made of the same results."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

import pytest

from tests.report.factory import result
from threadcase.report.junit import render_junit
from threadcase.verdicts import CaseResult, ErrorInfo

WEIRD = "a&b <c> \"d\" 'e'\r\n\tf ]]> \x0b é — ✓"


def _name(unit: str, iteration: int, iterations: int) -> str:
    return f"{unit} [iteration {iteration}]" if iterations > 1 else unit


def _tree_junit(results: Sequence[CaseResult], *, suite_name: str = "threadcase") -> str:
    """The original renderer (ElementTree, then ET.indent and ET.tostring), kept as the oracle."""
    by_case: dict[str, list[CaseResult]] = {}
    for result_ in results:
        by_case.setdefault(result_.case_slug, []).append(result_)
    root = ET.Element("testsuites", name=suite_name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for slug, runs in by_case.items():
        iterations = len({r.iteration for r in runs})
        suite = ET.SubElement(root, "testsuite", name=slug)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for run in sorted(runs, key=lambda r: r.iteration):
            seconds += run.seconds
            share = run.seconds / max(1, len(run.verdicts))
            if run.error is not None and not run.verdicts:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=slug,
                    name=_name("case", run.iteration, iterations),
                    time=f"{share:.3f}",
                )
                error = ET.SubElement(case, "error", type=run.error.type, message=run.error.message)
                error.text = f"{run.error.type}: {run.error.message} (attribution: {run.error.attribution})"
                counts["tests"] += 1
                counts["errors"] += 1
                continue
            for verdict in run.verdicts:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=slug,
                    name=_name(verdict.unit, run.iteration, iterations),
                    time=f"{share:.3f}",
                )
                counts["tests"] += 1
                props = ET.SubElement(case, "properties")
                ET.SubElement(props, "property", name="label", value=verdict.label)
                if verdict.attribution:
                    ET.SubElement(props, "property", name="attribution", value=verdict.attribution)
                if verdict.status == "fail":
                    failure = ET.SubElement(
                        case, "failure", type=verdict.attribution or "builder_issue", message=verdict.reason
                    )
                    failure.text = f"{verdict.label}\n{verdict.reason}"
                    counts["failures"] += 1
                elif verdict.status in ("not_judged", "reviewed"):
                    prefix = "not judged" if verdict.status == "not_judged" else "review (never counted as passed)"
                    ET.SubElement(case, "skipped", message=f"{prefix}: {verdict.reason}")
                    counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{seconds:.3f}")
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _weird(r: CaseResult) -> CaseResult:
    verdicts = [v.model_copy(update={"label": WEIRD + v.label, "reason": WEIRD}) for v in r.verdicts]
    return r.model_copy(update={"verdicts": verdicts})


RUNS: dict[str, list[CaseResult]] = {
    "nothing": [],
    "mixed": [
        result("alpha", 0, ("pass", "pass")),
        result("beta", 0, ("pass", "fail")),
        result("gamma", 0, ("not_judged", "reviewed")),
        result("delta", 0, (), error=ErrorInfo(type="InstanceError", message="503 from /rest/x"), with_record=False),
    ],
    "iterations": [result("a", 0), result("b", 0, ("fail",)), result("a", 1, ("not_judged",)), result("a", 2)],
    "escaping": [
        _weird(result('w&<>"eird slug', 0, ("pass", "fail", "not_judged", "reviewed"))),
        result('w&<>"eird slug', 1, ("fail",)),
        result("err", 0, (), error=ErrorInfo(type="Type<&>", message=WEIRD), with_record=False),
    ],
    "no unit and no error": [result("empty", 0, (), with_record=False), result("empty", 1, (), with_record=False)],
    "an error beside units": [result("both", 0, ("pass",), error=ErrorInfo(type="X", message="m"), seconds=0.0)],
}


@pytest.mark.parametrize("name", list(RUNS))
def test_junit_text_is_what_elementtree_wrote(name: str) -> None:
    assert render_junit(RUNS[name]) == _tree_junit(RUNS[name])
    assert render_junit(RUNS[name], suite_name=WEIRD) == _tree_junit(RUNS[name], suite_name=WEIRD)
