"""``junit.xml``: one testcase per unit per case-iteration, for CI dashboards.

Mapping: pass -> passed; fail -> ``<failure>``; not judged and reviewed -> ``<skipped>`` with the
reason (a CI system must never show an unjudged unit as green); a case-iteration that errored
before any unit was graded -> one ``<error>`` testcase carrying the error.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from threadcase.harness.verdicts import CaseResult

__all__ = ["render_junit"]


def _name(unit: str, iteration: int, iterations: int) -> str:
    return f"{unit} [iteration {iteration}]" if iterations > 1 else unit


def render_junit(results: Sequence[CaseResult], *, suite_name: str = "threadcase") -> str:
    """The JUnit XML document for ``results`` (ElementTree escapes every value)."""
    by_case: dict[str, list[CaseResult]] = {}
    for result in results:
        by_case.setdefault(result.case_slug, []).append(result)
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
                ET.SubElement(case, "properties")
                props = case.find("properties")
                assert props is not None
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
