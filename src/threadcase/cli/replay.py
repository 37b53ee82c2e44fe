"""``threadcase replay``: work with production threads offline.

``threadcase replay export THREAD_ID -o FILE`` finds the thread in LangSmith (every workspace the key
reaches), redacts it and writes a replay file; ``threadcase run --replay-dir DIR`` then replays cases
from ``DIR/<threadId>.json`` with no network. A thin shell over :func:`threadcase.seeds.replay.export_replay`.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import click

from threadcase.errors import UsageError

__all__ = ["export", "replay"]


@click.group()
def replay() -> None:
    """Reproduce production threads: export a redacted trace to replay offline."""


_CASE_KEYS = frozenset({"complexity", "conversation", "seed", "tags"})
_SNIFF_FILES = 200
_SNIFF_BYTES = 2_000_000


def _looks_like_a_case(path: Path) -> bool:
    try:
        if path.stat().st_size > _SNIFF_BYTES:
            return False
        document = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and "format" not in document and len(_CASE_KEYS & set(document)) >= 2


def _refuse_case_tree(out: Path) -> None:
    """Refuse a destination where a case lives: a trace is personal data that must never be committed.

    Refused: any path with a ``cases`` directory in it, anything inside the default suite
    (``THREADCASE_SUITE`` or ``cases/golden``, resolved), and any directory already holding case files.
    """
    from threadcase.case.loader import default_suite_path

    resolved = out.resolve()
    parent = resolved.parent
    suite = default_suite_path().resolve()
    if suite.is_file():
        suite = suite.parent
    reason = None
    if "cases" in resolved.parts[:-1]:
        reason = "it sits under a 'cases' directory"
    elif parent == suite or suite in parent.parents:
        reason = f"it sits inside the default suite {suite}"
    elif parent.is_dir():
        candidates = sorted(p for p in parent.glob("*.json") if p != resolved)[:_SNIFF_FILES]
        case_file = next((p for p in candidates if _looks_like_a_case(p)), None)
        if case_file is not None:
            reason = f"its directory holds case files ({case_file.name})"
    if reason is not None:
        raise UsageError(
            f"refusing to write a replay export to {out}: {reason}, and a trace is personal data that must never "
            "be committed; write it to a replay directory outside the case tree"
        )


@replay.command()
@click.argument("thread_id")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="File to write (conventionally DIR/<threadId>.json, for --replay-dir DIR).",
)
@click.option(
    "--project",
    envvar="THREADCASE_REPLAY_PROJECT",
    show_envvar=True,
    default=None,
    help="LangSmith project holding the thread [default: instance-ai].",
)
@click.option(
    "--endpoint",
    envvar="THREADCASE_REPLAY_ENDPOINT",
    show_envvar=True,
    default=None,
    help="LangSmith API URL of another tenant (its key: LANGSMITH_API_KEY_<HOST>) [default: LANGSMITH_ENDPOINT].",
)
@click.option(
    "--from-trace",
    "trace_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="THREADCASE_REPLAY_FROM_TRACE",
    show_envvar=True,
    default=None,
    help="Read the runs from a trace JSONL (the demo instance's --trace-to file) instead of LangSmith.",
)
@click.option("--json", "as_json", is_flag=True, envvar="THREADCASE_JSON", show_envvar=True, help="Print JSON.")
def export(
    thread_id: str,
    out: Path,
    project: str | None,
    endpoint: str | None,
    trace_file: Path | None,
    as_json: bool,
) -> None:
    """Write THREAD_ID's redacted trace to a replay file (DIR/<threadId>.json)."""
    from threadcase.seeds.replay import export_replay

    _refuse_case_tree(out)

    async def main() -> None:
        exported = await export_replay(thread_id, project=project, endpoint=endpoint, out=out, trace_file=trace_file)
        rec = exported.reconstruction
        assert rec is not None
        summary = {
            "file": str(out),
            "threadId": exported.thread_id,
            "source": exported.source,
            "runs": len(exported.runs),
            "replayedTurns": rec.replayed_turns,
            "liveTurnRunId": rec.live_turn_run_id,
            "workflows": len(rec.workflows),
            "dataTables": len(rec.data_tables),
            "warnings": rec.warnings,
        }
        if as_json:
            click.echo(json.dumps(summary, indent=2))
            return
        click.echo(
            f"wrote {out}: thread {exported.thread_id} from {exported.source}, {len(exported.runs)} runs, "
            f"{rec.replayed_turns} turn(s) before the live turn, {len(rec.workflows)} workflow(s), "
            f"{len(rec.data_tables)} data table(s)"
        )
        for warning in rec.warnings:
            click.echo(f"warning: {warning}", err=True)

    anyio.run(main)
