"""A fake LangSmith API on 127.0.0.1 that the real ``langsmith`` SDK (``requests``) talks to.

Implements what replay calls: ``GET /api/v1/workspaces`` (the key's workspaces), ``GET /sessions``
(``Client.read_project``, scoped by the ``X-Tenant-Id`` workspace header), ``POST /runs/query``
(``Client.list_runs``: project, a small filter language — ``and``/``or``/``eq``/``neq`` over
``thread_id``, ``run_type``, ``name``, ``is_root`` — ``select`` and cursor pagination), and
``GET /info``. Every request is recorded, so tests can assert what was asked and with which key.

It also ingests what the SDK sends to record runs — ``POST /runs`` (``Client.create_run`` without
auto-batching), ``PATCH /runs/{id}`` (``update_run``) and ``POST /runs/batch`` (``{"post": [...],
"patch": [...]}``) — into the run's ``session_name`` project of the ``X-Tenant-Id`` workspace (the first
one, created as "Default" when there is none), so ``list_runs`` returns them. ``ingest_delay`` slows
every ingest answer (a slow endpoint); ``ingest_status`` makes them fail with that HTTP status.

For experiments it keeps datasets and examples per workspace, as the SDK's plain-JSON paths write
them: ``POST /datasets``, ``GET /datasets`` (by ``name``) and ``GET /datasets/{id}``, ``GET /examples``
(by ``dataset``, offset pagination), ``POST /examples/bulk``, ``PATCH /examples/{id}`` (each write
kept in ``example_writes``, so a test sees every version); projects created with ``POST /sessions``
(a ``reference_dataset_id`` makes one an experiment; a second project of the same name is a 409, as
LangSmith answers) and closed with ``PATCH /sessions/{id}``; and ``POST /feedback``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

__all__ = ["FakeLangSmith", "RecordedRequest", "parse_filter"]

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?)|(?P<id>[A-Za-z_][\w.]*)|(?P<p>[(),]))')


def parse_filter(text: str) -> Any:
    """Parse LangSmith's filter syntax into nested tuples ``(op, args...)``; raises ValueError."""
    tokens: list[tuple[str, Any]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"bad filter at {pos}: {text[pos : pos + 20]!r}")
        pos = match.end()
        kind = match.lastgroup
        value = match.group(kind or "p")
        if kind == "str":
            tokens.append(("lit", json.loads(value)))
        elif kind == "num":
            tokens.append(("lit", float(value) if "." in value else int(value)))
        elif kind == "id":
            tokens.append(("id", value))
        else:
            tokens.append(("p", value))
    node, rest = _parse(tokens)
    if rest:
        raise ValueError(f"trailing tokens in filter: {rest}")
    return node


def _parse(tokens: list[tuple[str, Any]]) -> tuple[Any, list[tuple[str, Any]]]:
    if not tokens:
        raise ValueError("unexpected end of filter")
    (kind, value), rest = tokens[0], tokens[1:]
    if kind == "lit":
        return ("lit", value), rest
    if kind != "id":
        raise ValueError(f"unexpected {value!r}")
    if not rest or rest[0] != ("p", "("):
        return ("field", value), rest
    rest = rest[1:]
    args: list[Any] = []
    while True:
        arg, rest = _parse(rest)
        args.append(arg)
        if not rest:
            raise ValueError("unclosed call")
        if rest[0] == ("p", ","):
            rest = rest[1:]
            continue
        if rest[0] == ("p", ")"):
            return (value, *args), rest[1:]
        raise ValueError(f"unexpected {rest[0][1]!r}")


@dataclass
class RecordedRequest:
    method: str
    path: str
    api_key: str | None
    tenant: str | None
    params: dict[str, str]
    body: Any


@dataclass
class _Workspace:
    id: str
    display_name: str
    projects: dict[str, str] = field(default_factory=dict)
    """project name -> project (session) id."""
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """project id -> runs, LangSmith JSON."""
    project_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    """project id -> what ``POST /sessions`` gave beyond the name (``reference_dataset_id``, ``extra``, ...)."""
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    """dataset id -> dataset, LangSmith JSON."""
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    """example id -> its latest version, LangSmith JSON."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeLangSmith:
    """State and ASGI app of the fake. Keys in ``api_keys`` are accepted; others get 401."""

    def __init__(self, *, api_keys: set[str] | None = None, page_size: int = 100) -> None:
        self.api_keys = api_keys if api_keys is not None else {"lsv2-test-key"}
        self.page_size = page_size
        self.workspaces: list[_Workspace] = []
        self.requests: list[RecordedRequest] = []
        self.fail_workspace_listing = False
        self.ingest_delay = 0.0
        self.ingest_status: int | None = None
        self.feedback: list[dict[str, Any]] = []
        """Every ``POST /feedback`` body, in arrival order."""
        self.example_writes: list[dict[str, Any]] = []
        """Every example as written (created or patched), in order: the dataset's versions."""
        self.app = self._build_app()

    def add_workspace(self, display_name: str) -> str:
        ws = _Workspace(id=str(uuid.uuid4()), display_name=display_name)
        self.workspaces.append(ws)
        return ws.id

    def add_runs(self, workspace_id: str, project: str, runs: list[dict[str, Any]]) -> None:
        ws = self._workspace(workspace_id)
        assert ws is not None
        project_id = ws.projects.setdefault(project, str(uuid.uuid4()))
        ws.runs.setdefault(project_id, []).extend(runs)

    def ingested(self) -> list[dict[str, Any]]:
        """Every run stored in any workspace and project, in arrival order per project."""
        return [run for ws in self.workspaces for runs in ws.runs.values() for run in runs]

    def _ingest(self, tenant: str | None, runs: list[dict[str, Any]], patches: list[dict[str, Any]]) -> None:
        ws = self._workspace(tenant)
        if ws is None:
            ws = self._workspace(self.add_workspace("Default"))
            assert ws is not None
        for run in runs:
            stored = dict(run)
            project = stored.pop("session_name", None) or "default"
            project_id = str(stored.pop("session_id", None) or ws.projects.setdefault(project, str(uuid.uuid4())))
            ws.projects.setdefault(project, project_id)
            stored["session_id"] = project_id
            stored.setdefault("parent_run_id", None)
            stored.setdefault("trace_id", stored.get("id"))
            ws.runs.setdefault(project_id, []).append(stored)
        by_id = {r["id"]: r for pool in ws.runs.values() for r in pool}
        for patch in patches:
            target = by_id.get(str(patch.get("id")))
            if target is not None:
                target.update({k: v for k, v in patch.items() if v is not None and k != "session_name"})

    def datasets(self) -> list[dict[str, Any]]:
        return [d for ws in self.workspaces for d in ws.datasets.values()]

    def examples(self, dataset_id: str | None = None) -> list[dict[str, Any]]:
        found = [e for ws in self.workspaces for e in ws.examples.values()]
        return [e for e in found if dataset_id is None or e["dataset_id"] == dataset_id]

    def experiment(self, name: str) -> dict[str, Any] | None:
        """The project called ``name`` (its info and id), or None."""
        for ws in self.workspaces:
            if name in ws.projects:
                project_id = ws.projects[name]
                return {"id": project_id, "name": name, **ws.project_info.get(project_id, {})}
        return None

    def runs_of(self, project: str) -> list[dict[str, Any]]:
        for ws in self.workspaces:
            if project in ws.projects:
                return list(ws.runs.get(ws.projects[project], []))
        return []

    def bodies_text(self) -> str:
        """Every request body the fake received, as one JSON text (to assert what never reached it)."""
        return "\n".join(json.dumps(r.body, default=str) for r in self.requests)

    def _home(self, tenant: str | None) -> _Workspace:
        ws = self._workspace(tenant)
        if ws is None:
            ws = self._workspace(self.add_workspace("Default"))
            assert ws is not None
        return ws

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    def _workspace(self, tenant: str | None) -> _Workspace | None:
        if tenant is None:
            return self.workspaces[0] if self.workspaces else None
        return next((w for w in self.workspaces if w.id == tenant), None)

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Any:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            key = request.headers.get("x-api-key")
            self.requests.append(
                RecordedRequest(
                    method=request.method,
                    path=request.url.path,
                    api_key=key,
                    tenant=request.headers.get("x-tenant-id"),
                    params=dict(request.query_params),
                    body=body,
                )
            )
            if key not in self.api_keys:
                return JSONResponse({"detail": "Invalid token"}, status_code=401)
            return await call_next(request)

        async def ingest_gate() -> JSONResponse | None:
            if self.ingest_delay:
                await anyio.sleep(self.ingest_delay)
            if self.ingest_status is not None:
                return JSONResponse({"detail": "ingest refused"}, status_code=self.ingest_status)
            return None

        @app.post("/runs")
        async def create_run(request: Request) -> Any:
            refused = await ingest_gate()
            if refused is not None:
                return refused
            self._ingest(request.headers.get("x-tenant-id"), [await request.json()], [])
            return {}

        @app.patch("/runs/{run_id}")
        async def update_run(run_id: str, request: Request) -> Any:
            refused = await ingest_gate()
            if refused is not None:
                return refused
            self._ingest(request.headers.get("x-tenant-id"), [], [{**await request.json(), "id": run_id}])
            return {}

        @app.post("/runs/batch")
        async def batch(request: Request) -> Any:
            refused = await ingest_gate()
            if refused is not None:
                return refused
            body = await request.json()
            self._ingest(request.headers.get("x-tenant-id"), body.get("post") or [], body.get("patch") or [])
            return {}

        @app.post("/datasets")
        async def create_dataset(request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            body = await request.json()
            if any(d["name"] == body.get("name") for d in ws.datasets.values()):
                return JSONResponse({"detail": "Dataset with this name already exists."}, status_code=409)
            dataset = {
                "id": str(uuid.uuid4()),
                "name": body["name"],
                "description": body.get("description"),
                "data_type": body.get("data_type", "kv"),
                "extra": body.get("extra"),
                "created_at": _now(),
                "modified_at": _now(),
                "tenant_id": ws.id,
                "example_count": 0,
            }
            ws.datasets[dataset["id"]] = dataset
            return dataset

        @app.get("/datasets")
        async def list_datasets(request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            name = request.query_params.get("name")
            return [d for d in ws.datasets.values() if name is None or d["name"] == name]

        @app.get("/datasets/{dataset_id}")
        async def read_dataset(dataset_id: str, request: Request) -> Any:
            found = self._home(request.headers.get("x-tenant-id")).datasets.get(dataset_id)
            return found if found is not None else JSONResponse({"detail": "not found"}, status_code=404)

        def write_example(ws: _Workspace, example: dict[str, Any]) -> dict[str, Any]:
            ws.examples[example["id"]] = example
            self.example_writes.append(json.loads(json.dumps(example)))
            dataset = ws.datasets.get(example["dataset_id"])
            if dataset is not None:
                dataset["modified_at"] = example["modified_at"]
                dataset["example_count"] = sum(1 for e in ws.examples.values() if e["dataset_id"] == dataset["id"])
            return example

        @app.get("/examples")
        async def list_examples(request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            dataset = request.query_params.get("dataset")
            found = [e for e in ws.examples.values() if dataset is None or e["dataset_id"] == dataset]
            offset = int(request.query_params.get("offset") or 0)
            limit = int(request.query_params.get("limit") or 100)
            return found[offset : offset + limit]

        @app.post("/examples/bulk")
        async def create_examples(request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            created = []
            for item in await request.json():
                if item.get("dataset_id") not in ws.datasets:
                    return JSONResponse({"detail": "dataset not found"}, status_code=404)
                example = {
                    "id": str(item.get("id") or uuid.uuid4()),
                    "dataset_id": item["dataset_id"],
                    "inputs": item.get("inputs") or {},
                    "outputs": item.get("outputs"),
                    "metadata": item.get("metadata"),
                    "created_at": _now(),
                    "modified_at": _now(),
                }
                created.append(write_example(ws, example))
            return created

        @app.patch("/examples/{example_id}")
        async def update_example(example_id: str, request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            current = ws.examples.get(example_id)
            if current is None:
                return JSONResponse({"detail": "not found"}, status_code=404)
            body = await request.json()
            updated = {**current, **{k: v for k, v in body.items() if k in ("inputs", "outputs", "metadata")}}
            updated["modified_at"] = _now()
            write_example(ws, updated)
            return {"message": "Example updated successfully"}

        @app.post("/sessions")
        async def create_session(request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            body = await request.json()
            if body["name"] in ws.projects:
                return JSONResponse({"detail": "Session already exists."}, status_code=409)
            project_id = str(body.get("id") or uuid.uuid4())
            ws.projects[body["name"]] = project_id
            ws.project_info[project_id] = {
                "reference_dataset_id": body.get("reference_dataset_id"),
                "extra": body.get("extra"),
                "description": body.get("description"),
                "start_time": _now(),
                "end_time": None,
            }
            return {"id": project_id, "name": body["name"], "tenant_id": ws.id, **ws.project_info[project_id]}

        @app.patch("/sessions/{project_id}")
        async def update_session(project_id: str, request: Request) -> Any:
            ws = self._home(request.headers.get("x-tenant-id"))
            name = next((n for n, pid in ws.projects.items() if pid == project_id), None)
            if name is None:
                return JSONResponse({"detail": "not found"}, status_code=404)
            body = await request.json()
            info = ws.project_info.setdefault(project_id, {"reference_dataset_id": None})
            info.update({k: v for k, v in body.items() if v is not None and k != "name"})
            return {"id": project_id, "name": name, "tenant_id": ws.id, **info}

        @app.post("/feedback")
        async def create_feedback(request: Request) -> Any:
            body = await request.json()
            self.feedback.append(body)
            return body

        @app.get("/info")
        async def info() -> dict[str, Any]:
            return {"version": "0.10.0", "batch_ingest_config": {}}

        @app.get("/api/v1/workspaces")
        async def workspaces() -> Any:
            if self.fail_workspace_listing:
                return JSONResponse({"detail": "boom"}, status_code=500)
            return [{"id": w.id, "display_name": w.display_name, "role_name": "Admin"} for w in self.workspaces]

        @app.get("/sessions")
        async def sessions(request: Request) -> Any:
            ws = self._workspace(request.headers.get("x-tenant-id"))
            if ws is None:
                return JSONResponse({"detail": "workspace not found"}, status_code=403)
            name = request.query_params.get("name")
            found = [(n, pid) for n, pid in ws.projects.items() if name is None or n == name]
            return [
                {
                    "id": pid,
                    "name": n,
                    "tenant_id": ws.id,
                    "reference_dataset_id": None,
                    "start_time": "2026-01-01T00:00:00",
                    **ws.project_info.get(pid, {}),
                }
                for n, pid in found
            ]

        @app.post("/runs/query")
        async def runs_query(request: Request) -> Any:
            ws = self._workspace(request.headers.get("x-tenant-id"))
            if ws is None:
                return JSONResponse({"detail": "workspace not found"}, status_code=403)
            body = await request.json()
            try:
                condition = parse_filter(body["filter"]) if body.get("filter") else None
            except ValueError as exc:
                return JSONResponse({"detail": f"invalid filter: {exc}"}, status_code=400)
            pool: list[dict[str, Any]] = []
            for project_id in body.get("session") or []:
                pool.extend(ws.runs.get(project_id, []))
            by_id = {r["id"]: r for r in pool}
            try:
                matched = [r for r in pool if condition is None or _matches(condition, r, by_id)]
            except ValueError as exc:
                return JSONResponse({"detail": str(exc)}, status_code=400)
            if body.get("run_type"):
                matched = [r for r in matched if r.get("run_type") == body["run_type"]]
            offset = int(body.get("cursor") or 0)
            page = matched[offset : offset + self.page_size]
            select = body.get("select")
            if select:
                page = [{k: v for k, v in r.items() if k in select or k in ("id", "trace_id")} for r in page]
            following = offset + self.page_size
            return {"runs": page, "cursors": {"next": str(following) if following < len(matched) else None}}

        return app


def _field(name: str, run: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> Any:
    if name == "thread_id":
        # LangSmith indexes a thread by the metadata of the trace's root; children inherit it.
        own = (run.get("extra") or {}).get("metadata", {}).get("thread_id")
        if own is not None:
            return own
        root = by_id.get(run.get("trace_id") or "")
        return None if root is None else (root.get("extra") or {}).get("metadata", {}).get("thread_id")
    if name == "is_root":
        return run.get("parent_run_id") is None
    if name in ("run_type", "name", "id", "trace_id"):
        return run.get(name)
    raise ValueError(f"unsupported filter field {name!r}")


def _value(node: Any, run: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> Any:
    if node[0] == "lit":
        return node[1]
    if node[0] == "field":
        return _field(node[1], run, by_id)
    raise ValueError(f"unexpected {node[0]!r} as a value")


def _matches(node: Any, run: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> bool:
    op, *args = node
    if op == "and":
        return all(_matches(a, run, by_id) for a in args)
    if op == "or":
        return any(_matches(a, run, by_id) for a in args)
    if op in ("eq", "neq"):
        left, right = (_value(a, run, by_id) for a in args)
        return bool(left == right) if op == "eq" else bool(left != right)
    raise ValueError(f"unsupported filter operator {op!r}")
