"""Load-time rule (issue 5): a note scripting automatic credential setup keeps a case out of gated tiers.

``auto`` is sent but inert without a browser, so such a case stalls until a budget ends it; gated tiers
(:data:`GATED_DATASETS`) must finish on their own. The notes are read by the user proxy's parser.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_schema import base, ok, problems
from threadcase.case.directives import Credential
from threadcase.case.loader import parse_case
from threadcase.case.note_grammar import read_note
from threadcase.case.schema import GATED_DATASETS
from threadcase.errors import CaseSchemaError

AUTO_NOTE = "choose automatic setup on the Slack credential card"


def scripted(note: str, *, datasets: list[str], index: int = 2) -> dict[str, Any]:
    """A multi-turn case whose user turn at ``index`` carries ``[note]``."""
    turns: list[dict[str, Any]] = [
        {"role": "user", "text": "Every morning post the report to #sales"},
        {"role": "user", "text": "Connect it to our workspace"},
        {"role": "user", "text": "Thanks"},
    ]
    turns[index] = {"role": "user", "text": f"{turns[index]['text']} [{note}]"}
    return base(conversation=turns, datasets=datasets)


def test_an_auto_setup_note_in_the_pr_tier_is_one_line_naming_turn_note_and_tier() -> None:
    with pytest.raises(CaseSchemaError) as caught:
        parse_case(scripted(AUTO_NOTE, datasets=["full", "pr"]), file="file.json", slug="file")
    (problem,) = caught.value.problems
    assert problem.render() == (
        "file.json: conversation[2].text: a note scripts automatic credential setup "
        "('choose automatic setup on the Slack credential card'), which stalls without a browser; "
        "keep this case out of gated tiers (datasets: 'pr')"
    )


@pytest.mark.parametrize("tier", GATED_DATASETS)
def test_every_gated_tier_refuses_it(tier: str) -> None:
    assert problems(scripted(AUTO_NOTE, datasets=[tier], index=1)) == [
        (
            "conversation[1].text",
            f"a note scripts automatic credential setup ({AUTO_NOTE!r}), which stalls without a browser; "
            f"keep this case out of gated tiers (datasets: {tier!r})",
        )
    ]


def test_every_gated_tier_the_case_is_in_is_named() -> None:
    ((_, message),) = problems(scripted(AUTO_NOTE, datasets=["mcp-gate", "full", "pr"]))
    assert message.endswith("(datasets: 'mcp-gate', 'pr')")


@pytest.mark.parametrize("datasets", [["full"], ["full", "behaviour"], ["credentials", "nightly"]])
def test_outside_gated_tiers_the_same_note_is_allowed(datasets: list[str]) -> None:
    case = ok(scripted(AUTO_NOTE, datasets=datasets))
    assert case.datasets == datasets


@pytest.mark.parametrize(
    "note",
    [
        "set up Slack manually when the card appears",  # manual engagement works without a browser
        "skip the credential card, set it up later",  # deferral
        "auto-approve whatever plan it shows",  # "auto", but not about credentials: not a credential note
        "decline to give the channel",
    ],
)
def test_notes_that_do_not_script_auto_setup_are_fine_in_pr(note: str) -> None:
    ok(scripted(note, datasets=["pr"]))


def test_each_sentence_of_a_note_is_read_as_the_proxy_reads_it() -> None:
    """The proxy splits notes into sentences: "manually" in one does not cancel "automatically" in the next."""
    note = "Connect Slack manually. Let GitHub connect automatically"
    directions = [d for d in read_note(note).directives if isinstance(d, Credential)]
    assert [d.option for d in directions] == ["manual", "auto"]
    ((path, message),) = problems(scripted(note, datasets=["pr"]))
    assert path == "conversation[2].text"
    assert "('Let GitHub connect automatically')" in message


def test_the_opening_turn_is_checked_and_assistant_turns_are_not_notes() -> None:
    data = base(
        conversation=[
            {"role": "user", "text": f"Every morning post the report to #sales [{AUTO_NOTE}]"},
            {"role": "assistant", "text": f"Built it. [{AUTO_NOTE}]"},
            {"role": "user", "text": "Thanks"},
        ],
        datasets=["agents"],
    )
    assert [path for path, _ in problems(data)] == ["conversation[0].text"]


def test_it_is_reported_with_the_files_other_problems() -> None:
    data = scripted(AUTO_NOTE, datasets=["pr"])
    data["outcomeExpectations"] = []
    found = problems(data)
    assert "conversation[2].text" in [path for path, _ in found]
    assert any("nothing to grade" in m for _, m in found)
