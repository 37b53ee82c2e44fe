"""Find, parse, validate and select case files.

A suite is a directory of ``*.json`` files, one case each; a case's slug is its file name without
``.json``. Loading collects **every** problem of every file (JSON syntax with line and column, schema
violations with their JSON path and the offending value) into one
:class:`~threadcase.errors.CaseSchemaError`, so one ``threadcase validate`` shows all there
is to fix. Nothing here prints or exits: the CLI renders the problems.
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import re
import stat
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.lowlevel
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from threadcase.case.base import RULES_ERROR_TYPE, VALUE_ERROR_TYPE
from threadcase.case.schema import FORBIDDEN_KEYS, Case, case_warnings
from threadcase.errors import CaseProblem, CaseSchemaError

__all__ = [
    "DEFAULT_SUITE",
    "SUITE_ENV",
    "LoadedCase",
    "bundled_path",
    "default_suite_path",
    "load_case_file",
    "load_suite",
    "load_suite_cooperatively",
    "parse_case",
    "problems_from_validation_error",
    "select_cases",
]

DEFAULT_SUITE = Path("cases/golden")
"""The suite the demo instance must pass; relative to the working directory, with a fallback to the
copy shipped with the package (see :func:`bundled_path`)."""

_BUNDLED = Path(__file__).resolve().parent.parent / "_bundled"
"""Where the wheel carries ``cases/`` (hatch ``force-include``: the repository's files, not copies)."""
_SOURCE_ROOT = Path(__file__).resolve().parents[3]
"""The repository root when running from a source checkout (an editable install)."""

SUITE_ENV = "THREADCASE_SUITE"
"""Environment twin of ``--suite``: a team keeps its private suite outside the repository this way."""


@dataclass(frozen=True)
class LoadedCase:
    """A validated case and where it came from."""

    slug: str
    """The file name without ``.json``; unique within a loaded suite."""
    path: Path
    """The case file."""
    case: Case
    """The validated case."""
    warnings: tuple[CaseProblem, ...] = ()
    """What loads but may not test what was meant: director notes in the opening turn, notes the
    scripted user cannot follow (``threadcase validate`` prints them)."""


def bundled_path(relative: Path) -> Path:
    """A default under ``cases/`` (``cases/golden``, ``cases/calibration/demo.jsonl``), found wherever it is.

    The working directory's copy first (a repository checkout, or a team's own ``cases/``); else the
    one shipped inside the installed package; else the source checkout of an editable install. When
    none exists, ``relative`` itself, so the error names the documented path.
    """
    if relative.exists() or relative.is_absolute() or relative.parts[:1] != ("cases",):
        return relative
    for candidate in (_BUNDLED.joinpath(*relative.parts[1:]), _SOURCE_ROOT / relative):
        if candidate.exists():
            return candidate
    return relative


def default_suite_path(environ: Mapping[str, str] | None = None) -> Path:
    """``THREADCASE_SUITE`` when set (and not blank), else :data:`DEFAULT_SUITE` (via :func:`bundled_path`)."""
    value = (os.environ if environ is None else environ).get(SUITE_ENV, "").strip()
    return Path(value) if value else bundled_path(DEFAULT_SUITE)


def load_case_file(path: Path) -> LoadedCase:
    """Read and validate one case file; raises :class:`CaseSchemaError` with every problem found."""
    loaded, problems = _load(Path(path))
    if loaded is None:
        raise CaseSchemaError(problems)
    return loaded


def load_suite(paths: Sequence[Path]) -> list[LoadedCase]:
    """Load case files and directories of them (``*.json``, sorted, not recursive), in the order given.

    Raises one :class:`CaseSchemaError` carrying the problems of all files: missing paths, empty
    directories, duplicate slugs, invalid JSON, schema violations.
    """
    loading = _loading(paths)
    while (loaded := _advance(loading)) is None:
        pass
    return loaded


FILES_PER_STEP = 8
"""Case files :func:`load_suite_cooperatively` reads between two checkpoints (~0.4 ms of work)."""


async def load_suite_cooperatively(paths: Sequence[Path]) -> list[LoadedCase]:
    """:func:`load_suite` on the event loop, letting other tasks run every :data:`FILES_PER_STEP` files.

    The runner loads the suite while it logs in to its instances: their round trips are answered
    between two steps, so neither waits for the other. Not a worker thread: loading is pure Python and
    would hold the GIL against the loop for its whole switch interval at a time.
    """
    loading = _loading(paths)
    while (loaded := _advance(loading)) is None:
        await anyio.lowlevel.checkpoint()
    return loaded


def _advance(loading: Generator[None, None, list[LoadedCase]]) -> list[LoadedCase] | None:
    """One step of a loading: None while it goes on, the cases once it is done."""
    try:
        next(loading)
    except StopIteration as done:
        loaded: list[LoadedCase] = done.value
        return loaded
    return None


def _loading(paths: Sequence[Path]) -> Generator[None, None, list[LoadedCase]]:
    """The loading of a suite, pausing (yielding) after every :data:`FILES_PER_STEP` case files."""
    problems: list[CaseProblem] = []
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        try:
            is_dir = stat.S_ISDIR(path.stat().st_mode)
        except FileNotFoundError:
            problems.append(CaseProblem(str(path), "", "no such file or directory"))
            continue
        except OSError as exc:  # a symlink loop, a directory we may not enter
            problems.append(CaseProblem(str(path), "", f"cannot read it: {_why(exc)}"))
            continue
        if is_dir:
            found, unreadable = _case_files(path)
            problems.extend(unreadable)
            if not found and not unreadable:
                problems.append(CaseProblem(str(path), "", "no case files (*.json) in this directory"))
            files.extend(found)
        else:
            # A regular file, or a pipe or device named on purpose (`validate <(jq . case.json)`, /dev/stdin):
            # read like a file.
            files.append(path)
    if not paths:
        problems.append(CaseProblem("<suite>", "", "no case files or directories given"))

    loaded: list[LoadedCase] = []
    seen_files: set[Path] = set()
    by_slug: dict[str, Path] = {}
    for index, file in enumerate(files):
        if index and index % FILES_PER_STEP == 0:
            yield
        # absolute(), not resolve(): no syscalls per file, and a path named twice is still caught.
        resolved = file.absolute()
        if resolved in seen_files:
            continue  # the same file named twice (a file and its directory) is one case
        seen_files.add(resolved)
        case, file_problems = _load(file)
        problems.extend(file_problems)
        slug = _slug(file)
        if slug in by_slug:
            problems.append(
                CaseProblem(
                    str(file), "", f"slug {slug!r} is already taken by {by_slug[slug]}; rename one file", case=slug
                )
            )
            continue
        by_slug[slug] = file
        if case is not None:
            loaded.append(case)
    if problems:
        raise CaseSchemaError(problems)
    return loaded


def select_cases(
    cases: Sequence[LoadedCase],
    *,
    filter: str | None = None,
    exclude: str | None = None,
    tier: str | None = None,
    tag: str | None = None,
) -> list[LoadedCase]:
    """Keep the cases the selection flags pick, in their order.

    ``filter`` and ``exclude`` are comma-separated substrings of the slug (a case matches if any one
    does); ``exclude`` applies after ``filter``. ``tier`` must be one of the case's ``datasets``;
    ``tag`` (comma-separated, any one) one of its ``tags``.
    """
    wanted = _parts(filter)
    unwanted = _parts(exclude)
    tags = _parts(tag)
    tier = tier.strip() if tier else None
    selected = []
    for loaded in cases:
        if wanted and not any(part in loaded.slug for part in wanted):
            continue
        if unwanted and any(part in loaded.slug for part in unwanted):
            continue
        if tier and tier not in loaded.case.datasets:
            continue
        if tags and not any(t in loaded.case.tags for t in tags):
            continue
        selected.append(loaded)
    return selected


def _case_files(directory: Path) -> tuple[list[Path], list[CaseProblem]]:
    """The directory's ``*.json`` regular files (sorted), and a problem for each that cannot be looked at."""
    problems: list[CaseProblem] = []
    names: list[str] = []
    try:
        # scandir's entries know their type without a stat per file: 5,000 files load in a blink.
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.name.endswith(".json"):
                    continue
                try:
                    if entry.is_file():
                        names.append(entry.name)
                except OSError as exc:  # a symlink loop: is_file follows it and fails
                    problems.append(CaseProblem(str(directory / entry.name), "", f"cannot read it: {_why(exc)}"))
    except OSError as exc:
        problems.append(CaseProblem(str(directory), "", f"cannot list the directory: {_why(exc)}"))
    return [directory / name for name in sorted(names)], problems


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop (too many levels of symbolic links); point the link at a real file"
    return str(exc.strerror or exc)


def _parts(value: str | None) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()] if value else []


def _slug(path: Path) -> str:
    return path.name[: -len(".json")] if path.name.endswith(".json") else path.stem


def _load(path: Path) -> tuple[LoadedCase | None, list[CaseProblem]]:
    slug = _slug(path)
    file = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CASE_BYTES + 1)
    except OSError as exc:
        return None, [CaseProblem(file, "", f"cannot read the file: {_why(exc)}", case=slug)]
    if len(raw) > MAX_CASE_BYTES:
        return None, [
            CaseProblem(file, "", f"larger than {MAX_CASE_BYTES // 2**20} MiB; a case file is a few KiB", case=slug)
        ]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [CaseProblem(file, "", f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", case=slug)]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        return None, [CaseProblem(file, "", message, case=slug, line=exc.lineno, column=exc.colno)]
    except (ValueError, RecursionError) as exc:
        # Valid JSON syntax the parser still refuses: nesting deeper than the interpreter's stack,
        # or an integer longer than Python converts (4300 digits). Neither is a case anyone meant.
        if isinstance(exc, RecursionError):
            why = "nested too deeply for the parser; flatten the structure"
        elif "integer string conversion" in str(exc):
            why = "an integer has more digits than Python reads (4300); write it as a string"
        else:
            why = _first_sentence(str(exc))
        message = f"invalid JSON: {why}"
        return None, [CaseProblem(file, "", message, case=slug)]
    if _SURROGATE_ESCAPE.search(text):
        lone = _lone_surrogates(data, file=file, slug=slug)
        if lone:
            return None, lone
    try:
        case = parse_case(data, file=file, slug=slug)
    except CaseSchemaError as exc:
        return None, exc.problems
    warnings = tuple(CaseProblem(file, where, message, case=slug) for where, message in case_warnings(case))
    return LoadedCase(slug=slug, path=path, case=case, warnings=warnings), []


MAX_CASE_BYTES = 64 * 2**20
"""A case file larger than this is refused unread (a device named by mistake must not fill the memory)."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: the only way a lone surrogate gets into a case (UTF-8 text cannot hold one)."""


def _lone_surrogates(data: Any, *, file: str, slug: str) -> list[CaseProblem]:
    """A problem for every string (value or key) holding half of a UTF-16 pair: it could be neither sent to
    an instance nor written to a journal, so it is refused here rather than crashing a run."""
    problems: list[CaseProblem] = []
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(data, ())]
    while stack and len(problems) < 10:
        value, loc = stack.pop()
        if isinstance(value, dict):
            for key, inner in value.items():
                if _has_surrogate(key):
                    problems.append(_surrogate_problem(key, loc, file, slug, in_key=True))
                stack.append((inner, (*loc, key)))
        elif isinstance(value, list):
            stack.extend((inner, (*loc, index)) for index, inner in enumerate(value))
        elif isinstance(value, str) and _has_surrogate(value):
            problems.append(_surrogate_problem(value, loc, file, slug, in_key=False))
    return sorted(problems, key=lambda p: p.path)


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


def _surrogate_problem(text: str, loc: tuple[int | str, ...], file: str, slug: str, *, in_key: bool) -> CaseProblem:
    position = next(i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff")
    what = "a key here" if in_key else "the text"
    message = (
        f"{what} holds a lone surrogate {text[position]!r} at character {position} (half of a UTF-16 pair, "
        "escaped as \\uD800-\\uDFFF); remove it, or write the whole character"
    )
    return CaseProblem(file, _path(loc), message, case=slug)


def parse_case(data: Any, *, file: str = "<case>", slug: str | None = None) -> Case:
    """Validate an already-parsed case document (camelCase keys, as in a file); raises :class:`CaseSchemaError`.

    ``file`` and ``slug`` only label the problems.
    """
    if not isinstance(data, dict):
        kind = _json_kind(data)
        raise CaseSchemaError([CaseProblem(file, "", f"a case file holds one JSON object, not {kind}", case=slug)])
    # Retired keys are reported next to every other problem of the file rather than alone: one
    # validate run should show an author everything to fix in an old-format file.
    retired = [
        CaseProblem(file, key, f"{key!r} is {FORBIDDEN_KEYS[key]}", case=slug) for key in data if key in FORBIDDEN_KEYS
    ]
    if retired:
        data = {key: value for key, value in data.items() if key not in FORBIDDEN_KEYS}
    try:
        # Aliases only: a file speaks n8n's camelCase; a snake_case key is as unknown as a typo.
        case = Case.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        found = problems_from_validation_error(exc, file=file, case=slug)
        found += _rules_despite(exc, data, file=file, slug=slug)
        raise CaseSchemaError([*retired, *found]) from None
    if retired:
        raise CaseSchemaError(retired)
    return case


# Top-level keys no cross-field rule of a case reads, with a stand-in value when the key is
# required (None: drop the key, its default applies). A field error in one of these alone would
# otherwise stop every cross-field rule from running (pydantic skips the model validator).
_INDEPENDENT_KEYS: dict[str, Any] = {
    "description": None,
    "complexity": "simple",
    "tags": [],
    "triggerType": None,
    "messageBudget": None,
    "credentials": None,
    "credentialFixture": None,
    "requiresMemoryCompaction": None,
    "buildMode": None,
    "promptVersion": None,
    "allowUserExecution": None,
}
_CASE_KEYS = frozenset(field.alias or name for name, field in Case.model_fields.items())


def _rules_despite(exc: ValidationError, data: dict[str, Any], *, file: str, slug: str | None) -> list[CaseProblem]:
    """The cross-field rule problems a field error hid, when that is safe to find out.

    Only when every field error sits in a key no cross-field rule reads (or an unknown key): those
    keys are stood in for and the case validated again, so a rule can never fire because of the
    stand-in. Otherwise nothing (a rule reading a broken field would report nonsense).
    """
    keys = set()
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        if not loc or error["type"] == RULES_ERROR_TYPE:
            return []
        key = str(loc[0])
        if key in _CASE_KEYS and key not in _INDEPENDENT_KEYS:
            return []
        keys.add(key)
    patched = {k: v for k, v in data.items() if k not in keys}
    for key in keys:
        if _INDEPENDENT_KEYS.get(key) is not None:
            patched[key] = _INDEPENDENT_KEYS[key]
    try:
        Case.model_validate(patched, by_alias=True, by_name=False)
    except ValidationError as again:
        if all(e["type"] == RULES_ERROR_TYPE for e in again.errors(include_url=False)):
            return problems_from_validation_error(again, file=file, case=slug)
    return []


# --- pydantic errors -> one line each ---------------------------------------------------------------


def problems_from_validation_error(exc: ValidationError, *, file: str, case: str | None = None) -> list[CaseProblem]:
    """Turn a pydantic error on a :class:`Case` into one :class:`CaseProblem` per broken rule."""
    problems: list[CaseProblem] = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        base = _path(loc)
        if error["type"] == RULES_ERROR_TYPE:
            for relative, message in error.get("ctx", {}).get("problems", []):
                problems.append(CaseProblem(file, _join(base, relative), message, case=case))
        else:
            problems.append(CaseProblem(file, base, _describe(error), case=case))
    return problems


def _path(loc: Iterable[int | str]) -> str:
    out = ""
    previous: int | str | None = None
    for part in loc:
        if previous == "seed" and part in ("inline", "replay"):
            previous = part
            continue  # the discriminator tag pydantic adds; not a key in the file
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() and len(part) <= 60:
            out += f".{part}" if out else part
        else:
            out += f"[{_q(part)}]"
        previous = part
    return out


def _join(base: str, relative: str) -> str:
    if not relative:
        return base
    if not base or relative.startswith("["):
        return base + relative
    return f"{base}.{relative}"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _q(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _describe(error: ErrorDetails) -> str:
    kind = error["type"]
    value = error.get("input")
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == VALUE_ERROR_TYPE:
        return str(ctx.get("message", error["msg"]))
    if kind == "missing":
        description = _description_at(error["loc"])
        hint = f" — {_first_sentence(description)}" if description else ""
        return f"required key is missing{hint}"
    if kind == "extra_forbidden":
        return _unknown_key(error["loc"])
    if kind == "literal_error":
        return f"{_q(value)} is not allowed; expected {ctx.get('expected', 'one of the listed values')}"
    if kind == "union_tag_invalid":
        return f"mode {ctx.get('tag')!r} is not valid; expected {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return "the seed needs a 'mode': 'inline' or 'replay'"
    if kind in _EXPECTED:
        return f"{_q(value)} is {_json_kind(value)}; expected {_EXPECTED[kind]}"
    if kind in ("too_short", "too_long"):
        size = len(value) if isinstance(value, list | dict | str) else ctx.get("actual_length")
        if kind == "too_short":
            return f"has {size} entries; at least {ctx.get('min_length')} required"
        return f"has {size} entries; at most {ctx.get('max_length')} allowed"
    if kind in ("greater_than", "greater_than_equal"):
        bound = ctx.get("gt", ctx.get("ge"))
        relation = "greater than" if kind == "greater_than" else "at least"
        return f"{_q(value)} is not allowed; it must be {relation} {bound}"
    return f"{_q(value)}: {error['msg']}"


def _first_sentence(text: str) -> str:
    return text.split("\n\n", 1)[0].replace("\n", " ").strip()


def _literal_values(model: type[BaseModel]) -> tuple[Any, ...]:
    return getattr(model.model_fields["mode"].annotation, "__args__", ())


def _model_of(annotation: Any) -> list[type[BaseModel]]:
    """The models a field annotation can hold (through list, Optional, union, Annotated)."""
    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            found.append(current)
        stack.extend(getattr(current, "__args__", ()) or ())
        origin = getattr(current, "__origin__", None)
        if origin is not None and origin is not current:
            stack.append(origin)
    return found


def _walk(loc: tuple[int | str, ...]) -> tuple[type[BaseModel] | None, str | None]:
    """The model a location points into, and the alias of the last key (None when not a key)."""
    models: list[type[BaseModel]] = [Case]
    last: str | None = None
    for index, part in enumerate(loc):
        if isinstance(part, int):
            continue
        is_last = index == len(loc) - 1
        if part in ("inline", "replay") and index > 0 and loc[index - 1] == "seed":
            models = [m for m in models if "mode" in m.model_fields and part in _literal_values(m)]
            continue
        owner = next((m for m in models if _by_alias(m, part) is not None), None)
        if is_last:
            return (owner or (models[0] if models else None)), part
        if owner is None:
            return None, None
        name = _by_alias(owner, part)
        assert name is not None
        models = _model_of(owner.model_fields[name].annotation)
        last = part
    return (models[0] if models else None), last


def _by_alias(model: type[BaseModel], alias: str) -> str | None:
    for name, info in model.model_fields.items():
        if (info.alias or name) == alias:
            return name
    return None


def _description_at(loc: tuple[int | str, ...]) -> str | None:
    model, key = _walk(loc)
    if model is None or key is None:
        return None
    name = _by_alias(model, key)
    return model.model_fields[name].description if name else None


def _unknown_key(loc: tuple[int | str, ...]) -> str:
    model, key = _walk(loc)
    key = str(loc[-1]) if loc else "?"
    if model is None:
        return f"unknown key {_q(key)}"
    valid = [info.alias or name for name, info in model.model_fields.items()]
    camel = next((v for v in valid if v.lower() == key.replace("_", "").lower()), None)
    # A key longer than any valid one is no typo of one (and comparing a 10 MB key would take minutes).
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.75) if len(key) <= 100 else []
    guess = camel or next(iter(close), None)
    if guess:
        return f"unknown key {_q(key)}; did you mean {guess!r}?"
    return f"unknown key {_q(key)}; valid keys here: {', '.join(valid)}"
