"""When repeating a call to the instance is safe, and how.

Three kinds of call:

- ``READ`` (GET): repeat on any transient failure — no answer, a dropped connection, 429/502/503/504.
- ``IDEMPOTENT`` (DELETE, confirm, allowlist pinning, table-row seeding): the same request twice has
  the effect of one (the server de-duplicates confirms by requestId; pinning and row seeding replace
  state), so they are repeated like reads.
- ``UNSAFE`` (chat, creations, restore, mocked execution): repeated **only** when the failure proves
  the request never reached the server's handler — the connection could not be made, or the answer
  was 429/503, which a proxy or the demo's fault injector gives before doing any work. A request that
  was sent and then lost its answer (read timeout, dropped connection, 502/504 from a gateway whose
  upstream may be working on it) is never repeated: a second chat would start a second run.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

__all__ = ["CallKind", "RetryPolicy", "RetryableStatus", "retry_after", "retryable_status", "should_retry"]


class CallKind(enum.Enum):
    """How safe a call is to repeat: READ/IDEMPOTENT retry on transient failures, UNSAFE only if never sent."""

    READ = "read"
    IDEMPOTENT = "idempotent"
    UNSAFE = "unsafe"


class RetryableStatus(Exception):
    """Raised inside a retry loop for a transient status, so tenacity can see it."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(f"HTTP {response.status_code}")


_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
_BEFORE_WORK_STATUS = frozenset({429, 503})


def retryable_status(kind: CallKind, status: int) -> bool:
    """True when a call of ``kind`` answered with ``status`` may be sent again."""
    return status in (_BEFORE_WORK_STATUS if kind is CallKind.UNSAFE else _TRANSIENT_STATUS)


def should_retry(kind: CallKind, exc: BaseException) -> bool:
    """True when a call of ``kind`` that failed with ``exc`` may be sent again."""
    if isinstance(exc, RetryableStatus):
        return retryable_status(kind, exc.response.status_code)
    if isinstance(exc, _NOT_SENT):
        return True
    if isinstance(exc, httpx.TransportError):
        return kind is not CallKind.UNSAFE
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and the backoff between them (exponential with jitter)."""

    attempts: int = 4
    initial_wait: float = 0.25
    max_wait: float = 4.0
    jitter: float = 0.25

    def retrying(self, kind: CallKind) -> AsyncRetrying:
        """A tenacity loop for one call of ``kind``; re-raises the last failure."""
        backoff = wait_exponential_jitter(multiplier=self.initial_wait, max=self.max_wait, jitter=self.jitter)

        def wait(state: RetryCallState) -> float:
            # A server that says when to come back (429/503 Retry-After in seconds) knows best,
            # within our own ceiling so one lane cannot stall a case for minutes.
            exc = state.outcome.exception() if state.outcome is not None else None
            if isinstance(exc, RetryableStatus):
                after = retry_after(exc.response)
                if after is not None:
                    return min(after, self.max_wait)
            return float(backoff(state))

        return AsyncRetrying(
            stop=stop_after_attempt(max(1, self.attempts)),
            wait=wait,
            retry=retry_if_exception(lambda exc: should_retry(kind, exc)),
            reraise=True,
        )


def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` delay in seconds when given as a number (the HTTP-date form is ignored)."""
    value = response.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return None if seconds is None or seconds < 0 else seconds
