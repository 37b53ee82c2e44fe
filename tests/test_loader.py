"""Finding, parsing and selecting case files: every problem of every file at once, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.loop_turns import loop_turns
from threadcase.case import loader
from threadcase.case.loader import (
    DEFAULT_SUITE,
    LoadedCase,
    default_suite_path,
    load_case_file,
    load_suite,
    load_suite_cooperatively,
    parse_case,
    select_cases,
)
from threadcase.errors import CaseSchemaError

FIXTURES = Path(__file__).parent / "cases"
EXAMPLES = Path(__file__).parent.parent / "cases" / "examples"


def write(directory: Path, name: str, data: Any) -> Path:
    path = directory / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def case(text: str = "Build it.", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "conversation": [{"role": "user", "text": text}],
        "complexity": "simple",
        "tags": ["t"],
        "outcomeExpectations": ["built"],
    }
    data.update(overrides)
    return data


def test_n8n_format_files_load_unchanged() -> None:
    loaded = load_suite([FIXTURES / "valid"])
    assert [c.slug for c in loaded] == sorted(p.stem for p in (FIXTURES / "valid").glob("*.json"))
    by_slug = {c.slug: c for c in loaded}
    seeded = by_slug["inline-seed-attach"].case
    assert seeded.inline_seed is not None
    assert seeded.inline_seed.messages[1]["metadata"] == {"kept": "unknown envelope keys are kept"}
    assert by_slug["director-multi-turn"].case.conversation[2].text.startswith("[Once the first version is built")
    assert by_slug["credentials-card"].case.credentials[1].description == "second workspace"
    assert by_slug["single-prompt-webhook"].case.mode == "single-prompt"


def test_bundled_examples_are_valid() -> None:
    assert len(load_suite([EXAMPLES])) >= 4


@pytest.mark.parametrize("suite", [EXAMPLES, EXAMPLES.parent / "golden", FIXTURES / "valid", FIXTURES / "behaviour"])
def test_the_shipped_cases_hold_no_note_the_scripted_user_cannot_follow(suite: Path) -> None:
    """The examples and the golden suite use the documented note grammar: no warning at all."""
    assert [w.render() for c in load_suite([suite]) for w in c.warnings] == []


def test_loading_warns_about_an_opening_note_and_a_note_nobody_can_follow(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "noted.json",
        case(
            "Post the digest to #ops [decline if asked for the channel]",
            conversation=[
                {"role": "user", "text": "Post the digest to #ops [decline if asked for the channel]"},
                {"role": "user", "text": "[Wink at the agent twice.] Thanks"},
                {"role": "user", "text": "[When asked for the channel, answer #ops.]"},
            ],
        ),
    )
    (loaded,) = load_suite([path])
    rendered = [w.render() for w in loaded.warnings]
    assert len(rendered) == 2
    opening, unknown = rendered
    assert opening.startswith(f'{path}: conversation[0].text: note "decline if asked for the channel" is in the ')
    assert "sent to the builder as written" in opening
    assert unknown.startswith(
        f'{path}: conversation[1].text: the scripted user cannot follow note "Wink at the agent twice.": '
        "'Wink at the agent twice' (no directive matches these words)"
    )
    assert "It understands: answer a question with a value, decline a detail" in unknown


def test_old_format_files_fail_naming_the_retired_key() -> None:
    with pytest.raises(CaseSchemaError) as info:
        load_suite([FIXTURES / "invalid" / "old-build-expectations.json", FIXTURES / "invalid" / "old-seed-file.json"])
    rendered = [p.render() for p in info.value.problems]
    assert any("old-build-expectations.json: buildExpectations: " in line for line in rendered)
    assert any("old-seed-file.json: seedFile: 'seedFile' is no longer supported" in line for line in rendered)


def test_json_syntax_error_names_line_and_column() -> None:
    with pytest.raises(CaseSchemaError) as info:
        load_case_file(FIXTURES / "invalid" / "syntax-error.json")
    (problem,) = info.value.problems
    assert (problem.line, problem.column) == (4, 3)
    assert problem.case == "syntax-error"
    assert problem.render().endswith("syntax-error.json:4:3: invalid JSON at line 4, column 3: Expecting ',' delimiter")


def test_load_case_file_returns_slug_path_and_case(tmp_path: Path) -> None:
    path = write(tmp_path, "my-case.json", case())
    loaded = load_case_file(path)
    assert loaded == LoadedCase(slug="my-case", path=path, case=loaded.case)
    assert loaded.case.complexity == "simple"


def test_problems_name_file_and_case(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.json", case(complexity="hard"))
    with pytest.raises(CaseSchemaError) as info:
        load_case_file(path)
    (problem,) = info.value.problems
    assert problem.file == str(path)
    assert problem.case == "broken"
    assert problem.path == "complexity"
    assert problem.render() == f"{path}: complexity: 'hard' is not allowed; expected 'simple', 'medium' or 'complex'"


def test_top_level_must_be_an_object_and_text_must_be_utf8(tmp_path: Path) -> None:
    write(tmp_path, "list.json", "[1, 2]")
    (tmp_path / "latin1.json").write_bytes('{"description": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(CaseSchemaError) as info:
        load_suite([tmp_path])
    messages = {Path(p.file).name: p.message for p in info.value.problems}
    assert messages["list.json"] == "a case file holds one JSON object, not a list"
    assert "not UTF-8 text" in messages["latin1.json"]


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(case()).encode())
    assert load_case_file(tmp_path / "bom.json").slug == "bom"


def test_suite_collects_every_problem_of_every_file(tmp_path: Path) -> None:
    write(tmp_path, "a-good.json", case())
    write(tmp_path, "b-bad.json", case(complexity="hard", messageBudget=0))
    write(tmp_path, "c-syntax.json", "{")
    write(tmp_path, "d-rules.json", case(conversation=[{"role": "user", "text": "[unclosed"}]))
    with pytest.raises(CaseSchemaError) as info:
        load_suite([tmp_path])
    found = {(Path(p.file).name, p.path) for p in info.value.problems}
    assert found == {
        ("b-bad.json", "complexity"),
        ("b-bad.json", "messageBudget"),
        ("c-syntax.json", ""),
        ("d-rules.json", "conversation[0].text"),
    }
    assert "(and 3 more)" in str(info.value)


def test_directories_are_sorted_flat_and_json_only(tmp_path: Path) -> None:
    write(tmp_path, "b.json", case())
    write(tmp_path, "a.json", case())
    write(tmp_path, "notes.md", "not a case")
    (tmp_path / "nested").mkdir()
    write(tmp_path / "nested", "c.json", case())
    assert [c.slug for c in load_suite([tmp_path])] == ["a", "b"]
    # Files and directories mix, in the order given; the same file twice is one case.
    mixed = load_suite([tmp_path / "nested" / "c.json", tmp_path, tmp_path / "a.json"])
    assert [c.slug for c in mixed] == ["c", "a", "b"]


def test_missing_paths_empty_directories_and_duplicate_slugs(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    write(tmp_path / "one", "same.json", case())
    write(tmp_path / "two", "same.json", case())
    with pytest.raises(CaseSchemaError) as info:
        load_suite([tmp_path / "nope", tmp_path / "empty", tmp_path / "one", tmp_path / "two"])
    messages = [p.render() for p in info.value.problems]
    assert any(m.endswith("nope: no such file or directory") for m in messages)
    assert any(m.endswith("empty: no case files (*.json) in this directory") for m in messages)
    assert any("slug 'same' is already taken by" in m for m in messages)
    with pytest.raises(CaseSchemaError, match="no case files or directories given"):
        load_suite([])


def loaded_suite(tmp_path: Path) -> list[LoadedCase]:
    write(tmp_path, "webhook-build.json", case(tags=["build", "webhook"], datasets=["full", "pr"]))
    write(tmp_path, "webhook-behaviour.json", case(tags=["behaviour"], datasets=["behaviour"]))
    write(tmp_path, "schedule-build.json", case(tags=["build"], datasets=["full"]))
    return load_suite([tmp_path])


def slugs(selected: list[LoadedCase]) -> list[str]:
    return [c.slug for c in selected]


def test_select_by_filter_and_exclude(tmp_path: Path) -> None:
    cases = loaded_suite(tmp_path)
    assert slugs(select_cases(cases)) == ["schedule-build", "webhook-behaviour", "webhook-build"]
    assert slugs(select_cases(cases, filter="webhook")) == ["webhook-behaviour", "webhook-build"]
    assert slugs(select_cases(cases, filter="schedule, behaviour")) == ["schedule-build", "webhook-behaviour"]
    assert slugs(select_cases(cases, filter="webhook", exclude="behaviour")) == ["webhook-build"]
    assert slugs(select_cases(cases, exclude="build,behaviour")) == []
    assert slugs(select_cases(cases, filter=" , ")) == slugs(cases)


def test_select_by_tier_and_tag(tmp_path: Path) -> None:
    cases = loaded_suite(tmp_path)
    assert [c.slug for c in select_cases(cases, tier="pr")] == ["webhook-build"]
    assert [c.slug for c in select_cases(cases, tier="full")] == ["schedule-build", "webhook-build"]
    assert [c.slug for c in select_cases(cases, tag="behaviour,webhook")] == ["webhook-behaviour", "webhook-build"]
    assert [c.slug for c in select_cases(cases, tier="full", tag="webhook", filter="build")] == ["webhook-build"]
    assert select_cases(cases, tier="nightly") == []


def test_default_suite_path_and_its_environment_twin() -> None:
    assert Path("cases/golden") == DEFAULT_SUITE
    assert default_suite_path({}) == DEFAULT_SUITE
    assert default_suite_path({"THREADCASE_SUITE": "  "}) == DEFAULT_SUITE
    assert default_suite_path({"THREADCASE_SUITE": "/srv/team-suite"}) == Path("/srv/team-suite")


def test_default_suite_path_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADCASE_SUITE", "private/suite")
    assert default_suite_path() == Path("private/suite")


def test_a_copied_fixture_directory_round_trips(tmp_path: Path) -> None:
    """The loader reads files, not the fixture location: a copied suite loads the same cases."""
    shutil.copytree(FIXTURES / "valid", tmp_path / "suite")
    original = {c.slug: c.case for c in load_suite([FIXTURES / "valid"])}
    copied = {c.slug: c.case for c in load_suite([tmp_path / "suite"])}
    assert copied == original


def test_a_dumped_case_parses_back_to_the_same_case() -> None:
    """Journals and replay tooling store cases by alias; what they store must load again unchanged."""
    for loaded in load_suite([FIXTURES / "valid"]):
        dumped = json.loads(loaded.case.model_dump_json(by_alias=True, exclude_none=True))
        assert parse_case(dumped, file=str(loaded.path)) == loaded.case


def test_the_default_suite_and_calibration_set_are_found_outside_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: run/validate with no arguments outside the repository looked for ``cases/golden``
    in the working directory only, and the wheel shipped neither it nor the calibration set."""
    import threadcase.case.loader as loader

    repo_cases = Path(__file__).parent.parent / "cases"
    monkeypatch.delenv("THREADCASE_SUITE", raising=False)
    monkeypatch.chdir(tmp_path)
    # A source checkout (editable install): the repository's own files.
    assert loader.default_suite_path().resolve() == (repo_cases / "golden").resolve()
    calibration = Path("cases/calibration/demo.jsonl")
    assert loader.bundled_path(calibration).resolve() == (repo_cases / "calibration" / "demo.jsonl").resolve()
    # An installed wheel: the copy force-included under threadcase/_bundled wins over the checkout.
    bundled = tmp_path / "site" / "_bundled"
    (bundled / "golden").mkdir(parents=True)
    write(bundled / "golden", "only.json", case())
    monkeypatch.setattr(loader, "_BUNDLED", bundled)
    assert loader.default_suite_path() == bundled / "golden"
    assert [c.slug for c in load_suite([loader.default_suite_path()])] == ["only"]
    # The working directory's own cases/ always comes first, and an explicit path is never redirected.
    (tmp_path / "cases" / "golden").mkdir(parents=True)
    write(tmp_path / "cases" / "golden", "mine.json", case())
    assert loader.default_suite_path() == Path("cases/golden")
    assert loader.bundled_path(Path("elsewhere/golden")) == Path("elsewhere/golden")
    monkeypatch.setattr(loader, "_SOURCE_ROOT", tmp_path / "nowhere")
    assert loader.bundled_path(calibration) == calibration  # nothing anywhere: the documented path, for the error


@pytest.mark.anyio
async def test_cooperative_loading_is_the_same_load_with_room_for_other_tasks(tmp_path: Path) -> None:
    for index in range(5 * loader.FILES_PER_STEP):
        write(tmp_path, f"case-{index:02d}.json", case(f"Build {index}."))
    async with loop_turns() as turns:
        before = turns()
        loaded = await load_suite_cooperatively([tmp_path])
        during = turns() - before
    assert [c.slug for c in loaded] == [c.slug for c in load_suite([tmp_path])]
    assert [c.case for c in loaded] == [c.case for c in load_suite([tmp_path])]
    assert during >= 4  # the other task ran between the steps, not only once the load was done

    write(tmp_path, "broken.json", "{")
    with pytest.raises(CaseSchemaError, match="broken"):
        await load_suite_cooperatively([tmp_path])
