"""LangSmith-shaped traces of demo chat turns (``--trace-to FILE``), one JSON run per line.

Each chat turn writes a root ``chain`` run named ``turn`` (``inputs.message``, ``outputs.response``,
``extra.metadata.thread_id``) and then one ``tool`` child run per tool call (``parent_run_id`` = the
root, ``extra.metadata.langsmith_root_run_id`` = the root), with the fields LangSmith's ``list_runs``
returns (``id``, ``trace_id``, ``name``, ``run_type``, ``parent_run_id``, ``start_time``,
``end_time``, ``inputs``, ``outputs``, ``error``, ``session_name``, ``dotted_order``, ``tags``).
Timestamps are ISO UTC. Replay (``threadcase.seeds.replay``) reads these files as an exported trace.

The same runs can also go to a LangSmith-compatible API (``--trace-endpoint``): :class:`TraceShipper`
posts them with the ``langsmith`` SDK (``Client.create_run``, auto-batching off, so each run is one
``POST /runs`` whose failure we see) from one background thread. A chat turn only puts its runs on a
bounded queue and never waits for the endpoint; a full queue drops runs (counted); the first failure is
logged once with its reason (the key redacted), later ones are counted; :meth:`TraceShipper.close`
delivers what is queued within a time bound and logs what was not delivered.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import SecretStr
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from threadcase.demo_instance.settings import DemoConfigError

__all__ = ["RunPoster", "TraceShipper", "TraceWriter", "turn_runs"]

log = logging.getLogger(__name__)

_SDK_KEY_LINE = re.compile(r"API Key: *\S*")
_OS_ERROR = re.compile(r"\[Errno -?\d+\][^'\")\]]*")
_STOP = object()
"""Queue sentinel: the worker drains what is before it, then ends."""


def _dotted(start: str, run_id: str) -> str:
    stamp = start.replace("-", "").replace(":", "").replace(".", "").rstrip("Z")
    return f"{stamp}Z{run_id}"


def turn_runs(
    *,
    thread_id: str,
    project: str,
    message: str,
    response: str,
    start_time: str,
    end_time: str,
    status: str,
    tool_calls: list[dict[str, Any]],
    run_id: str,
) -> list[dict[str, Any]]:
    """The runs of one turn: the root first, then its tool children in call order.

    ``tool_calls`` items: ``{toolName, input, output, error, startedAt, endedAt}``.
    """
    root_id = str(uuid.uuid4())
    root_dotted = _dotted(start_time, root_id)
    root: dict[str, Any] = {
        "id": root_id,
        "trace_id": root_id,
        "name": "turn",
        "run_type": "chain",
        "parent_run_id": None,
        "start_time": start_time,
        "end_time": end_time,
        "inputs": {"message": message},
        "outputs": {"response": response},
        "error": None if status == "completed" else f"run {status}",
        "session_name": project,
        "dotted_order": root_dotted,
        "tags": ["instance-ai", "demo"],
        "extra": {"metadata": {"thread_id": thread_id, "run_id": run_id, "status": status}},
    }
    runs = [root]
    for call in tool_calls:
        child_id = str(uuid.uuid4())
        started = str(call.get("startedAt") or start_time)
        runs.append(
            {
                "id": child_id,
                "trace_id": root_id,
                "name": call["toolName"],
                "run_type": "tool",
                "parent_run_id": root_id,
                "start_time": started,
                "end_time": call.get("endedAt") or end_time,
                "inputs": call.get("input") or {},
                "outputs": call.get("output"),
                "error": call.get("error"),
                "session_name": project,
                "dotted_order": f"{root_dotted}.{_dotted(started, child_id)}",
                "tags": [],
                "extra": {"metadata": {"thread_id": thread_id, "langsmith_root_run_id": root_id}},
            }
        )
    return runs


class RunPoster(Protocol):
    """Posts one run to the endpoint (raises on failure); ``close`` releases its connections."""

    def post(self, run: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class _SdkPoster:
    """The real poster: a ``langsmith.Client`` made in the worker thread (the import stays off turns)."""

    def __init__(self, api_url: str, api_key: SecretStr | None, timeout: float) -> None:
        import langsmith
        from langsmith import utils as ls_utils

        self._client = langsmith.Client(
            api_url=api_url,
            api_key=api_key.get_secret_value() if api_key is not None else None,
            # Without auto-batching each create_run is one POST /runs that raises on failure, so failures
            # are ours to count and log (the SDK's batch queue would swallow them into its own warnings).
            auto_batch_tracing=False,
            timeout_ms=int(timeout * 1000),
            # No retries inside the SDK (its default sleeps ~3 s on a refused connection): the shipper's
            # tenacity loop retries transient failures itself and stops retrying once closing.
            retry_config=ls_utils.LangSmithRetry(total=0, raise_on_redirect=False, raise_on_status=False),
        )

    def post(self, run: dict[str, Any]) -> None:
        fields = dict(run)
        self._client.create_run(
            name=fields.pop("name"), inputs=fields.pop("inputs"), run_type=fields.pop("run_type"), **fields
        )

    def close(self) -> None:
        self._client.close(timeout=0)


def _is_transient(exc: BaseException) -> bool:
    from langsmith import utils as ls_utils

    # 5xx, 429, timeouts and connection failures may pass; a refused key or a bad run will not.
    transient = (
        ls_utils.LangSmithAPIError,
        ls_utils.LangSmithRateLimitError,
        ls_utils.LangSmithRequestTimeout,
        ls_utils.LangSmithConnectionError,
        OSError,
    )
    return isinstance(exc, transient)


class TraceShipper:
    """Posts LangSmith-shaped runs to a LangSmith-compatible API from one background thread.

    :meth:`submit` never blocks (a full queue drops the runs, counted); :meth:`close` delivers what is
    queued within a bound. ``poster`` replaces the SDK client (tests); it is made in the worker thread.
    """

    def __init__(
        self,
        api_url: str,
        api_key: SecretStr | None,
        *,
        max_queue: int = 2000,
        timeout: float = 5.0,
        attempts: int = 3,
        poster: Callable[[], RunPoster] | None = None,
    ) -> None:
        self.api_url = api_url
        self._api_key = api_key
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_queue)
        self._made: RunPoster | None = None
        if poster is None:
            # Made now, at start-up: the SDK's import and client cost ~0.35 s of CPU, and made by the worker at
            # the first turn they held the GIL while the next turns ran (median turn ~7 -> ~15 ms in-process).
            try:
                self._made = _SdkPoster(api_url, api_key, timeout)
            except Exception as exc:
                raise DemoConfigError(
                    f"demo --trace-endpoint (THREADCASE_DEMO_TRACE_ENDPOINT) {api_url!r} cannot be used: "
                    f"{self._redact_text(str(exc), api_key)}"
                ) from None
        self._make_poster: Callable[[], RunPoster] = poster or (
            lambda: self._made or _SdkPoster(api_url, api_key, timeout)
        )
        self._attempts = attempts
        self._closing = threading.Event()
        self._deadline: float | None = None
        """Set by close(): retries stop at it, so the flush bound holds."""
        self.delivered = 0
        self.failed = 0
        self.dropped = 0
        self.unsent = 0
        self.first_failure: str | None = None
        self._drop_logged = False
        # A daemon: an endpoint that hangs must never keep the process alive past close()'s bound. Started at
        # the first submit, so an app that is built but never serves a turn leaves no thread behind.
        self._thread = threading.Thread(target=self._work, name="threadcase-trace-shipper", daemon=True)
        self._start_lock = threading.Lock()

    def submit(self, runs: list[dict[str, Any]]) -> None:
        """Queue runs for posting; returns at once (a full queue or a closed shipper drops them)."""
        if self._thread.ident is None:
            with self._start_lock:
                if self._thread.ident is None and not self._closing.is_set():
                    self._thread.start()
        for run in runs:
            if self._closing.is_set():
                self.dropped += 1
                continue
            try:
                self._queue.put_nowait(run)
            except queue.Full:
                self.dropped += 1
                if not self._drop_logged:
                    self._drop_logged = True
                    log.warning(
                        "demo traces: the queue to %s is full (the endpoint is slower than the chat); "
                        "dropping runs until it drains",
                        self.api_url,
                    )

    def close(self, timeout: float = 5.0) -> None:
        """Deliver what is queued within ``timeout`` seconds, then stop; logs what was not delivered."""
        deadline = time.monotonic() + timeout
        self._deadline = deadline
        with self._start_lock:
            self._closing.set()
            started = self._thread.ident is not None
        if not started:
            if self._made is not None:
                self._made.close()  # the client made at start-up, never used
            return
        try:
            self._queue.put(_STOP, timeout=max(0.0, timeout))
            stop_queued = True
        except queue.Full:
            stop_queued = False
        self._thread.join(max(0.0, deadline - time.monotonic()))
        alive = self._thread.is_alive()
        # The worker consumed the sentinel when it ended; while it still runs, the sentinel is not a run.
        self.unsent = max(0, self._queue.qsize() - (1 if alive and stop_queued else 0))
        lost = self.failed + self.dropped + self.unsent
        if lost:
            log.warning(
                "demo traces: %d run(s) not delivered to %s (%d failed, %d dropped, %d still queued at stop)%s",
                lost,
                self.api_url,
                self.failed,
                self.dropped,
                self.unsent,
                f"; first failure: {self.first_failure}" if self.first_failure else "",
            )

    def _may_retry(self) -> bool:
        deadline = self._deadline
        return deadline is None or time.monotonic() < deadline

    def _reason(self, exc: BaseException) -> str:
        # The SDK's messages are long (the socket error is buried in a retry wrapper): its first sentence,
        # plus the OS error when there is one, is what a reader needs.
        text = str(exc)
        first = text.split(". ", 1)[0].splitlines()[0] if text else ""
        os_error = _OS_ERROR.search(text)
        reason = f"{type(exc).__name__}: {first[:200]}"
        if os_error and os_error.group(0) not in reason:
            reason += f" ({os_error.group(0).strip()})"
        return self._redact(reason)

    def _redact(self, text: str) -> str:
        return self._redact_text(text, self._api_key)

    @staticmethod
    def _redact_text(text: str, key: SecretStr | None) -> str:
        # The SDK's connection errors carry a partly masked key ("API Key: lsv2-***42"): none of it is shown.
        text = _SDK_KEY_LINE.sub("API Key: ***", text)
        secret = key.get_secret_value() if key is not None else ""
        if secret:
            text = text.replace(secret, "***")
        return " ".join(text.split())[:300]

    def _fail(self, exc: BaseException) -> None:
        self.failed += 1
        if self.first_failure is None and self._may_retry():
            self.first_failure = self._reason(exc)
            log.warning(
                "demo traces: could not post runs to %s: %s; chat goes on, later failures are counted",
                self.api_url,
                self.first_failure,
            )

    def _work(self) -> None:
        poster: RunPoster | None = None
        try:
            while True:
                item = self._queue.get()
                if item is _STOP or not self._may_retry():
                    return  # past close()'s deadline nothing more is sent (close has reported it as unsent)
                assert isinstance(item, dict)
                try:
                    if poster is None:
                        poster = self._make_poster()
                    current = poster
                    # Retries only transient failures, and not past close()'s deadline: its bound wins.
                    for attempt in Retrying(
                        retry=retry_if_exception(lambda e: _is_transient(e) and self._may_retry()),
                        stop=stop_after_attempt(self._attempts),
                        wait=wait_exponential(multiplier=0.2, max=2),
                        reraise=True,
                    ):
                        with attempt:
                            current.post(item)
                except Exception as exc:
                    self._fail(exc)
                else:
                    self.delivered += 1
        finally:
            if poster is not None:
                try:
                    poster.close()
                except Exception as exc:  # closing connections must not mask the reason we stopped
                    log.debug("demo traces: closing the client failed: %s", self._redact(str(exc)))


class TraceWriter:
    """Records each turn's runs: appended to a JSONL file, and/or shipped to a LangSmith-compatible API.

    ``path`` None = no file (only the endpoint). Safe from several threads.
    """

    def __init__(self, path: Path | None, project: str, *, shipper: TraceShipper | None = None) -> None:
        self.path = path
        self.project = project
        self.shipper = shipper
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Fail at start, not at the first turn, when the file cannot be appended to.
            with path.open("a", encoding="utf-8"):
                pass

    def write(self, runs: list[dict[str, Any]]) -> None:
        """Append runs as JSON lines, flushed at once; queue them for the endpoint (never waits for it)."""
        if self.path is not None:
            lines = "".join(json.dumps(run, separators=(",", ":"), default=str) + "\n" for run in runs)
            with self._lock, self.path.open("a", encoding="utf-8") as handle:
                handle.write(lines)
                handle.flush()
        if self.shipper is not None:
            self.shipper.submit(runs)

    def close(self, timeout: float = 5.0) -> None:
        """Flush the endpoint's queue within ``timeout`` seconds (the file is flushed at every write)."""
        if self.shipper is not None:
            self.shipper.close(timeout)
