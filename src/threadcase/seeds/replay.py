"""Replay: reproduce a production thread from its LangSmith trace (or an exported trace file).

A replay case carries only a thread id. :func:`restore_replay_seed` pulls the thread's runs (from
LangSmith, see :mod:`.replay_langsmith`, or from ``<replay_dir>/<threadId>.json``), rebuilds the
turns before the live one and the artifacts the agent had built (:mod:`.replay_rebuild`, pure), and
restores them through the same path as an inline seed (:func:`threadcase.seeds.inline.restore_inline_seed`).
It returns the restored seed and the live user message, which the conversation loop sends as the
opening turn, followed by the case's own ``conversation`` turns.

Offline: :func:`export_replay` (``threadcase replay export THREAD_ID -o FILE``) writes an exported
file — the thread's redacted runs (only the fields the rebuild reads) plus the reconstruction of the
default live turn, for a person to read. With ``replay_dir`` set, a replay case reads
``<replay_dir>/<threadId>.json`` and nothing else: no network, the same rebuild byte for byte. A
demo instance's ``--trace-to`` JSONL is accepted in the same place (the thread's runs are picked out).

Privacy: the trace is someone's real conversation. Row values of data-table tools and node
credentials are redacted when the runs are read, before anything is restored or written; nothing
is ever written next to the case file; an exported file is the only thing written, and only where
its user says.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from threadcase.case.schema import InlineSeed, ReplaySeed
from threadcase.case.seed import SAFE_THREAD_ID
from threadcase.errors import ConfigError, ReplayError
from threadcase.seeds.replay_langsmith import DEFAULT_PROJECT, fetch_thread_runs, resolve_tenant
from threadcase.seeds.replay_rebuild import Reconstruction, TraceRun, normalize_runs, rebuild_thread

if TYPE_CHECKING:
    from threadcase.instance import InstanceClient
    from threadcase.seeds.inline import InstanceSnapshot, RestoredSeed

__all__ = [
    "EXPORT_FORMAT",
    "Reconstruction",
    "ReplayExport",
    "TraceRun",
    "export_replay",
    "load_replay",
    "read_replay_file",
    "rebuild_thread",
    "replay_file_path",
    "restore_replay_seed",
]

EXPORT_FORMAT = "threadcase-replay/1"


class ReplayExport(BaseModel):
    """An exported replay file: enough to rebuild the thread offline, nothing more of the trace."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["threadcase-replay/1"] = "threadcase-replay/1"
    thread_id: str
    project: str
    source: str
    """Where the runs came from: the LangSmith API URL (and workspace), or a trace file's name."""
    exported_at: datetime
    runs: list[TraceRun] = Field(default_factory=list)
    """The thread's chain and tool runs, redacted, in start order."""
    reconstruction: Reconstruction | None = None
    """The rebuild for the default live turn (the last user turn), for a reader; replay rebuilds from
    ``runs`` so a case's ``liveTurnRunId`` still applies."""


def replay_file_path(replay_dir: Path, thread_id: str) -> Path:
    """``<replay_dir>/<threadId>.json``; refuses a thread id that is not a plain file name."""
    if not SAFE_THREAD_ID.fullmatch(thread_id):
        raise ConfigError(
            f"thread id {thread_id!r} cannot name a file in the replay directory (letters, digits, '.', '_', "
            "':' and '-' only)"
        )
    return replay_dir / f"{thread_id}.json"


def read_replay_file(path: Path, *, thread_id: str | None = None) -> ReplayExport:
    """Read an exported replay file, or a demo ``--trace-to`` JSONL (runs of ``thread_id`` only).

    Raises :class:`ReplayError` naming the file when it is missing or unreadable.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayError(
            f"{path} is not UTF-8 text (byte {exc.start}): not an exported replay file or a trace JSONL"
        ) from None
    except FileNotFoundError:
        raise ReplayError(
            f"no exported trace at {path}; write it with `threadcase replay export {thread_id or 'THREAD_ID'} "
            f"-o {path}` (or run without --replay-dir to read LangSmith)"
        ) from None
    except OSError as exc:
        raise ReplayError(f"cannot read exported trace {path}: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None  # several lines: a trace JSONL (or not JSON at all: said line by line below)
    if isinstance(document, dict) and "format" in document:
        try:
            export = ReplayExport.model_validate(document)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ReplayError(f"{path}: {where}: {first['msg']} (not a {EXPORT_FORMAT} file)") from None
        if thread_id is not None and export.thread_id != thread_id:
            raise ReplayError(f"{path} holds thread {export.thread_id!r}, not {thread_id!r}")
        return export
    return _read_trace_jsonl(path, text, thread_id)


def _read_trace_jsonl(path: Path, text: str, thread_id: str | None) -> ReplayExport:
    raw: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{number}: not a JSON run ({exc.msg})") from None
        except (ValueError, RecursionError):
            raise ReplayError(f"{path}:{number}: not a JSON run (nested too deeply, or a number too long)") from None
        if not isinstance(item, dict):
            raise ReplayError(f"{path}:{number}: not a JSON object")
        raw.append(item)
    runs = normalize_runs(raw)
    threads = {t for r in runs if isinstance(t := r.metadata.get("thread_id"), str)}
    if thread_id is None:
        if len(threads) != 1:
            raise ReplayError(f"{path} holds {len(threads)} threads; name the one to replay")
        thread_id = next(iter(threads))
    roots = {r.id for r in runs if r.parent_run_id is None and r.metadata.get("thread_id") == thread_id}
    picked = [
        r
        for r in runs
        if r.metadata.get("thread_id") == thread_id
        or r.trace_id in roots
        or r.metadata.get("langsmith_root_run_id") in roots
    ]
    if not picked:
        raise ReplayError(f"thread {thread_id!r} has no runs in {path} ({len(threads)} other thread(s) there)")
    return ReplayExport(
        thread_id=thread_id,
        project=DEFAULT_PROJECT,
        source=f"trace file {path.name}",
        exported_at=datetime.now(UTC),
        runs=picked,
    )


async def load_replay(
    seed: ReplaySeed, *, replay_dir: Path | None, environ: Mapping[str, str] | None = None
) -> tuple[Reconstruction, str]:
    """Rebuild a replay seed; returns the reconstruction and where its runs came from.

    With ``replay_dir`` only ``<replay_dir>/<threadId>.json`` is read (no network); otherwise
    LangSmith is searched (see :mod:`.replay_langsmith`).
    """
    if replay_dir is not None:
        path = replay_file_path(replay_dir, seed.thread_id)
        export = await anyio.to_thread.run_sync(lambda: read_replay_file(path, thread_id=seed.thread_id))
        runs, source, fetch_warnings = export.runs, f"{path}", []
    else:
        fetched = await fetch_thread_runs(
            seed.thread_id,
            project=seed.project,
            endpoint=seed.endpoint,
            environ=os.environ if environ is None else environ,
        )
        runs, fetch_warnings = fetched.runs, fetched.warnings
        source = fetched.api_url + (f" workspace {fetched.workspace}" if fetched.workspace else "")
    # Off the event loop: a long thread takes a noticeable fraction of a second to rebuild, and
    # concurrent cases must keep reacting to their events meanwhile.
    reconstruction = await anyio.to_thread.run_sync(
        lambda: rebuild_thread(runs, live_turn_run_id=seed.live_turn_run_id)
    )
    if fetch_warnings:
        reconstruction = reconstruction.model_copy(update={"warnings": [*fetch_warnings, *reconstruction.warnings]})
    return reconstruction, source


def _to_inline(reconstruction: Reconstruction) -> InlineSeed:
    try:
        return reconstruction.to_inline_seed()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReplayError(f"the rebuilt thread is not restorable: {where}: {first['msg']}") from None


def _rewrite_live_message(message: str, ids: Mapping[str, str]) -> str:
    """Point the live message at this run's copies: recorded workflow ids -> per-run ids.

    Longest first in one pass, so an id that contains another is never rewritten twice.
    """
    mapping = {old: new for old, new in ids.items() if old and old != new}
    if not mapping:
        return message
    pattern = re.compile("|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True)))
    return pattern.sub(lambda m: mapping[m.group(0)], message)


async def restore_replay_seed(
    client: InstanceClient,
    seed: ReplaySeed,
    *,
    thread_id: str,
    project_id: str,
    run_suffix: str,
    snapshot: InstanceSnapshot,
    replay_dir: Path | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[RestoredSeed, str]:
    """Rebuild a production thread and restore it into ``thread_id``; returns (seed, live message).

    The restore goes through the inline-seed path (messages, agent-built workflows, data tables
    schema only; ids remapped, names suffixed per run). ``outcome.mode`` is ``replay`` and the
    rebuild's warnings lead ``outcome.warnings``. When some agent-built workflow could not be recreated
    (workflow-SDK code only), ``outcome.restored`` is false with the reason, so the case is not judged;
    when none could, :class:`ReplayError`. The live message is the recorded one, with recorded
    workflow ids rewritten to this run's ids. Raises :class:`ReplayError` (trace missing or unusable),
    :class:`SeedingError` (the instance refused the restore) or :class:`ConfigError` (no key for the
    tenant). ``environ`` defaults to ``os.environ`` (for the LangSmith keys).
    """
    # Imported here: the inline restore pulls in the instance client, which a pure rebuild never needs.
    from threadcase.seeds.inline import restore_inline_seed

    reconstruction, source = await load_replay(seed, replay_dir=replay_dir, environ=environ)
    unrecovered = reconstruction.unrecovered_builds
    if unrecovered and reconstruction.recovered_builds == 0:
        raise ReplayError(
            f"none of the {len(unrecovered)} workflow(s) the agent built in thread {seed.thread_id} before the live "
            f"turn could be recreated ({unrecovered[0]}); the trace's builds carry only workflow-SDK code, which "
            "this harness cannot compile (or a tool was renamed): nothing to replay against"
        )
    inline = _to_inline(reconstruction)
    restored = await restore_inline_seed(
        client,
        inline,
        thread_id=thread_id,
        project_id=project_id,
        run_suffix=run_suffix,
        snapshot=snapshot,
        check_builds=False,  # the history may name workflows the agent deleted before the live turn
    )
    # Only ids are rewritten: a per-run name carries a bracketed "[seed …]" suffix, which the
    # conversation loop would take for a director note and strip from what it sends.
    live = _rewrite_live_message(reconstruction.live_message, restored.outcome.id_map)
    notes = [
        f"replayed {reconstruction.replayed_turns} turn(s) of thread {seed.thread_id} from {source}; live turn "
        f"{reconstruction.live_turn_run_id}"
    ]
    update: dict[str, Any] = {
        "mode": "replay",
        "warnings": [*notes, *reconstruction.warnings, *restored.outcome.warnings],
    }
    if unrecovered:
        # Judging the live turn against a workspace missing some of the agent's workflows would
        # blame the agent for the harness's gap: the seed-restored premise voids the case instead.
        update["restored"] = False
        update["error"] = (
            f"{len(unrecovered)} agent-built workflow(s) could not be recreated from the trace: "
            + "; ".join(unrecovered)
        )
    outcome = restored.outcome.model_copy(update=update)
    return restored.model_copy(update={"outcome": outcome}), live


async def export_replay(
    thread_id: str,
    *,
    project: str | None = None,
    endpoint: str | None = None,
    out: Path,
    trace_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ReplayExport:
    """Fetch (or read from ``trace_file``), redact and write one thread's replay file to ``out``.

    The file is written atomically (temporary name, then rename). Raises :class:`ReplayError` when
    the thread cannot be found or rebuilt, :class:`ConfigError` when the tenant's key is missing.
    """
    if trace_file is not None:
        try:
            export = await anyio.to_thread.run_sync(lambda: read_replay_file(trace_file, thread_id=thread_id))
        except ReplayError as exc:
            # The file is this command's input: a bad one is the user's to fix (exit 2), not a failed run.
            raise ConfigError(f"--from-trace: {exc}") from None
    else:
        env = os.environ if environ is None else environ
        resolve_tenant(endpoint, env)  # a missing key fails before anything slow
        fetched = await fetch_thread_runs(thread_id, project=project, endpoint=endpoint, environ=env)
        export = ReplayExport(
            thread_id=thread_id,
            project=fetched.project,
            source=fetched.api_url + (f" workspace {fetched.workspace}" if fetched.workspace else ""),
            exported_at=datetime.now(UTC),
            runs=fetched.runs,
        )
    reconstruction = await anyio.to_thread.run_sync(rebuild_thread, export.runs)
    export = export.model_copy(update={"reconstruction": reconstruction})
    await anyio.to_thread.run_sync(_write_atomically, out, export.model_dump_json(indent=1) + "\n")
    return export


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"-o {str(path)!r}: cannot write it ({exc.strerror or exc}); choose a writable path"
        ) from None
