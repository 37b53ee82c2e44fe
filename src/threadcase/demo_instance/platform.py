"""The demo instance's state: storage, accounts and sessions, event hub, runs, faults, traces.

One :class:`Platform` per app (``app.state.platform``); routes reach everything through it. Also the
small helpers every route uses: who is calling (:meth:`Platform.user`), whose thread this is
(:meth:`Platform.thread_for`), body parsing with 422s that name the field (:func:`parse_body`) and the
``{"data": ...}`` envelope (:func:`ok`).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import uuid
from dataclasses import dataclass
from typing import Any, TypeVar

from anyio.lowlevel import EventLoopToken
from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from threadcase.demo_instance.agent.protocol import BuilderAgent
from threadcase.demo_instance.apierror import ApiError, validation_message
from threadcase.demo_instance.bodies import decode_json
from threadcase.demo_instance.events import EventHub, fast_json, utc_now
from threadcase.demo_instance.faults import FaultInjector
from threadcase.demo_instance.runs import RunManager
from threadcase.demo_instance.settings import MISBEHAVIOURS, DemoConfigError, DemoSettings
from threadcase.demo_instance.storage import Store
from threadcase.demo_instance.traces import TraceShipper, TraceWriter

__all__ = ["AUTH_COOKIE", "Platform", "User", "ok", "ok_plain", "parse_body", "parse_misbehaviours"]

AUTH_COOKIE = "n8n-auth"
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class User:
    """A demo account: id, email, and whether it is the owner."""

    id: str
    email: str
    is_owner: bool

    def public(self) -> dict[str, Any]:
        """The account as ``/rest/login`` returns it (no secrets)."""
        return {
            "id": self.id,
            "email": self.email,
            "firstName": "Demo",
            "lastName": "Owner" if self.is_owner else "Member",
            "isOwner": self.is_owner,
            "role": "global:owner" if self.is_owner else "global:member",
            "globalScopes": ["instanceAi:message", "instanceAi:eval"] if self.is_owner else ["instanceAi:message"],
        }


def _user_id(email: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"threadcase-demo:{email.lower()}"))


class Platform:
    """Everything one running demo instance holds."""

    def __init__(self, settings: DemoSettings, agent: BuilderAgent | None) -> None:
        self.settings = settings
        store: Store | None = None
        flag = "--db"
        try:
            # No --db: a temporary database, in memory (nothing to keep, so nothing to write to disk).
            if settings.db_path is not None:
                settings.db_path.parent.mkdir(parents=True, exist_ok=True)
            store = Store(settings.db_path)
            flag = "--trace-to"
            tracer = (
                TraceWriter(settings.trace_to, settings.trace_project)
                if settings.trace_to or settings.trace_endpoint
                else None
            )
            if tracer is not None and settings.trace_endpoint:
                try:
                    tracer.shipper = TraceShipper(settings.trace_endpoint, settings.trace_api_key)
                except DemoConfigError:
                    # The SDK refused the endpoint: the same clean-up as an unusable path, then its one line.
                    store.close()
                    raise
        except (OSError, sqlite3.Error) as exc:
            # A path that cannot be used is the user's to fix: one line.
            if store is not None:
                store.close()
            value = settings.db_path if flag == "--db" else settings.trace_to
            what = "THREADCASE_DEMO_DB" if flag == "--db" else "THREADCASE_DEMO_TRACE_TO"
            raise DemoConfigError(
                f"demo {flag} ({what}) {str(value) if value else '(temporary)'!r} cannot be used: {exc}; "
                "give a writable path"
            ) from None
        self.store = store
        # A temporary database dies with the process, and with it any use of stored events (restart replay).
        self.hub = EventHub(self.store, persist=settings.db_path is not None)
        self.faults = (
            FaultInjector(settings.faults, settings.seed, max_delay=settings.fault_delay_seconds)
            if settings.faults > 0
            else None
        )
        self.tracer = tracer
        self.runs = RunManager(settings=settings, store=self.store, hub=self.hub, agent=agent, tracer=tracer)
        self.token: EventLoopToken | None = None
        # Passwords are compared by digest so the plain text is not kept beyond settings.
        self._accounts: dict[str, tuple[User, bytes]] = {}
        self._sessions: dict[str, User] = {}
        accounts = [(settings.email, settings.password.get_secret_value(), True)]
        accounts += [(email, pw.get_secret_value(), False) for email, pw in settings.members.items()]
        for email, password, is_owner in accounts:
            user = User(_user_id(email), email, is_owner)
            self._accounts[email.lower()] = (user, hashlib.sha256(password.encode()).digest())
            self._ensure_user(user)

    def _ensure_user(self, user: User) -> None:
        with self.store.tx():
            if self.store.get("users", user.id) is None:
                self.store.insert("users", user.id, user.public(), scope=None)
            if not any(p["type"] == "personal" for p in self.store.list("projects", user.id)):
                project = {
                    "id": f"proj_{uuid.uuid4().hex[:16]}",
                    "name": f"Demo {'Owner' if user.is_owner else 'Member'} <{user.email}>",
                    "type": "personal",
                    "ownerId": user.id,
                    "createdAt": utc_now(),
                }
                self.store.insert("projects", project["id"], project, scope=user.id)

    # --- auth -----------------------------------------------------------------------------------

    def login(self, email: str, password: str) -> tuple[str, User]:
        """Check the credentials and open a session; returns (cookie token, user) or raises 401."""
        entry = self._accounts.get(email.lower())
        digest = hashlib.sha256(password.encode()).digest()
        if entry is None or not secrets.compare_digest(entry[1], digest):
            raise ApiError(401, "Wrong username or password. Do you have caps lock on?")
        token = secrets.token_urlsafe(32)
        self._sessions[token] = entry[0]
        return token, entry[0]

    def logout(self, token: str | None) -> None:
        """End the session of ``token`` (unknown tokens are ignored)."""
        if token:
            self._sessions.pop(token, None)

    def user(self, request: Request) -> User:
        """The logged-in caller, or 401."""
        user = self._sessions.get(_auth_token(request))
        if user is None:
            raise ApiError(401, "Unauthorized: log in with POST /rest/login first (n8n-auth cookie missing or expired)")
        return user

    def owner(self, request: Request) -> User:
        """The logged-in caller if they are the owner (eval routes), else 401/403."""
        user = self.user(request)
        if not user.is_owner:
            raise ApiError(403, "Forbidden: eval routes need the instanceAi:eval scope (owner only)")
        return user

    # --- ownership ------------------------------------------------------------------------------

    def personal_project(self, user: User) -> dict[str, Any]:
        """The user's personal project."""
        return next(p for p in self.store.list("projects", user.id) if p["type"] == "personal")

    def project_for(self, user: User, project_id: str) -> dict[str, Any]:
        """The project, when the user may use it (404 otherwise)."""
        project = self.store.get("projects", project_id)
        if project is None:
            raise ApiError(404, f"project {project_id!r} not found")
        if project.get("ownerId") != user.id:
            raise ApiError(403, f"project {project_id!r} belongs to another user")
        return project

    def thread_for(self, user: User, thread_id: str) -> dict[str, Any]:
        """The thread, when it belongs to the user (404 otherwise)."""
        thread = self.store.get("threads", thread_id)
        if thread is None:
            raise ApiError(404, f"thread {thread_id!r} not found; create it with POST /rest/instance-ai/threads")
        if thread.get("ownerId") != user.id:
            raise ApiError(403, f"thread {thread_id!r} belongs to another user")
        return thread

    # --- lifecycle ------------------------------------------------------------------------------

    def begin_close(self) -> None:
        """End open event streams and pending runs (call on the server's loop)."""
        self.hub.close()
        for thread_id in list(self.runs.active):
            self.runs.cancel(thread_id)

    def close(self) -> None:
        """Flush traces to the endpoint (bounded) and close storage (a temporary database is gone with it)."""
        self.runs.close()
        if self.tracer is not None:
            self.tracer.close(self.settings.trace_flush_seconds)
        self.store.close()


_TOKENS: dict[tuple[bytes, ...], str] = {}
"""Auth token by the request's raw ``Cookie`` headers: a client sends the same ones on every request."""


def _auth_token(request: Request) -> str:
    """``request.cookies.get(AUTH_COOKIE, "")``, parsed once per distinct set of Cookie headers."""
    raw = tuple(value for name, value in request.scope["headers"] if name == b"cookie")
    token = _TOKENS.get(raw)
    if token is None:
        token = request.cookies.get(AUTH_COOKIE, "")
        if len(_TOKENS) >= 1024:  # bounded: tokens of ended sessions must not pile up
            _TOKENS.clear()
        _TOKENS[raw] = token
    return token


async def parse_body(request: Request, model: type[M], what: str, *, direct: bool = False) -> M:
    """The request body validated with ``model``: malformed JSON is a 400 (:func:`.bodies.decode_json`), a
    valid body that breaks the model a 422 naming the field and value.

    ``direct``: validate the bytes as JSON in one step (pydantic's parser), for models of plain JSON
    fields (str, int, bool, lists, dicts, literals: the hot routes' bodies), where that gives the same
    model as ``json.loads`` then validation. Anything it refuses — a bad field, an escaped lone
    surrogate, NaN — takes the two-step path, so errors and their messages stay exactly as before.
    """
    raw = await request.body()
    if direct and raw.strip():
        try:
            return model.model_validate_json(raw)
        except ValidationError:
            pass
    data = decode_json(raw, what)  # malformed JSON of any kind: a one-line 400
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ApiError(422, validation_message(exc, what)) from None


def parse_misbehaviours(names: Any, where: str) -> frozenset[str]:
    """Misbehaviour names from a header or sourceContext; unknown names are a 422."""
    if names is None:
        return frozenset()
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ApiError(422, f"{where} must be a list of misbehaviour names, got {names!r}")
    unknown = sorted(set(names) - MISBEHAVIOURS)
    if unknown:
        raise ApiError(422, f"{where}: unknown misbehaviour {unknown[0]!r}; known: {', '.join(sorted(MISBEHAVIOURS))}")
    return frozenset(names)


def ok(data: Any, status: int = 200, **extra: Any) -> JSONResponse:
    """The n8n envelope: ``{"data": ...}`` (plus e.g. ``count`` for paginated lists)."""
    return JSONResponse({"data": data, **extra}, status_code=status)


class _PlainJSONResponse(JSONResponse):
    """starlette's JSONResponse, its body encoded by pydantic-core where that writes the same bytes."""

    def render(self, content: Any) -> bytes:
        body = fast_json(content, ascii_only=False)
        return super().render(content) if body is None else body


def ok_plain(data: Any) -> JSONResponse:
    """:func:`ok` for data the route builds from strings, ints, bools and None only (the hot routes' small
    answers): the same bytes, encoded more cheaply (see :func:`.events.fast_json`)."""
    return _PlainJSONResponse({"data": data})
