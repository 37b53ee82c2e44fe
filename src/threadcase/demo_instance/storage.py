"""SQLite storage of the demo instance: a small document store, one table per kind of thing.

Every row is ``(id, scope, doc)`` where ``doc`` is the JSON of the thing as the API shows it and
``scope`` is what it belongs to (a project, an owner, a thread, a run, a table). Two families:

- *global* kinds (:data:`GLOBAL_KINDS`): the id is unique across the instance (workflows, agents,
  credentials, ...), so a restore with a pinned id that already exists is a conflict;
- *scoped* kinds (:data:`SCOPED_KINDS`): the id is unique only inside its scope (a message id inside a
  thread, because two concurrent runs of one seed restore the same message ids into two threads).

Rows keep insertion order (``rowid``), which is the order lists are returned in.

Concurrency: one connection (WAL mode for a file) behind a re-entrant lock. The server runs on one event loop,
every statement is short, and the lock makes each :meth:`Store.tx` block atomic with respect to every
other caller (tests and the CLI may touch the store from other threads) — simple and correct, with no
connection pool to leak.

A temporary instance (``path=None``) is SQLite's ``:memory:``; a file (``--db``) is SQLite in WAL mode.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

__all__ = ["GLOBAL_KINDS", "SCOPED_KINDS", "Store"]

GLOBAL_KINDS = (
    "users",
    "projects",
    "threads",
    "runs",
    "workflows",
    "folders",
    "data_tables",
    "agents",
    "credentials",
    "cursors",
    "executions",
)
SCOPED_KINDS = ("messages", "events", "steps", "observations", "table_rows")

Doc = dict[str, Any]


def _encode(doc: Doc) -> bytes | str:
    """A document as stored: its JSON (pydantic-core's encoder: ~4x cheaper than ``json.dumps`` per doc),
    UTF-8 bytes, or text where ``json`` had to write it.

    NaN and infinities are kept as ``json`` writes them (``NaN``, ``Infinity``); a string the UTF-8
    encoder refuses (a lone surrogate from an escaped client value) falls back to ``json.dumps``, which
    escapes it. Either way :func:`_loads` reads back the document that was written.
    """
    try:
        return to_json(doc, inf_nan_mode="constants")
    except PydanticSerializationError:
        return json.dumps(doc)


def _dumps(doc: Doc) -> str:
    """:func:`_encode` as text, for a SQLite ``TEXT`` column."""
    data = _encode(doc)
    return data.decode() if isinstance(data, bytes) else data


def _loads(text: str | bytes) -> Doc:
    """A stored document back (pydantic-core's parser: ~2x cheaper than ``json.loads``).

    That parser refuses an escaped lone surrogate (``"\\ud800"``), which ``json`` writes and reads: such
    a document is read with ``json.loads``.
    """
    try:
        doc: Doc = from_json(text, allow_inf_nan=True)
    except ValueError:
        doc = json.loads(text)
    return doc


class Store:
    """The demo instance's database. Methods are synchronous and fast; call them from the loop.

    ``Store(path)`` opens SQLite at ``path``; ``Store(None)`` a temporary database in memory.
    """

    def __init__(self, path: Path | None) -> None:
        """Open (and create) the database at ``path``; ``None`` = SQLite's ``:memory:``."""
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0
        self._conn = sqlite3.connect(
            ":memory:" if path is None else str(path), isolation_level=None, check_same_thread=False
        )
        if path is not None:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=5000")
        for kind in GLOBAL_KINDS:
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {kind} (id TEXT PRIMARY KEY, scope TEXT, doc TEXT NOT NULL)"
            )
            self._conn.execute(f"CREATE INDEX IF NOT EXISTS {kind}_scope ON {kind}(scope)")
        for kind in SCOPED_KINDS:
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {kind} (scope TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL,"
                " PRIMARY KEY (scope, id))"
            )

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def tx(self) -> Iterator[Store]:
        """One transaction: everything inside commits together or not at all (nests as one)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._conn.execute("COMMIT")

    # --- rows -----------------------------------------------------------------------------------

    @staticmethod
    def _check(kind: str) -> bool:
        if kind in GLOBAL_KINDS:
            return True
        if kind in SCOPED_KINDS:
            return False
        raise ValueError(f"unknown kind {kind!r}")

    def insert(self, kind: str, id: str, doc: Doc, *, scope: str | None = None) -> None:
        """Insert a new row; raises ``sqlite3.IntegrityError`` if the id is taken (in its scope)."""
        self._check(kind)
        with self._lock:
            self._conn.execute(f"INSERT INTO {kind} (id, scope, doc) VALUES (?, ?, ?)", (id, scope, _dumps(doc)))

    def put(self, kind: str, id: str, doc: Doc, *, scope: str | None = None) -> None:
        """Insert or replace (keeps the row's place in the order when it exists)."""
        is_global = self._check(kind)
        with self._lock:
            where = "id = ?" if is_global else "scope = ? AND id = ?"
            params: tuple[Any, ...] = (id,) if is_global else (scope, id)
            cur = self._conn.execute(
                f"UPDATE {kind} SET doc = ?, scope = ? WHERE {where}", (_dumps(doc), scope, *params)
            )
            if cur.rowcount == 0:
                self.insert(kind, id, doc, scope=scope)

    def get(self, kind: str, id: str, *, scope: str | None = None) -> Doc | None:
        """One document by id (and scope for scoped kinds), or None."""
        is_global = self._check(kind)
        with self._lock:
            if is_global:
                row = self._conn.execute(f"SELECT doc FROM {kind} WHERE id = ?", (id,)).fetchone()
            else:
                row = self._conn.execute(f"SELECT doc FROM {kind} WHERE scope = ? AND id = ?", (scope, id)).fetchone()
        return None if row is None else _loads(row[0])

    def scope_of(self, kind: str, id: str) -> str | None:
        """The scope a document is stored under, or None when it does not exist."""
        self._check(kind)
        with self._lock:
            row = self._conn.execute(f"SELECT scope FROM {kind} WHERE id = ?", (id,)).fetchone()
        return None if row is None else row[0]

    def list(self, kind: str, scope: str | None = None) -> list[Doc]:
        """All rows of a kind (in one scope when given), in insertion order."""
        self._check(kind)
        with self._lock:
            if scope is None:
                rows = self._conn.execute(f"SELECT doc FROM {kind} ORDER BY rowid").fetchall()
            else:
                rows = self._conn.execute(f"SELECT doc FROM {kind} WHERE scope = ? ORDER BY rowid", (scope,)).fetchall()
        return [_loads(row[0]) for row in rows]

    def delete(self, kind: str, id: str, *, scope: str | None = None) -> bool:
        """Delete one document; True when it existed."""
        is_global = self._check(kind)
        with self._lock:
            if is_global:
                cur = self._conn.execute(f"DELETE FROM {kind} WHERE id = ?", (id,))
            else:
                cur = self._conn.execute(f"DELETE FROM {kind} WHERE scope = ? AND id = ?", (scope, id))
        return cur.rowcount > 0

    def delete_scope(self, kind: str, scope: str) -> int:
        """Delete every document of a scope; returns how many."""
        self._check(kind)
        with self._lock:
            cur = self._conn.execute(f"DELETE FROM {kind} WHERE scope = ?", (scope,))
        return cur.rowcount

    def delete_children(self, kind: str, parent_kind: str, parent_scope: str) -> int:
        """Delete every document of ``kind`` whose scope is the id of a ``parent_kind`` row in
        ``parent_scope`` (a thread's runs' steps), in one statement; returns how many."""
        self._check(kind)
        if not self._check(parent_kind):
            raise ValueError(f"parent kind {parent_kind!r} must be a global kind (its ids are scopes)")
        with self._lock:
            cur = self._conn.execute(
                f"DELETE FROM {kind} WHERE scope IN (SELECT id FROM {parent_kind} WHERE scope = ?)", (parent_scope,)
            )
        return cur.rowcount

    def count(self, kind: str, scope: str | None = None) -> int:
        """How many documents a scope holds."""
        self._check(kind)
        with self._lock:
            if scope is None:
                row = self._conn.execute(f"SELECT COUNT(*) FROM {kind}").fetchone()
            else:
                row = self._conn.execute(f"SELECT COUNT(*) FROM {kind} WHERE scope = ?", (scope,)).fetchone()
        return int(row[0])
