"""Reading what the instance answered: which refusal means what, and small facts taken from answers.

n8n's error answers come in several shapes (an n8n ``{code, message}``, a bare zod issue, Express's
HTML 404 for a route it does not have, ``{status: "error", message}`` from its auth and licence
middleware); :func:`classify_refusal` turns each known cause into one line that names it and the fix.
"""

from __future__ import annotations

import json

from threadcase import wire
from threadcase.errors import InstanceError, MissingRouteError, ProviderError
from threadcase.instance.redact import Redactor

__all__ = ["classify_refusal", "gone", "route_missing", "start_trigger"]


_TRIGGER_PREFERENCE = ("manualtrigger", "scheduletrigger")
"""Trigger types a user may start a run from, in the order a person would pick them."""


def start_trigger(workflow: wire.Workflow) -> str | None:
    """The trigger node a manual run starts from: a manual trigger, else a schedule, else any trigger."""
    enabled = [n for n in workflow.nodes if not (n.model_extra or {}).get("disabled")]
    for wanted in _TRIGGER_PREFERENCE:
        for node in enabled:
            if node.type.rsplit(".", 1)[-1].lower() == wanted:
                return node.name
    return next((n.name for n in enabled if "trigger" in n.type.lower() or n.type.endswith(".webhook")), None)


def _server_message(body: bytes | str) -> str | None:
    """The ``message`` of a JSON error body (n8n: ``{code, message, stacktrace}``, or a bare zod issue
    whose ``path`` says where), else None."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("message"), str):
        return None
    where = parsed.get("path")
    if isinstance(where, list) and where:
        return f"{parsed['message']} (at {'.'.join(str(part) for part in where)})"
    return str(parsed["message"])


_NO_ROUTE = ("Cannot GET", "Cannot POST", "Cannot PUT", "Cannot PATCH", "Cannot DELETE")
"""Express's own 404 page: the route does not exist at all (not "this id was not found")."""
_NO_LICENCE = "Plan lacks license"
_NO_MODEL = "no model configured"
_LICENSED_FEATURES = (("/folders", "feat:folders"), ("/rest/projects", "feat:projectRole:admin"))
"""Path fragment -> the licence feature n8n checks there (first match wins)."""


def route_missing(body: bytes | str) -> bool:
    """Express's 404 page for a route that does not exist (an HTML ``Cannot GET /rest/...``)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return any(marker in text[:2000] for marker in _NO_ROUTE) and not text.lstrip().startswith("{")


def _licence_feature(path: str) -> str:
    return next((feature for fragment, feature in _LICENSED_FEATURES if fragment in path), "the feature")


def gone(exc: InstanceError) -> bool:
    """A refusal that means the resource does not exist (n8n answers a missing workflow with 403)."""
    return exc.status == 404 or (exc.status == 403 and "not found" in exc.excerpt.lower())


def classify_refusal(
    message: str, method: str, path: str, status: int, body: bytes | str, redactor: Redactor, *, logged_in: bool
) -> InstanceError:
    """The error for a refusal: a known cause gets a message naming it and the fix, and its own type.

    - 401 once logged in: the session cookie does not travel back (n8n's Secure cookie over http);
    - 403 "Plan lacks license": the licence feature to switch on;
    - 404 from Express itself: :class:`MissingRouteError` (the instance has no such route);
    - 400 "no model configured": :class:`ProviderError` (the agent has no model to run on).
    """
    message_of_body = _server_message(body)
    said = redactor.text(message_of_body or "")
    # The server's own message reads better than its JSON (whose dev-mode stack trace says nothing to a
    # user); a body with no message is shown as it came, shortened.
    excerpt = redactor.excerpt(said) if message_of_body else redactor.excerpt(body)
    if status == 401 and logged_in:
        message = (
            f"{message}: 401 right after a successful login, so the session cookie is not being sent back "
            "(n8n's default N8N_SECURE_COOKIE=true marks it Secure): start n8n with N8N_SECURE_COOKIE=false "
            "or reach it over https"
        )
    elif status == 403 and _NO_LICENCE in said:
        feature = _licence_feature(path)
        message = (
            f"the instance's licence lacks {feature} ({said!r}): use a licence with it, or on a test instance "
            f"started with E2E_TESTS=true switch it on with PATCH /rest/e2e/feature "
            f'{{"feature": "{feature}", "enabled": true}} (scripts/n8n-local start does)'
        )
    elif status == 404 and route_missing(body):
        return MissingRouteError(
            f"the instance has no route {method} {path.split('?')[0]} (an n8n version without it)",
            method=method,
            path=path,
            status=status,
        )
    elif status == 400 and _NO_MODEL in said.lower():
        return ProviderError(
            f"the instance has no model for its agent: {said}", reason=said, method=method, path=path, status=status
        )
    return InstanceError(message, method=method, path=path, status=status, excerpt=excerpt)
