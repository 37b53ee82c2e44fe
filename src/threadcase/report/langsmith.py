"""Record a run as a LangSmith experiment, and push a suite as a LangSmith dataset (the ``langsmith`` SDK).

``threadcase run --langsmith-experiment NAME`` and ``threadcase dataset push`` end here:

- **Dataset** (``--langsmith-dataset``, default ``threadcase-<suite directory>``): created or reused
  by name; one example per case, found again by its ``case`` metadata. The example holds the case
  file's JSON (redacted) and the file's SHA-256; when the file changed, the example is updated, which
  makes a new version of the dataset, and an unchanged file leaves it as it is.
- **Experiment**: a LangSmith project named NAME whose reference dataset is that dataset (created,
  or reused when it already refers to that dataset, so the shards of one CI run fill one
  experiment); one root run per case-iteration, linked to its case's example, with the transcript;
  one feedback per unit (pass 1 / fail 0; not judged and reviewed units are comments, never scores).
  LangSmith's own comparison view then works across runs of the same dataset.
- **Replay cases are never sent**: neither their example nor their runs (they hold someone's real
  conversation); each one is named in the outcome.

The key comes from ``LANGSMITH_API_KEY`` (or ``LANGCHAIN_API_KEY``), the endpoint from
``LANGSMITH_ENDPOINT`` (default ``https://api.smith.langchain.com``). The SDK is synchronous; callers
on an event loop run these functions in a worker thread. Every value sent passes
:class:`~threadcase.report.langsmith_payload.OutgoingRedaction`.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from threadcase.case.fingerprint import case_hashes
from threadcase.case.loader import LoadedCase, load_case_file
from threadcase.errors import CaseSchemaError, ConfigError, ExportError
from threadcase.report.langsmith_payload import (
    OutgoingRedaction,
    example_inputs,
    example_metadata,
    is_replay,
    run_metadata,
    run_outputs,
    unit_feedback,
)
from threadcase.seeds.replay_langsmith import resolve_tenant
from threadcase.verdicts import CaseHashes, CaseResult

if TYPE_CHECKING:
    import langsmith

__all__ = [
    "DatasetPush",
    "ExperimentRecord",
    "LangSmithTarget",
    "default_dataset_name",
    "push_dataset",
    "record_experiment",
]

REPLAY_REFUSAL = "a replay case holds someone's real conversation; it is never sent to LangSmith"


@dataclasses.dataclass(frozen=True)
class LangSmithTarget:
    """Where to write, and with which key (never printed)."""

    api_url: str
    api_key: SecretStr

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, flag: str) -> LangSmithTarget:
        """The home tenant of the environment; a :class:`ConfigError` naming ``flag`` without a key."""
        try:
            tenant = resolve_tenant(None, environ)
        except ConfigError:
            raise ConfigError(
                f"{flag} writes to LangSmith and needs LANGSMITH_API_KEY (endpoint: LANGSMITH_ENDPOINT, "
                "default https://api.smith.langchain.com)"
            ) from None
        return cls(api_url=tenant.api_url, api_key=tenant.api_key)


def default_dataset_name(suite: Path | str) -> str:
    """``threadcase-<suite directory name>`` (``threadcase-golden`` for ``cases/golden``)."""
    path = Path(suite)
    name = path.stem if path.suffix == ".json" else path.name
    return f"threadcase-{name or 'suite'}"


def _client(target: LangSmithTarget) -> langsmith.Client:
    import langsmith

    # No background batching: every write happens (or fails) before the call returns, so the outcome
    # reports what LangSmith really holds.
    return langsmith.Client(
        api_url=target.api_url,
        api_key=target.api_key.get_secret_value(),
        auto_batch_tracing=False,
        timeout_ms=30_000,
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


@dataclasses.dataclass
class DatasetPush:
    """What a dataset push did, case by case."""

    dataset_name: str
    dataset_id: str = ""
    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    """Cases whose file changed since their example was written (a new dataset version)."""
    unchanged: list[str] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """(case, why) for every case not pushed: replay cases, files changed since a run."""
    example_ids: dict[str, str] = dataclasses.field(default_factory=dict)

    def lines(self) -> list[str]:
        """One line per skipped case, then the totals."""
        out = [f"skipped {slug}: {why}" for slug, why in self.skipped]
        out.append(
            f"dataset {self.dataset_name!r}: {len(self.created)} example(s) created, {len(self.updated)} updated "
            f"(new version), {len(self.unchanged)} unchanged, {len(self.skipped)} skipped"
        )
        return out


def _ensure_dataset(client: langsmith.Client, name: str, description: str) -> str:
    from langsmith import utils as ls_utils

    try:
        return str(client.read_dataset(dataset_name=name).id)
    except ls_utils.LangSmithNotFoundError:
        return str(client.create_dataset(name, description=description, metadata={"source": "threadcase"}).id)


def _existing_examples(client: langsmith.Client, dataset_id: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for example in client.list_examples(dataset_id=dataset_id):
        slug = (example.metadata or {}).get("case")
        if isinstance(slug, str):
            found.setdefault(slug, example)
    return found


def _push_examples(
    client: langsmith.Client,
    cases: Sequence[tuple[LoadedCase, CaseHashes]],
    *,
    dataset: str,
    redaction: OutgoingRedaction,
    push: DatasetPush,
) -> None:
    push.dataset_id = _ensure_dataset(client, dataset, "threadcase cases, one example per case file")
    existing = _existing_examples(client, push.dataset_id)
    to_create: list[dict[str, Any]] = []
    for loaded, hashes in cases:
        metadata = example_metadata(loaded, hashes)
        found = existing.get(loaded.slug)
        if found is None:
            example_id = str(uuid.uuid4())
            to_create.append({"id": example_id, "inputs": example_inputs(loaded, redaction), "metadata": metadata})
            push.created.append(loaded.slug)
        else:
            example_id = str(found.id)
            if (found.metadata or {}).get("case_file_sha256") != hashes.file:
                client.update_example(
                    example_id,
                    inputs=example_inputs(loaded, redaction),
                    metadata=metadata,
                    dataset_id=push.dataset_id,
                )
                push.updated.append(loaded.slug)
            else:
                push.unchanged.append(loaded.slug)
        push.example_ids[loaded.slug] = example_id
    if to_create:
        client.create_examples(dataset_id=push.dataset_id, examples=to_create)


def _sendable(cases: Iterable[LoadedCase], push: DatasetPush) -> list[tuple[LoadedCase, CaseHashes]]:
    out = []
    for loaded in cases:
        if is_replay(loaded):
            push.skipped.append((loaded.slug, REPLAY_REFUSAL))
        else:
            out.append((loaded, case_hashes(loaded)))
    return out


def push_dataset(
    cases: Sequence[LoadedCase], *, dataset: str, target: LangSmithTarget, secrets: Iterable[str] = ()
) -> DatasetPush:
    """Push ``cases`` as the examples of ``dataset`` (created or reused by name); replay cases are refused.

    Raises :class:`ExportError` when LangSmith refuses or fails; what was written before stays.
    """
    push = DatasetPush(dataset_name=dataset)
    sendable = _sendable(cases, push)
    if not sendable:
        return push
    client = _client(target)
    try:
        _push_examples(client, sendable, dataset=dataset, redaction=OutgoingRedaction(secrets), push=push)
    except ExportError:
        raise
    except Exception as exc:
        raise ExportError(f"LangSmith at {target.api_url}: dataset {dataset!r} push failed: {_one_line(exc)}") from None
    finally:
        client.close(timeout=0)
    return push


@dataclasses.dataclass
class ExperimentRecord:
    """What :func:`record_experiment` wrote."""

    experiment: str
    experiment_id: str = ""
    dataset: DatasetPush = dataclasses.field(default_factory=lambda: DatasetPush(dataset_name=""))
    runs: int = 0
    feedback: int = 0
    scores: int = 0
    """Feedback with a score (pass or fail units); the rest are comments."""

    def lines(self) -> list[str]:
        return [
            *self.dataset.lines(),
            f"experiment {self.experiment!r}: {self.runs} run(s), {self.feedback} feedback ({self.scores} scored)",
        ]


def _cases_of(results: Sequence[CaseResult], push: DatasetPush) -> dict[str, tuple[LoadedCase, CaseHashes]]:
    """The run's cases, read again from their files; a file changed since the run is skipped by name."""
    found: dict[str, tuple[LoadedCase, CaseHashes]] = {}
    skipped: set[str] = set()
    for result in results:
        slug = result.case_slug
        if slug in found or slug in skipped:
            continue
        try:
            loaded = load_case_file(Path(result.case_file))
        except CaseSchemaError:
            push.skipped.append((slug, f"its case file {result.case_file!r} no longer loads"))
            skipped.add(slug)
            continue
        if is_replay(loaded):
            push.skipped.append((slug, REPLAY_REFUSAL))
            skipped.add(slug)
            continue
        hashes = case_hashes(loaded)
        if result.case_hashes is not None and result.case_hashes.file != hashes.file:
            push.skipped.append((slug, "its case file changed since the run; its example would not match"))
            skipped.add(slug)
            continue
        found[slug] = (loaded, hashes)
    return found


def _ensure_experiment(client: langsmith.Client, name: str, dataset_id: str, metadata: dict[str, Any]) -> str:
    from langsmith import utils as ls_utils

    try:
        project = client.read_project(project_name=name)
    except ls_utils.LangSmithNotFoundError:
        created = client.create_project(
            name,
            reference_dataset_id=dataset_id,
            metadata=metadata,
            description="threadcase run",
        )
        return str(created.id)
    if str(project.reference_dataset_id or "") != dataset_id:
        raise ExportError(
            f"LangSmith project {name!r} exists and is not an experiment on dataset {dataset_id}; "
            "choose another --langsmith-experiment name"
        )
    return str(project.id)


def _dotted_order(start: datetime, run_id: str) -> str:
    return start.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ") + run_id


def record_experiment(
    results: Sequence[CaseResult],
    *,
    experiment: str,
    dataset: str,
    target: LangSmithTarget,
    secrets: Iterable[str] = (),
    metadata: Mapping[str, Any] | None = None,
) -> ExperimentRecord:
    """Record finished case-iterations as the LangSmith experiment ``experiment`` on ``dataset``.

    The cases are read again from each result's ``case_file`` (a file changed since the run is skipped
    by name). Raises :class:`ExportError` when LangSmith refuses or fails.
    """
    record = ExperimentRecord(experiment=experiment, dataset=DatasetPush(dataset_name=dataset))
    cases = _cases_of(results, record.dataset)
    if not cases:
        return record
    redaction = OutgoingRedaction(secrets)
    client = _client(target)
    try:
        _push_examples(client, list(cases.values()), dataset=dataset, redaction=redaction, push=record.dataset)
        record.experiment_id = _ensure_experiment(
            client, experiment, record.dataset.dataset_id, {"source": "threadcase", **(metadata or {})}
        )
        for result in results:
            if result.case_slug in cases:
                _record_run(client, result, record, redaction)
        client.update_project(record.experiment_id, end_time=datetime.now(UTC))
    except ExportError:
        raise
    except Exception as exc:
        raise ExportError(
            f"LangSmith at {target.api_url}: experiment {experiment!r} not fully recorded "
            f"({record.runs} run(s) written): {_one_line(exc)}; the journal holds the run, "
            "`threadcase report RUN --langsmith-experiment NAME` sends it again"
        ) from None
    finally:
        client.close(timeout=0)
    return record


def _record_run(
    client: langsmith.Client, result: CaseResult, record: ExperimentRecord, redaction: OutgoingRedaction
) -> None:
    run_id = str(uuid.uuid4())
    start = result.started_at
    end = result.finished_at or start
    error = None
    if result.error is not None:
        error = redaction.text(f"{result.error.type}: {result.error.message} ({result.error.attribution})")
    client.create_run(
        name=result.case_slug,
        inputs={"case": result.case_slug, "iteration": result.iteration},
        run_type="chain",
        project_name=record.experiment,
        id=run_id,
        trace_id=run_id,
        dotted_order=_dotted_order(start, run_id),
        reference_example_id=record.dataset.example_ids[result.case_slug],
        start_time=start,
        end_time=end,
        outputs=run_outputs(result, redaction),
        error=error,
        extra={"metadata": run_metadata(result)},
        tags=["threadcase", result.status],
    )
    record.runs += 1
    for verdict in result.verdicts:
        spec = unit_feedback(verdict, redaction)
        client.create_feedback(
            run_id=run_id,
            trace_id=run_id,
            key=spec.key,
            score=spec.score,
            comment=spec.comment,
            session_id=record.experiment_id,
        )
        record.feedback += 1
        record.scores += spec.score is not None
