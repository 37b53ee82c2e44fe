"""Redaction of trace runs before replay touches them: table rows and credential references.

A production trace is someone's real conversation. :func:`omit_rows` replaces the row values of
data-table tools; :func:`strip_credentials` removes node credentials and credential identities.
Both are copy-on-write and run once per run, when it is read (``TraceRun.from_raw``), before the
run is rebuilt, restored or written anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CREDENTIAL_OMITTED", "is_table_tool", "omit_rows", "strip_credentials", "tool_key"]


def tool_key(name: str) -> str:
    """``build_workflow``, ``Build-Workflow`` and ``build-workflow`` are one tool."""
    return name.strip().lower().replace("_", "-")


def is_table_tool(name: str) -> bool:
    return "data-table" in tool_key(name)


def _copy_on_write(value: Any, rewrite: Callable[[str | None, Any], Any]) -> Any:
    """``value`` with each dict entry / list item replaced by ``rewrite(key, item)`` (key None in lists).

    The input is never mutated; a container is copied only when one of its entries changed, so
    untouched branches are shared (long threads stay cheap).
    """
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, item in value.items():
            new = rewrite(key, item)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = rewrite(None, item)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value


def omit_rows(value: Any) -> Any:
    """Replace every ``rows``/``data`` list inside ``value`` by ``"<N row(s) omitted>"`` (copy-on-write)."""
    return _copy_on_write(value, _omit_rows_entry)


def _omit_rows_entry(key: str | None, item: Any) -> Any:
    if not isinstance(item, dict | list):
        return item  # a scalar holds no rows; not descending into it halves the walk (bench.replay)
    if key in ("rows", "data") and isinstance(item, list):
        return f"<{len(item)} row(s) omitted>"
    return omit_rows(item)


CREDENTIAL_OMITTED = "<credential omitted>"
_CREDENTIAL_LISTS = ("credentials", "existingCredentials")
_CREDENTIAL_ID_KEYS = frozenset({"credentialId", "credentialIds", "credential_id", "credential_ids"})


def strip_credentials(value: Any) -> Any:
    """Remove the production user's credential references from ``value``.

    - every workflow node (a dict inside a ``nodes`` list) loses its ``credentials``: a restored
      workflow must bind to the thread's own pinned credentials, never to a production id;
    - credential listings (``credentials``/``existingCredentials`` lists of ``{id, name, type}``, as
      credential tools and setup cards carry them) and node-style ``credentials`` maps elsewhere keep
      their ``type`` but get ``id`` and ``name`` replaced by ``"<credential omitted>"``;
    - ``credentialId``/``credentialIds`` values (a connection test, a selection) become
      ``"<credential omitted>"``.

    Copy-on-write, like :func:`omit_rows`.
    """
    return _copy_on_write(value, _strip_entry)


def _strip_entry(key: str | None, item: Any) -> Any:
    if key in _CREDENTIAL_ID_KEYS:
        # A production credential id (a test-credential call, a selection answer) identifies
        # someone's real credential and binds nothing in a restored thread.
        return _omit_ids(item)
    if key == "nodes" and isinstance(item, list):
        return _strip_nodes(item)
    if key in _CREDENTIAL_LISTS and isinstance(item, list | dict):
        return _omit_credential_refs(item)
    if key == "connections" or not isinstance(item, dict | list):
        return item  # connections and scalars hold no credentials; skipping them keeps long threads fast
    return strip_credentials(item)


def _omit_ids(item: Any) -> Any:
    if isinstance(item, str):
        return CREDENTIAL_OMITTED
    if isinstance(item, list):
        return [CREDENTIAL_OMITTED if isinstance(i, str) else i for i in item]
    return item


def _omit_ref(ref: Any) -> Any:
    if not isinstance(ref, dict):
        return ref
    return {k: (CREDENTIAL_OMITTED if k in ("id", "name") and v is not None else v) for k, v in ref.items()}


def _omit_credential_refs(item: list[Any] | dict[str, Any]) -> Any:
    if isinstance(item, list):
        return [_omit_ref(ref) for ref in item]
    # ``{credentialType: {id, name}}``, the node shape, found outside a node (an agent config).
    return {k: _omit_ref(v) for k, v in item.items()}


def _strip_nodes(nodes: list[Any]) -> list[Any]:
    # Node parameters are not searched further: a node holds no nodes, and walking every
    # parameter of every node dominated the rebuild of long threads.
    out: list[Any] | None = None
    for index, node in enumerate(nodes):
        if not (isinstance(node, dict) and "credentials" in node):
            continue
        if out is None:
            out = list(nodes)
        out[index] = {k: v for k, v in node.items() if k != "credentials"}
    return nodes if out is None else out
