"""Declared credential sets: create them for real, pin the thread's view, bypass tests, delete.

Before the build, :meth:`CredentialSeeder.seed` creates every credential a case declares (name from
the case or its template; duplicates get `` #2``, `` #3``), then pins the thread's credential view
to exactly that set (an empty declaration = the thread sees none). Every created credential except
``valid: false`` and ``blank: true`` ones goes on the bypass list, so its connection test resolves as
passing without contacting the provider. The user proxy creates more mid-run through
:meth:`CredentialSeeder.create_for_proxy`, sharing the name counter and the pinned view. Every id is
tracked and deleted by :meth:`CredentialSeeder.cleanup`, bounded in time and shielded from
cancellation.

Tokens come from ``EVAL_*`` variables (or the placeholder); a credential meant to fail (declared
``valid: false``, or created by the proxy as not working) always gets the placeholder, so its
connection test fails as the case intends. Tokens go to the instance and nowhere else:
:class:`SeededCredential` carries no data, logs name only ids, names and types, and every real
token is registered with the client's redactor so an error excerpt cannot echo it.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict

from threadcase._util.fanout import fan_out
from threadcase.case.credential_templates import SUPPORTED_CREDENTIAL_TYPES, TEMPLATES, CredentialTemplate
from threadcase.errors import InstanceError, SeedingError
from threadcase.instance import InstanceClient

if TYPE_CHECKING:
    # Only for annotations: the schema imports the templates, so a runtime import here would be a cycle.
    from threadcase.case import schema

__all__ = ["CredentialSeeder", "SeededCredential", "token_environment"]

_log = logging.getLogger("threadcase.credentials")

CLEANUP_SECONDS = 30.0

_TOKEN_VARIABLES = tuple(dict.fromkeys(t.env_var for t in TEMPLATES.values() if t.env_var))
"""The ``EVAL_*`` variables the templates read, in template order."""


class SeededCredential(BaseModel):
    """One credential created for a run (never its data)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    type: str
    working: bool
    """On the bypass list: its connection test passes without contacting the provider."""


def token_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The templates' ``EVAL_*`` variables as they are now in ``environ`` (default: the process environment).

    Only these are ever read: copying the whole process environment (one decode per variable) was most
    of a seeder's construction. The runner takes this once per run and hands it to every seeder, because
    even these few lookups in ``os.environ`` (two exceptions per variable that is not set) cost more than
    the rest of a seeder.
    """
    source = os.environ if environ is None else environ
    return {name: source[name] for name in _TOKEN_VARIABLES if name in source}


class CredentialSeeder:
    """Creates, pins and deletes one run's credentials on one instance.

    ``environ`` supplies the ``EVAL_*`` tokens (default: the process environment, read once here; the
    runner passes its run's :func:`token_environment`). One seeder per case-iteration: the name counter
    and the tracked ids belong to that run.
    """

    def __init__(self, client: InstanceClient, *, environ: Mapping[str, str] | None = None) -> None:
        self._client = client
        self._environ: Mapping[str, str] = token_environment(environ)
        self.seeded: list[SeededCredential] = []
        """Every credential this seeder created and still tracks, in creation order."""
        self._names: Counter[str] = Counter()
        self._bypass: list[str] = []
        # Uncontended (the usual case) it takes the lock without a trip through the event loop.
        self._lock = anyio.Lock(fast_acquire=True)
        self.leftovers: list[str] = []
        """Ids cleanup could not delete (reported by the runner; never retried silently)."""
        self._deleted: list[str] = []
        self.failures: dict[str, str] = {}
        """Credential id -> why its delete failed (the run reports it as a leftover)."""
        for token in self._environ.values():
            if token:
                client.add_secret(token)

    @property
    def bypassed_count(self) -> int:
        """How many created credentials were put on the bypass list.

        The harness cannot observe the instance's connection tests, so this counts credentials
        placed on bypass (seeded working ones plus proxy-created working ones), not tests run.
        """
        return len(self._bypass)

    async def seed(self, thread_id: str, declared: list[schema.CredentialDecl]) -> list[SeededCredential]:
        """Create every declared credential, then pin the thread's view to exactly that set."""
        created: list[SeededCredential] = []
        async with self._lock:
            for decl in declared:
                template = self._template(decl.type)
                working = decl.valid and not decl.blank
                data = {} if decl.blank else template.data(self._environ, working=working)
                created.append(
                    await self._create(
                        decl.name or template.default_name, template, data, working, description=decl.description
                    )
                )
            try:
                await self._pin(thread_id)
            except InstanceError as exc:
                if exc.status == 404 and not declared:
                    # An older backend without the route: a case that declared nothing can run unpinned.
                    _log.warning("instance has no credential allowlist route; thread %s runs unpinned", thread_id)
                    return created
                if exc.status == 404:
                    raise SeedingError(
                        "the instance has no thread-credential-allowlist route, so the declared credentials "
                        "cannot be pinned: upgrade the instance or drop the case's 'credentials'"
                    ) from exc
                raise
        return created

    async def create_for_proxy(self, thread_id: str, credential_type: str, *, working: bool = True) -> SeededCredential:
        """Create one credential mid-run (the simulated user set one up) and re-pin the view.

        The allowlist (and the bypass list when ``working``) is updated before this returns, so a
        confirm sent afterwards can never reach the agent before the credential is visible.
        """
        template = self._template(credential_type)
        async with self._lock:
            data = template.data(self._environ, working=working)
            credential = await self._create(template.default_name, template, data, working)
            await self._pin(thread_id)
        return credential

    async def mark_working(self, thread_id: str, credential_ids: list[str]) -> None:
        """Put already-created credentials on the bypass list and re-pin.

        Ids this seeder did not create are ignored: the instance honours bypass only for
        allowlisted credentials, and the allowlist is exactly what this seeder created.
        """
        async with self._lock:
            known = {c.id for c in self.seeded}
            changed = False
            for credential_id in credential_ids:
                if credential_id not in known:
                    _log.warning("mark_working: %s was not created by this run; ignored", credential_id)
                elif credential_id not in self._bypass:
                    self._bypass.append(credential_id)
                    changed = True
            self.seeded = [c.model_copy(update={"working": c.working or c.id in self._bypass}) for c in self.seeded]
            if changed:
                await self._pin(thread_id)

    async def cleanup(self, *, seconds: float = CLEANUP_SECONDS) -> None:
        """Delete every credential this seeder created; best effort, bounded, shielded.

        Runs to completion (or ``seconds``) even when the surrounding run is being cancelled, so a
        cancelled case never leaves credentials behind unless the instance refused to delete them.
        """
        if self.seeded:  # most cases declare none: no scope, no task group for an empty fan-out
            with anyio.CancelScope(shield=True), anyio.move_on_after(seconds) as scope:
                await fan_out(list(self.seeded), self._delete_one, limit=4)
            if scope.cancelled_caught:
                _log.debug("credential cleanup stopped after %.0f s", seconds)
        deleted = set(self._deleted)
        self.leftovers = [c.id for c in self.seeded if c.id not in deleted]
        self.seeded = [c for c in self.seeded if c.id not in deleted]
        self._bypass = [i for i in self._bypass if i not in deleted]

    # --- internals ----------------------------------------------------------------------------

    def _template(self, credential_type: str) -> CredentialTemplate:
        template = TEMPLATES.get(credential_type)
        if template is None:
            raise SeedingError(
                f"no credential template for type {credential_type!r}; supported: "
                + ", ".join(sorted(SUPPORTED_CREDENTIAL_TYPES))
            )
        return template

    def _unique_name(self, base: str) -> str:
        # One counter per base name and per run, shared by declared and proxy-created credentials.
        self._names[base] += 1
        count = self._names[base]
        return base if count == 1 else f"{base} #{count}"

    async def _create(
        self,
        base_name: str,
        template: CredentialTemplate,
        data: dict[str, object],
        working: bool,
        *,
        description: str | None = None,
    ) -> SeededCredential:
        name = self._unique_name(base_name)
        # Shielded: a Ctrl-C while the request is in flight must not lose the answer, or the credential
        # the instance created would be on it with nobody knowing its id. (Bounded by the call's timeout.)
        with anyio.CancelScope(shield=True):
            summary = await self._client.create_credential(
                name=name, type=template.type, data=dict(data), description=description
            )
            credential = SeededCredential(id=summary.id, name=name, type=template.type, working=working)
            # Tracked before anything else can fail, so cleanup always knows about it.
            self.seeded.append(credential)
        await anyio.lowlevel.checkpoint_if_cancelled()
        if working:
            self._bypass.append(credential.id)
        _log.debug("created credential %s (%s, %s)", credential.id, credential.type, name)
        return credential

    async def _pin(self, thread_id: str) -> None:
        ids = [c.id for c in self.seeded]
        await self._client.set_credential_allowlist(thread_id, ids, [i for i in self._bypass if i in ids])

    async def _delete_one(self, credential: SeededCredential) -> None:
        try:
            await self._client.delete_credential(credential.id)
        except InstanceError as exc:
            _log.debug("could not delete credential %s: %s", credential.id, exc)
            self.failures[credential.id] = str(exc)
            return
        self._deleted.append(credential.id)
