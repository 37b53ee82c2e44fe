"""``junit.xml``: one testcase per unit per case-iteration, for CI dashboards.

Mapping: pass -> passed; fail -> ``<failure>`` (but a failure the simulated user caused,
``proxy_issue``, is ``<skipped>``: it never counts against the agent); not judged and reviewed ->
``<skipped>`` with the reason (a CI system must never show an unjudged unit as green); a
case-iteration that errored before any unit was graded -> one ``<error>`` testcase carrying the error.

The document is written as text, byte for byte what ElementTree (``ET.indent`` then ``ET.tostring``)
made of the same elements: building and serialising a tree of every unit of a run was most of the
time of writing the reports. ``tests/report/test_junit.py`` holds the tree-built original as the oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

from threadcase.verdicts import CaseResult

__all__ = ["render_junit"]


def _name(unit: str, iteration: int, iterations: int) -> str:
    return f"{unit} [iteration {iteration}]" if iterations > 1 else unit


def _text(text: str) -> str:
    """Character data, escaped as ElementTree does."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def _attr(text: str) -> str:
    """An attribute value, escaped as ElementTree does (line ends and tabs as character references)."""
    text = _text(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


# Indentation of each level's children (ET.indent with two spaces).
_L1, _L2, _L3, _L4 = "\n  ", "\n    ", "\n      ", "\n        "


def _testcase(slug: str, name: str, time: str, children: list[str]) -> str:
    """One ``<testcase>`` element (it always has children), without its tail."""
    head = f'<testcase classname="{_attr(slug)}" name="{_attr(name)}" time="{time}">'
    return head + _L3 + _L3.join(children) + _L2 + "</testcase>"


def render_junit(results: Sequence[CaseResult], *, suite_name: str = "threadcase") -> str:
    """The JUnit XML document for ``results`` (every value escaped)."""
    by_case: dict[str, list[CaseResult]] = {}
    for result in results:
        by_case.setdefault(result.case_slug, []).append(result)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suites: list[str] = []
    for slug, runs in by_case.items():
        iterations = len({r.iteration for r in runs})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        cases: list[str] = []
        for run in sorted(runs, key=lambda r: r.iteration):
            seconds += run.seconds
            share = f"{run.seconds / max(1, len(run.verdicts)):.3f}"
            if run.error is not None and not run.verdicts:
                error = run.error
                text = f"{error.type}: {error.message} (attribution: {error.attribution})"
                element = f'<error type="{_attr(error.type)}" message="{_attr(error.message)}">{_text(text)}</error>'
                cases.append(_testcase(slug, _name("case", run.iteration, iterations), share, [element]))
                counts["tests"] += 1
                counts["errors"] += 1
                continue
            for verdict in run.verdicts:
                counts["tests"] += 1
                properties = [f'<property name="label" value="{_attr(verdict.label)}" />']
                if verdict.attribution:
                    properties.append(f'<property name="attribution" value="{_attr(verdict.attribution)}" />')
                children = ["<properties>" + _L4 + _L4.join(properties) + _L3 + "</properties>"]
                if verdict.status == "fail" and verdict.attribution == "proxy_issue":
                    # Caused by the simulated user: never a failure of the agent under test.
                    text = f"not judged: caused by the simulated user (proxy_issue): {verdict.reason}"
                    children.append(f'<skipped message="{_attr(text)}" />')
                    counts["skipped"] += 1
                elif verdict.status == "fail":
                    kind = _attr(verdict.attribution or "builder_issue")
                    text = _text(f"{verdict.label}\n{verdict.reason}")
                    children.append(f'<failure type="{kind}" message="{_attr(verdict.reason)}">{text}</failure>')
                    counts["failures"] += 1
                elif verdict.status in ("not_judged", "reviewed"):
                    prefix = "not judged" if verdict.status == "not_judged" else "review (never counted as passed)"
                    if verdict.attribution == "proxy_issue":
                        prefix += " (the simulated user's)"
                    children.append(f'<skipped message="{_attr(f"{prefix}: {verdict.reason}")}" />')
                    counts["skipped"] += 1
                cases.append(_testcase(slug, _name(verdict.unit, run.iteration, iterations), share, children))
        for key, value in counts.items():
            totals[key] += value
        head = f'<testsuite name="{_attr(slug)}"' + "".join(f' {k}="{v}"' for k, v in counts.items())
        head += f' time="{seconds:.3f}"'
        suites.append(f"{head}>{_L2}{_L2.join(cases)}{_L1}</testsuite>" if cases else f"{head} />")
    root = f'<testsuites name="{_attr(suite_name)}"' + "".join(f' {k}="{v}"' for k, v in totals.items())
    body = f"{root}>{_L1}{_L1.join(suites)}\n</testsuites>" if suites else f"{root} />"
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
