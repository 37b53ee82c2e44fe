"""A fuzz of case files: whatever bytes a case file holds, ``threadcase validate`` answers with one line
per problem (exit 2) or accepts it (exit 0) — never a traceback, never an internal error (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.reliability import VALID
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_cli_cases import run

# Text that stresses what a loader does with strings: control characters, lone surrogates, escapes,
# right-to-left marks, huge and empty values.
odd_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\n", "\udfff", "\ud800x", "\u202e", "\x00", "[", "]", "[[note]]", "\\", "é" * 50]),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    odd_text,
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(odd_text, inner, max_size=4)),
    max_leaves=12,
)
case_keys = st.sampled_from([*VALID, "seed", "credentials", "datasets", "executionScenarios", "attach", "x", "mode"])


@st.composite
def mutated_case(draw: st.DrawFn) -> bytes:
    """A valid case with a few keys replaced, removed or added, sometimes mangled at the byte level."""
    case: dict[str, Any] = json.loads(json.dumps(VALID))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        key = draw(case_keys)
        action = draw(st.sampled_from(["set", "drop", "nest"]))
        if action == "drop":
            case.pop(key, None)
        elif action == "nest":
            case[key] = {draw(odd_text): draw(json_value)}
        else:
            case[key] = draw(json_value)
    raw = json.dumps(case, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none", "truncate", "bytes", "deep", "bigint", "bom"]))
    if damage == "truncate":
        raw = raw[: draw(st.integers(min_value=0, max_value=len(raw)))]
    elif damage == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif damage == "deep":
        depth = draw(st.sampled_from([50, 5_000, 200_000]))
        raw = raw[:-1] + b', "checks": ' + b"[" * depth + b"]" * depth + b"}"
    elif damage == "bigint":
        raw = raw[:-1] + b', "messageBudget": ' + b"7" * 5000 + b"}"
    elif damage == "bom":
        raw = b"\xef\xbb\xbf" + raw
    return raw


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=mutated_case(), name=st.sampled_from(["case", "with space", "new\nline", "tab\tbed", "ünï"]))
def test_any_case_file_is_valid_or_one_line_per_problem(
    content: bytes, name: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path_factory.mktemp("fuzz")
    (suite / f"{name}.json").write_bytes(content)
    code, out, err = run(["validate", str(suite)], capsys)
    assert code in (0, 2), err
    assert "Traceback" not in err
    assert "internal error" not in err
    if code == 2:
        lines = err.strip().split("\n")
        assert lines
        for line in lines:
            assert line.startswith(str(suite)), line  # each problem names its file, on its own line
            assert len(line) <= 2000
    else:
        assert "1 case valid" in out


def test_the_valid_seed_case_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "case.json").write_text(json.dumps(VALID), encoding="utf-8")
    code, out, _ = run(["validate", str(tmp_path)], capsys)
    assert code == 0, out
