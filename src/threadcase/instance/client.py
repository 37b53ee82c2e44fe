"""The client for the system under test: n8n's Instance AI REST API over httpx.

One :class:`InstanceClient` talks to one instance (one base URL; build one per lane). It logs in on
``__aenter__`` (session cookie ``n8n-auth``), unwraps ``{"data": ...}``, parses answers into
:mod:`threadcase.wire` models, repeats calls only where that is safe (see :mod:`.retry`), and turns
every failure into :class:`InstanceError` with method, path, status and a short redacted excerpt.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import ssl
import time
import urllib.request
from collections import Counter
from collections.abc import Iterable
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import httpx
from pydantic import BaseModel, ValidationError

from threadcase import wire
from threadcase.errors import InstanceError, MissingRouteError
from threadcase.instance.answers import classify_refusal, gone, route_missing, start_trigger
from threadcase.instance.models import ClientTimeouts, InstanceFeatures, Project
from threadcase.instance.redact import Redactor, environment_secrets
from threadcase.instance.retry import CallKind, RetryableStatus, RetryPolicy, retryable_status, should_retry
from threadcase.instance.sse import EventSubscription
from threadcase.records import AgentArtifact
from threadcase.redaction import strip_userinfo

__all__ = ["InstanceClient"]

_URL_CACHE_SIZE = 4096
_HEADER_CACHE_SIZE = 64

_log = logging.getLogger("threadcase.instance")

M = TypeVar("M", bound=BaseModel)

_PAGE = 250
_MESSAGE_PAGE = 200
"""n8n's largest page of thread messages (``limit`` 1–200)."""
_MAX_MESSAGE_PAGES = 1001
"""n8n's pages run 0–1000."""
_AI = "/rest/instance-ai"


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process, as httpx builds it: building one reads the whole CA bundle
    (~40 ms), and a lane opens a dozen clients."""
    return httpx.create_ssl_context()


def _q(segment: str) -> str:
    """One URL path segment, escaped (ids come from case files, traces and the agent's tool output)."""
    if segment in ("", ".", ".."):
        # Escaping leaves these as they are and URL normalisation then drops them or climbs a level: a
        # delete of folder ".." would go to the project itself.
        raise InstanceError(f"{segment!r} is not an id; refusing to build a path from it")
    return quote(segment, safe="")


def _basic_auth(url: str) -> str | None:
    """The ``Authorization: Basic`` value of a URL's userinfo (``https://user:pw@host``), if it has one."""
    userinfo = httpx.URL(url.strip()).userinfo
    if not userinfo:
        return None
    user, _, password = userinfo.decode("ascii", "replace").partition(":")
    return "Basic " + base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")


def _json_bytes(body: Any) -> bytes:
    """A request body as JSON, encoded as httpx's ``json=`` would (compact, UTF-8, no NaN)."""
    if isinstance(body, bytes):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _items(data: Any, *keys: str) -> list[Any]:
    """A list answer, whether bare or wrapped (``{"runs": [...]}``, ``{"count", "data": [...]}``)."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in (*keys, "data", "items"):
            value = data.get(key)
            if isinstance(value, list):
                return value
    return []


class InstanceClient:
    """An authenticated session with one instance; an async context manager.

    ``async with InstanceClient(url, email=..., password=...) as client:`` logs in on entry and
    closes the connection pool on exit. Every method raises :class:`InstanceError` on failure;
    DELETEs treat 404 as success (already gone). ``transport`` is for tests (``httpx.MockTransport``).
    """

    def __init__(
        self,
        base_url: str,
        *,
        email: str,
        password: str,
        timeouts: ClientTimeouts | None = None,
        retry: RetryPolicy | None = None,
        secrets: Iterable[str] = (),
        transport: httpx.AsyncBaseTransport | None = None,
        claims: Counter[str] | None = None,
        features: InstanceFeatures | None = None,
    ) -> None:
        self.redactor = Redactor([password, *environment_secrets(os.environ), *secrets], provider_keys=True)
        self.redactor.add_url(base_url)
        # Userinfo in the URL (a proxy in front of the instance wants basic auth) becomes a header: the
        # URL itself is kept, shown and recorded without it.
        self._basic_auth = _basic_auth(base_url)
        self.base_url = strip_userinfo(base_url.strip()).rstrip("/")
        self.email = email
        self._password = password
        self.timeouts = timeouts or ClientTimeouts()
        self.retry = retry or RetryPolicy()
        self._transport = transport
        self._own_transport = False
        self._stream_transport: httpx.AsyncBaseTransport | None = None
        """Event streams get a pool of their own (when the transport is ours): a stream holds its connection
        for a whole conversation, so it must never take the place of, or wait behind, plain calls."""
        self._http: httpx.AsyncClient | None = None
        self._base_headers: dict[str, str] = {}
        self._cookie: str | None = None
        """The ``Cookie`` header the jar yields for this instance, cached until the jar changes."""
        self._headers: dict[tuple[bool, tuple[tuple[str, str], ...]], httpx.Headers] = {}
        """The headers of a plain call per (has a JSON body, extra headers), for the cached cookie: copying
        a ready ``httpx.Headers`` is a list copy, building one normalises every header again."""
        self._direct = not urllib.request.getproxies()
        """Plain calls skip httpx's client layer (cookie jar, URL merging, auth and redirect machinery,
        ~0.2 ms a call) unless a proxy is configured, which only the client layer knows how to route."""
        self._default_timeout = httpx.Timeout(self.timeouts.default, connect=self.timeouts.connect).as_dict()
        self._urls: dict[str, httpx.URL] = {}
        self.claims: Counter[str] = Counter() if claims is None else claims
        """Keys of resources that runs in progress own (``workflow:<id>``, ``folder:<project>:<name>``,
        ``project:<name>``): seed eviction never deletes a claimed one, so concurrent runs of one seeded
        case cannot delete each other's artifacts. Pass one Counter to every client of an instance (the
        runner does, per lane): claims held through another client are then respected too."""
        self.features = features or InstanceFeatures()
        """What the instance was found to offer (the memory route): share one per lane, like ``claims``."""
        self._logged_in = False
        """A login succeeded: a 401 after it means the session cookie does not travel, not bad credentials."""

    def __repr__(self) -> str:
        return f"InstanceClient({self.base_url!r}, email={self.email!r})"

    # --- session ------------------------------------------------------------------------------

    async def __aenter__(self) -> InstanceClient:
        try:
            await self.login()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool (also done by ``__aexit__``)."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()
            if self._own_transport:
                # The client closed it; a later call builds a fresh client and transport.
                self._transport, self._own_transport = None, False
            if self._stream_transport is not None:
                stream_transport, self._stream_transport = self._stream_transport, None
                await stream_transport.aclose()

    def add_secret(self, value: str) -> None:
        """Never let ``value`` appear in an error excerpt or log line (e.g. a credential token)."""
        self.redactor.add(value)

    @property
    def http(self) -> httpx.AsyncClient:
        """The httpx client: login, health, event streams, and any call when a proxy is configured."""
        if self._http is None:
            t = self.timeouts
            limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
            if self._transport is None:
                # Ours, so plain calls can go to it directly (see ``_exchange``); same defaults httpx builds.
                self._transport = self._new_transport(limits)
                # Unbounded: every admitted case holds one stream for its whole conversation (the runner
                # admits up to twice --concurrency per lane), so a bound here only made the 257th wait
                # out the pool timeout and fail; the run's admission is what bounds the streams.
                self._stream_transport = self._new_transport(httpx.Limits(max_connections=None))
                self._own_transport = True
            self._http = httpx.AsyncClient(
                base_url=self.base_url,
                timeout=httpx.Timeout(t.default, connect=t.connect),
                limits=limits,
                transport=self._transport,
                headers={
                    "Accept": "application/json",
                    "User-Agent": "threadcase",
                    **({"Authorization": self._basic_auth} if self._basic_auth else {}),
                },
            )
            self._base_headers = dict(self._http.headers)
            self._cookie = None
        return self._http

    def _new_transport(self, limits: httpx.Limits) -> httpx.AsyncBaseTransport:
        return httpx.AsyncHTTPTransport(limits=limits, verify=_tls_context())

    async def login(self) -> None:
        """``POST /rest/login``; the session cookie is kept for every later call."""
        body = {"emailOrLdapLoginId": self.email, "password": self._password}
        self._logged_in = False
        try:
            await self._call("POST", "/rest/login", CallKind.IDEMPOTENT, json_body=body, relogin=False)
        except InstanceError as exc:
            if exc.status in (400, 401, 403):
                raise InstanceError(
                    f"login refused for {self.email!r} on {self.base_url}: check the email and password "
                    "(THREADCASE_EMAIL / THREADCASE_PASSWORD)",
                    method="POST",
                    path="/rest/login",
                    status=exc.status,
                ) from None
            raise
        if "n8n-auth" not in self.http.cookies:
            _log.debug("login on %s set no n8n-auth cookie", self.base_url)
        else:
            # n8n's default N8N_SECURE_COOKIE=true marks the cookie Secure; over http:// it is then never
            # sent back, and every later call would be a puzzling 401. Say so now, in one line.
            probe = httpx.Request("GET", self.base_url + "/rest/login")
            self.http.cookies.set_cookie_header(probe)
            if "n8n-auth=" not in probe.headers.get("cookie", ""):
                raise InstanceError(
                    f"{self.base_url} set its session cookie as Secure, which is never sent over "
                    f"{httpx.URL(self.base_url).scheme}://: start n8n with N8N_SECURE_COOKIE=false or reach it "
                    "over https",
                    method="POST",
                    path="/rest/login",
                )
        self._logged_in = True

    async def health(self) -> bool:
        """``GET /healthz/readiness`` answers 200; never raises (no answer = not healthy)."""
        try:
            response = await self.http.get("/healthz/readiness", timeout=self.timeouts.connect)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    # --- projects -----------------------------------------------------------------------------

    async def personal_project(self) -> Project:
        """The logged-in user's personal project (where threads and artifacts live by default)."""
        return self._parse(Project, await self._get("/rest/projects/personal"), "/rest/projects/personal")

    async def list_projects(self) -> list[Project]:
        """Every project the session can see."""
        data = await self._get("/rest/projects")
        return [self._parse(Project, item, "/rest/projects") for item in _items(data, "projects")]

    async def create_project(self, name: str) -> Project:
        """Create a team project. Not repeated once sent."""
        data = await self._call("POST", "/rest/projects", CallKind.UNSAFE, json_body={"name": name})
        return self._parse(Project, data, "/rest/projects")

    async def delete_project(self, project_id: str) -> None:
        """Delete a project; a missing one counts as deleted."""
        await self._delete(f"/rest/projects/{_q(project_id)}")

    # --- threads and chat ---------------------------------------------------------------------

    async def create_thread(
        self, thread_id: str, project_id: str, *, source_context: dict[str, Any] | None = None
    ) -> None:
        """Create an Instance AI thread in ``project_id``. Not repeated once sent."""
        request = wire.CreateThreadRequest(threadId=thread_id, projectId=project_id, sourceContext=source_context)
        await self._call("POST", f"{_AI}/threads", CallKind.UNSAFE, json_body=self._dump(request))

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread; a missing one counts as deleted."""
        await self._delete(f"{_AI}/threads/{_q(thread_id)}")

    async def thread_status(self, thread_id: str) -> wire.ThreadStatus:
        """Whether the thread is running, and any background work or queued memory tasks."""
        path = f"{_AI}/threads/{_q(thread_id)}/status"
        return self._parse(wire.ThreadStatus, await self._get(path), path)

    async def thread_messages(self, thread_id: str, *, raw: bool = True) -> list[wire.ThreadMessage]:
        """The thread's stored messages, oldest first (every page).

        ``raw`` (the default) asks for the stored blocks (``?raw=true``: text, tool calls with their
        input and output); otherwise n8n's "rich" form, where ``content`` is the text as one string.
        n8n pages newest first (page 0 = the newest ``limit`` messages, each page oldest first).
        """
        path = f"{_AI}/threads/{_q(thread_id)}/messages"
        pages: list[list[Any]] = []
        for page in range(_MAX_MESSAGE_PAGES):
            params: dict[str, Any] = {"limit": _MESSAGE_PAGE, "page": page}
            if raw:
                params["raw"] = "true"
            batch = _items(await self._get(path, params=params), "messages")
            pages.append(batch)
            if len(batch) < _MESSAGE_PAGE:
                break
        return [self._parse(wire.ThreadMessage, m, path) for batch in reversed(pages) for m in batch]

    async def chat(self, thread_id: str, request: wire.ChatRequest, *, headers: dict[str, str] | None = None) -> str:
        """Send one user message; returns the run id. Never repeated once it may have been received.

        Raises :class:`ProviderError` when the instance refuses because it has no model to run the agent.
        """
        path = f"{_AI}/chat/{_q(thread_id)}"
        data = await self._call("POST", path, CallKind.UNSAFE, json_body=self._dump(request), headers=headers)
        return self._parse(wire.ChatResponse, data, path).runId

    async def cancel(self, thread_id: str) -> None:
        """Cancel the thread's running run; safe to repeat."""
        await self._call("POST", f"{_AI}/chat/{_q(thread_id)}/cancel", CallKind.IDEMPOTENT)

    def subscribe(
        self, thread_id: str, *, last_event_id: str | None = None, connect_in_background: bool = False
    ) -> EventSubscription:
        """The thread's event stream, as an async context manager; open it before sending a chat.

        ``last_event_id`` resumes after an id seen earlier (the server replays everything newer).
        ``connect_in_background``: entering does not wait for the server; await ``ready()`` before the chat.
        """
        return EventSubscription(
            self, thread_id, last_event_id=last_event_id, connect_in_background=connect_in_background
        )

    async def confirm(self, request_id: str, body: wire.ConfirmBody) -> None:
        """Answer a widget. Repeated on transient failure: the server de-duplicates by requestId."""
        path = f"{_AI}/confirm/{_q(request_id)}"
        await self._call("POST", path, CallKind.IDEMPOTENT, json_body=self._dump(body))

    # --- run debug ----------------------------------------------------------------------------

    async def thread_runs(self, thread_id: str) -> list[wire.RunSummary]:
        """The thread's runs from run debug (ids and token totals)."""
        path = f"{_AI}/debug/threads/{_q(thread_id)}/runs"
        return [self._parse(wire.RunSummary, r, path) for r in _items(await self._get(path), "runs")]

    async def run_debug(self, run_id: str) -> wire.RunDebug:
        """One run's debug record: its steps with per-step token usage."""
        path = f"{_AI}/debug/runs/{_q(run_id)}"
        return self._parse(wire.RunDebug, await self._get(path), path)

    # --- eval routes --------------------------------------------------------------------------

    async def restore_thread(self, request: wire.RestoreThreadRequest) -> wire.RestoreThreadResponse:
        """Restore a seeded thread in one server transaction (all or nothing); long timeout."""
        path = f"{_AI}/eval/restore-thread"
        data = await self._call(
            "POST", path, CallKind.UNSAFE, json_body=self._dump(request), seconds=self.timeouts.restore
        )
        return self._parse(wire.RestoreThreadResponse, data, path)

    async def set_credential_allowlist(self, thread_id: str, credential_ids: list[str], bypass: list[str]) -> None:
        """Pin the thread's credential view to exactly ``credential_ids`` ([] = sees none).

        Replaces both lists on every call; ``bypass`` ids have their connection test resolved as passing.
        """
        request = wire.ThreadCredentialAllowlistRequest(
            threadId=thread_id, credentialIds=list(credential_ids), bypassCredentialTest=list(bypass)
        )
        await self._call(
            "POST", f"{_AI}/eval/thread-credential-allowlist", CallKind.IDEMPOTENT, json_body=self._dump(request)
        )

    async def seed_table_rows(self, thread_id: str, table_id: str, rows: list[dict[str, Any]]) -> int:
        """Replace a data table's rows (clear, then insert); returns the row count the server reports."""
        request = wire.SeedDataTableRowsRequest(threadId=thread_id, tableId=table_id, rows=rows)
        data = await self._call(
            "POST", f"{_AI}/eval/seed-data-table-rows", CallKind.IDEMPOTENT, json_body=self._dump(request)
        )
        count = data.get("rowCount") if isinstance(data, dict) else None
        return int(count) if isinstance(count, int) else len(rows)

    async def execute_with_mock(self, workflow_id: str, request: wire.ExecuteWithMockRequest) -> wire.ExecutionResult:
        """Run a workflow with its outside calls answered by mocks; waits for the execution's budget."""
        path = f"{_AI}/eval/execute-with-llm-mock/{_q(workflow_id)}"
        timeout = request.timeoutMs / 1000 + self.timeouts.execution_margin
        data = await self._call("POST", path, CallKind.UNSAFE, json_body=self._dump(request), seconds=timeout)
        return self._parse(wire.ExecutionResult, data, path)

    async def thread_memory(self, thread_id: str) -> wire.ThreadMemory:
        """The thread's observational memory (observations and cursor), for the compaction premise.

        Raises :class:`MissingRouteError` when the instance has no memory route (n8n 2.41 has none);
        found once, it is remembered in :attr:`features` and later calls raise without asking.
        """
        path = f"{_AI}/eval/threads/{_q(thread_id)}/memory"
        if self.features.memory_route is False:
            raise MissingRouteError("this instance exposes no memory route", method="GET", path=path, status=404)
        try:
            data = await self._get(path)
        except MissingRouteError:
            self.features.memory_route = False
            raise
        self.features.memory_route = True
        return self._parse(wire.ThreadMemory, data, path)

    # --- workflows ----------------------------------------------------------------------------

    async def list_workflows(self) -> list[wire.Workflow]:
        """Every workflow the session can see."""
        data = await self._get("/rest/workflows")
        return [self._parse(wire.Workflow, w, "/rest/workflows") for w in _items(data, "workflows")]

    async def get_workflow(self, workflow_id: str) -> wire.Workflow:
        """One workflow with its nodes and connections."""
        path = f"/rest/workflows/{_q(workflow_id)}"
        return self._parse(wire.Workflow, await self._get(path), path)

    async def rename_workflow(self, workflow_id: str, name: str) -> None:
        """Rename a workflow; safe to repeat."""
        await self._call("PATCH", f"/rest/workflows/{_q(workflow_id)}", CallKind.IDEMPOTENT, json_body={"name": name})

    async def run_workflow(self, workflow_id: str, *, trigger_name: str | None = None) -> str:
        """Run a saved workflow for real, as a user clicking "Execute workflow"; returns the executionId.

        ``POST /rest/workflows/:id/run`` ``{triggerToStartFrom: {name}}``: without ``trigger_name`` the
        workflow is read and its manual trigger picked (else its schedule trigger, else any trigger),
        since n8n refuses a run that names no start. Never repeated once it may have reached the server
        (a second POST would be a second execution), like :meth:`chat`. An instance that can only wait
        for a webhook call answers without an execution: that is an :class:`InstanceError` too, since
        nothing ran.
        """
        path = f"/rest/workflows/{_q(workflow_id)}/run"
        if trigger_name is None:
            # n8n refuses a run that names neither a trigger nor a destination node (400).
            workflow = await self.get_workflow(workflow_id)
            trigger_name = start_trigger(workflow)
            if trigger_name is None:
                raise InstanceError(
                    f"workflow {workflow_id} ({workflow.name!r}) has no enabled trigger node to start a run from",
                    method="POST",
                    path=path,
                )
        body: dict[str, Any] = {"triggerToStartFrom": {"name": trigger_name}}
        data = await self._call("POST", path, CallKind.UNSAFE, json_body=body)
        execution_id = data.get("executionId") if isinstance(data, dict) else None
        if execution_id is None or isinstance(execution_id, (dict, list, bool)):
            waiting = isinstance(data, dict) and data.get("waitingForWebhook")
            reason = "it waits for a webhook call" if waiting else "the answer carried no executionId"
            raise InstanceError(
                f"workflow {workflow_id} did not run: {reason}",
                method="POST",
                path=path,
                excerpt=self.redactor.excerpt(json.dumps(data, default=str)[:2000]),
            )
        return str(execution_id)

    async def get_execution(self, execution_id: str) -> dict[str, Any]:
        """One execution as the instance describes it (``id``, ``workflowId``, ``status``, ``startedAt``,
        ``stoppedAt``, ``data``, ...): n8n's shape varies by version, so it stays a plain dict."""
        path = f"/rest/executions/{_q(execution_id)}"
        data = await self._get(path)
        if not isinstance(data, dict):
            raise InstanceError(
                "unexpected answer shape for an execution (expected an object)",
                path=path,
                excerpt=self.redactor.excerpt(json.dumps(data, default=str)[:2000]),
            )
        return data

    async def list_executions(self, workflow_id: str) -> list[dict[str, Any]]:
        """A workflow's executions, newest first, without their run data (n8n's ``filter`` query)."""
        data = await self._get("/rest/executions", params={"filter": json.dumps({"workflowId": workflow_id})})
        return [e for e in _items(data, "results") if isinstance(e, dict)]

    async def delete_workflow(self, workflow_id: str) -> None:
        """Delete a workflow; n8n refuses to delete one that is not archived, so archive on that answer.

        A missing workflow counts as deleted (n8n answers 403 "... was not found in your projects").
        """
        path = f"/rest/workflows/{_q(workflow_id)}"
        try:
            await self._delete(path)
        except InstanceError as exc:
            if gone(exc):
                return
            if exc.status != 400:
                raise
            try:
                await self._call("POST", f"{path}/archive", CallKind.IDEMPOTENT, missing_ok=True)
                await self._delete(path)
            except InstanceError as again:
                if not gone(again):
                    raise

    # --- credentials --------------------------------------------------------------------------

    async def list_credentials(self) -> list[wire.CredentialSummary]:
        """Every credential the session can see, without their data."""
        data = await self._get("/rest/credentials")
        return [self._credential(c) for c in _items(data, "credentials")]

    async def create_credential(
        self, *, name: str, type: str, data: dict[str, Any], description: str | None = None
    ) -> wire.CredentialSummary:
        """Create a credential. Not repeated once sent (a second POST would create a second one)."""
        body: dict[str, Any] = {"name": name, "type": type, "data": data}
        if description is not None:
            body["description"] = description
        answer = await self._call("POST", "/rest/credentials", CallKind.UNSAFE, json_body=body)
        return self._credential(answer)

    async def delete_credential(self, credential_id: str) -> None:
        """Delete a credential; a missing one counts as deleted."""
        await self._delete(f"/rest/credentials/{_q(credential_id)}")

    def _credential(self, data: Any) -> wire.CredentialSummary:
        # Whatever the server echoes, the secret data never enters our objects (or reports).
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != "data"}
        return self._parse(wire.CredentialSummary, data, "/rest/credentials")

    # --- folders, data tables, agents ---------------------------------------------------------

    async def list_folders(self, project_id: str) -> list[wire.Folder]:
        """Every folder of a project (all pages)."""
        path = f"/rest/projects/{_q(project_id)}/folders"
        return [self._parse(wire.Folder, f, path) for f in await self._paged(path, "folders")]

    async def delete_folder(self, project_id: str, folder_id: str) -> None:
        """Delete a folder of a project; a missing one counts as deleted."""
        await self._delete(f"/rest/projects/{_q(project_id)}/folders/{_q(folder_id)}")

    async def list_data_tables(self, project_id: str) -> list[dict[str, Any]]:
        """Every data table of a project (all pages), as the server describes them."""
        items = await self._paged(f"/rest/projects/{_q(project_id)}/data-tables", "dataTables")
        return [t for t in items if isinstance(t, dict)]

    async def delete_data_table(self, project_id: str, table_id: str) -> None:
        """Delete a data table of a project; a missing one counts as deleted."""
        await self._delete(f"/rest/projects/{_q(project_id)}/data-tables/{_q(table_id)}")

    async def get_agent(self, project_id: str, agent_id: str) -> AgentArtifact:
        """An agent's config and skill bodies (the two ``agents/v2`` reads)."""
        base = f"/rest/projects/{_q(project_id)}/agents/v2/{_q(agent_id)}"
        config = await self._get(f"{base}/config")
        if isinstance(config, dict) and isinstance(config.get("config"), dict):
            config = config["config"]
        skills = await self._get(f"{base}/skills")
        if isinstance(skills, dict) and isinstance(skills.get("skills"), dict):
            skills = skills["skills"]
        return AgentArtifact(
            id=agent_id,
            config=config if isinstance(config, dict) else {},
            skills=skills if isinstance(skills, dict) else {},
        )

    async def delete_agent(self, project_id: str, agent_id: str) -> None:
        """Delete an agent of a project; a missing one counts as deleted."""
        await self._delete(f"/rest/projects/{_q(project_id)}/agents/v2/{_q(agent_id)}")

    # --- plumbing -----------------------------------------------------------------------------

    async def _get(self, path: str, *, params: dict[str, Any] | None = None) -> Any:
        return await self._call("GET", path, CallKind.READ, params=params)

    async def _delete(self, path: str) -> None:
        await self._call("DELETE", path, CallKind.IDEMPOTENT, missing_ok=True)

    async def _paged(self, path: str, key: str) -> list[Any]:
        items: list[Any] = []
        while True:
            data = await self._get(path, params={"take": _PAGE, "skip": len(items)})
            page = _items(data, key)
            items.extend(page)
            total = data.get("count") if isinstance(data, dict) else None
            if len(page) < _PAGE or (isinstance(total, int) and len(items) >= total):
                return items

    @staticmethod
    def _dump(model: BaseModel) -> bytes:
        # Encoded once, by pydantic-core, straight to JSON: no dict of it in between, nor a second encoder.
        return model.model_dump_json(exclude_none=True).encode()

    async def _call(
        self,
        method: str,
        path: str,
        kind: CallKind,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        seconds: float | None = None,
        missing_ok: bool = False,
        relogin: bool = True,
    ) -> Any:
        """One call with the retry policy of its kind; returns the unwrapped ``data``."""
        response = await self._send(method, path, kind, json_body, params, headers, seconds)
        if response.status_code == 401 and relogin:
            # A session can expire mid-suite (an instance restart); log in again once and repeat.
            _log.info("session on %s expired; logging in again", self.base_url)
            await self.login()
            response = await self._send(method, path, kind, json_body, params, headers, seconds)
        if missing_ok and response.status_code == 404 and not route_missing(response.content):
            return None
        if response.status_code >= 400:
            raise self.refusal("instance refused the call", method, path, response, response.content)
        return self._unwrap(method, path, response)

    async def _send(
        self,
        method: str,
        path: str,
        kind: CallKind,
        json_body: Any,
        params: dict[str, Any] | None,
        headers: dict[str, str] | None,
        seconds: float | None,
    ) -> httpx.Response:
        request = self._request(method, path, json_body, params, headers, seconds)
        started = time.perf_counter()
        first: Exception | None = None
        try:
            # Most calls succeed at once, and building tenacity's loop costs about as much as the call
            # itself; so the first attempt runs bare and only a failure worth repeating enters the loop.
            try:
                response = await self._exchange(request)
                if retryable_status(kind, response.status_code):
                    raise RetryableStatus(response)
            except Exception as exc:
                if not should_retry(kind, exc):
                    raise
                first = exc
            if first is not None:
                async for attempt in self.retry.retrying(kind):
                    with attempt:
                        if first is not None:
                            # Replayed as the loop's first attempt, so attempts and backoff are counted as before.
                            failed, first = first, None
                            raise failed
                        _log.debug("%s %s: attempt %d", method, path, attempt.retry_state.attempt_number)
                        response = await self._exchange(request)
                        if retryable_status(kind, response.status_code):
                            raise RetryableStatus(response)
        except RetryableStatus as exc:
            response = exc.response
        except httpx.TransportError as exc:
            raise InstanceError(
                f"no answer from {self.base_url} ({type(exc).__name__}: {self.redactor.text(str(exc)) or 'no detail'})",
                method=method,
                path=path,
            ) from exc
        _log.debug("%s %s -> %d (%.0f ms)", method, path, response.status_code, (time.perf_counter() - started) * 1000)
        return response

    def _request(
        self,
        method: str,
        path: str,
        json_body: Any,
        params: dict[str, Any] | None,
        headers: dict[str, str] | None,
        seconds: float | None,
    ) -> httpx.Request:
        """The request as httpx's client would build it (its default headers, the session cookie).

        ``json_body``: the JSON body, already encoded (bytes, see :meth:`_dump`) or a value to encode.
        """
        http = self.http
        content = None if json_body is None else _json_bytes(json_body)
        if not self._direct:
            client_timeout = httpx.Timeout(seconds or self.timeouts.default, connect=self.timeouts.connect)
            if content is not None:
                headers = {"Content-Type": "application/json", **(headers or {})}
            return http.build_request(
                method, path, content=content, params=params, headers=headers, timeout=client_timeout
            )
        if self._cookie is None:
            probe = httpx.Request("GET", self.base_url + "/")
            http.cookies.set_cookie_header(probe)
            self._cookie = probe.headers.get("cookie", "")
            self._headers.clear()
        # Kept per (has a body, extra headers): an event stream's Accept / Cache-Control pair and a
        # run's own headers repeat on every call, and merging them was a tenth of opening a stream.
        key = (content is not None, tuple(headers.items()) if headers else ())
        merged = self._headers.get(key)
        if merged is None:
            fixed = dict(self._base_headers)
            if self._cookie:
                fixed["Cookie"] = self._cookie
            if content is not None:
                fixed["Content-Type"] = "application/json"
            merged = httpx.Headers(fixed)
            if headers:
                merged.update(headers)
            if len(self._headers) >= _HEADER_CACHE_SIZE:
                self._headers.clear()  # a resumed stream's Last-Event-ID makes each of its keys new
            self._headers[key] = merged
        timeout = (
            self._default_timeout
            if seconds is None
            else httpx.Timeout(seconds, connect=self.timeouts.connect).as_dict()
        )
        url: httpx.URL | str = self.base_url + path
        if params is None:
            # Parsing the URL is half of building a request; a case calls the same few paths repeatedly
            # (its thread's chat path once per turn), so parsed ones are kept (bounded, reset when full).
            cached = self._urls.get(path)
            if cached is None:
                if len(self._urls) >= _URL_CACHE_SIZE:
                    self._urls.clear()
                cached = self._urls[path] = httpx.URL(url)
            url = cached
        return httpx.Request(
            method, url, params=params, content=content, headers=merged, extensions={"timeout": timeout}
        )

    async def _exchange(self, request: httpx.Request) -> httpx.Response:
        """Send one request and read its whole answer; a new session cookie goes into the jar."""
        if not self._direct or self._transport is None:
            return await self.http.send(request)
        response = await self._transport.handle_async_request(request)
        response.request = request
        try:
            await response.aread()
        finally:
            await response.aclose()
        if "set-cookie" in response.headers:
            self.http.cookies.extract_cookies(response)
            self._cookie = None
        return response

    def _unwrap(self, method: str, path: str, response: httpx.Response) -> Any:
        if not response.content.strip():
            return None
        try:
            body = response.json()
        except ValueError:
            raise self.refusal(
                "instance answered with something that is not JSON", method, path, response, response.content
            ) from None
        if isinstance(body, dict) and "data" in body:
            return body["data"]
        return body

    def _parse(self, model: type[M], data: Any, path: str) -> M:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) or "(root)" for e in exc.errors()[:3])
            raise InstanceError(
                f"unexpected answer shape for {model.__name__} (fields: {fields})",
                path=path,
                excerpt=self.redactor.excerpt(json.dumps(data, default=str)[:2000]),
            ) from None

    def refusal(
        self, message: str, method: str, path: str, response: httpx.Response, body: bytes | str
    ) -> InstanceError:
        """The error for an answer with an error status: method, path, status and a redacted excerpt
        (a known cause gets its own message and type: see :func:`.answers.classify_refusal`)."""
        return classify_refusal(
            message, method, path, response.status_code, body, self.redactor, logged_in=self._logged_in
        )

    async def open_event_stream(self, path: str, last_event_id: str | None) -> httpx.Response:
        """Open an event stream: the response once its head arrived, its body unread; the caller closes it."""
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        t = self.timeouts
        timeout = httpx.Timeout(t.default, connect=t.connect, read=t.stream_read)
        if not self._direct or self._transport is None:
            response = await self.http.send(
                self.http.build_request("GET", path, headers=headers, timeout=timeout), stream=True
            )
            if "set-cookie" in response.headers:
                self._cookie = None  # the client put it in the jar; plain calls must pick it up
            return response
        # Straight to the transport, as plain calls go (see ``_exchange``): one stream per case-iteration.
        request = self._request("GET", path, None, None, headers, None)
        request.extensions["timeout"] = timeout.as_dict()
        response = await (self._stream_transport or self._transport).handle_async_request(request)
        response.request = request
        if "set-cookie" in response.headers:
            self.http.cookies.extract_cookies(response)
            self._cookie = None
        return response
