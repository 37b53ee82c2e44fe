"""Mocked execution (execute-with-llm-mock): walk a workflow from its trigger with mocked actions."""

from __future__ import annotations

from typing import Any

from threadcase.demo_instance.apierror import ApiError
from threadcase.demo_instance.storage import Store
from threadcase.wire import ExecuteWithMockRequest

__all__ = ["execute_with_mock"]


def execute_with_mock(
    store: Store,
    workflow: dict[str, Any],
    request: ExecuteWithMockRequest,
    *,
    thread: dict[str, Any] | None,
    owner_id: str,
) -> dict[str, Any]:
    raise ApiError(501, "mocked execution is not implemented yet")
