"""Mocked executions kept in the run record, and answered from it again: scenarios re-graded with no instance.

During a run, :class:`RecordingScenarioClient` passes every scenario call to the instance and keeps
each mocked execution in the record (``RunRecord.scenario_executions``), so the journal holds the
evidence a scenario was verified on. ``threadcase regrade`` then grades with a
:class:`StoredScenarioClient`: it answers each execution from the record — matched by workflow and
mock hints, in the order they ran — and seeds nothing, so the current verifier judges exactly the
execution the run produced. An execution the record does not hold is a :class:`StoredExecutionMissing`
(a run error: the scenario is *not judged*, with the reason), never a pass or a fail.
"""

from __future__ import annotations

from typing import Any

from threadcase.errors import RunError
from threadcase.grading.execution import ScenarioClient
from threadcase.records import RunRecord, StoredExecution
from threadcase.wire import ExecuteWithMockRequest, ExecutionResult, RestoreThreadRequest, RestoreThreadResponse

__all__ = ["RecordingScenarioClient", "StoredExecutionMissing", "StoredScenarioClient"]


class StoredExecutionMissing(RunError):
    """The run's record holds no mocked execution for what a scenario asks to execute."""


class RecordingScenarioClient:
    """A :class:`ScenarioClient` that forwards to the instance and stores each execution in ``record``."""

    def __init__(self, inner: ScenarioClient, record: RunRecord) -> None:
        self._inner = inner
        self._record = record

    async def seed_table_rows(self, thread_id: str, table_id: str, rows: list[dict[str, Any]]) -> int:
        return await self._inner.seed_table_rows(thread_id, table_id, rows)

    async def execute_with_mock(self, workflow_id: str, request: ExecuteWithMockRequest) -> ExecutionResult:
        result = await self._inner.execute_with_mock(workflow_id, request)
        self._record.scenario_executions.append(
            StoredExecution(workflow_id=workflow_id, scenario_hints=request.scenarioHints, result=result)
        )
        return result

    async def restore_thread(self, request: RestoreThreadRequest) -> RestoreThreadResponse:
        return await self._inner.restore_thread(request)

    async def list_data_tables(self, project_id: str) -> list[dict[str, Any]]:
        return await self._inner.list_data_tables(project_id)


class StoredScenarioClient:
    """A :class:`ScenarioClient` with no instance behind it: executions come from ``record``."""

    def __init__(self, record: RunRecord) -> None:
        self._record = record
        self._used: set[int] = set()

    async def seed_table_rows(self, thread_id: str, table_id: str, rows: list[dict[str, Any]]) -> int:
        return len(rows)  # the stored execution already ran on the rows seeded then

    async def execute_with_mock(self, workflow_id: str, request: ExecuteWithMockRequest) -> ExecutionResult:
        for index, stored in enumerate(self._record.scenario_executions):
            if index in self._used:
                continue
            if stored.workflow_id == workflow_id and stored.scenario_hints == request.scenarioHints:
                self._used.add(index)
                return stored.result
        raise StoredExecutionMissing(
            f"the run's journal holds no execution of workflow {workflow_id!r} with these mock hints "
            "(a journal written before executions were kept, or an execution that never ran); "
            "run the case again to grade this scenario"
        )

    async def restore_thread(self, request: RestoreThreadRequest) -> RestoreThreadResponse:
        # Scenario tables the run created before the build are in the record; one it had to create
        # at grading time keeps its declared id here (nothing is created).
        declared = [str(table.get("id", "")) for table in request.dataTables]
        return RestoreThreadResponse(threadId=request.threadId, dataTableIds=declared)

    async def list_data_tables(self, project_id: str) -> list[dict[str, Any]]:
        return list(self._record.artifacts.data_tables)
