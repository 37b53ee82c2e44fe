"""The temporary demo database (no ``--db``): :class:`~.storage.Store`'s interface on plain dicts.

Same answers as the SQLite store, row for row (``tests/demo/test_platform_storage.py`` runs every
behaviour against both):

- lists come in insertion order (SQLite's ``rowid``), and a put of an existing row keeps its place;
- a global kind's id is unique across the kind, a scoped kind's inside its scope; a taken id raises
  ``sqlite3.IntegrityError`` with SQLite's own message (the restore route quotes it), a scoped row
  without a scope SQLite's ``NOT NULL`` one;
- ``scope=None`` matches no row where SQLite compares ``scope = NULL`` (a scoped get, a delete of a
  scope), and means "every row" where the SQLite store leaves the filter out (list, count);
- a :meth:`MemoryStore.tx` that raises undoes every write made inside it; outside one each write stands;
- documents are kept encoded (the same encoder as the SQLite store), so what a read returns is a fresh
  copy of what was written, normalised by JSON exactly as a SQLite row is.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from threadcase.demo_instance.storage import GLOBAL_KINDS, SCOPED_KINDS, Doc, Store, _encode, _loads

__all__ = ["MemoryStore"]

Key = str | tuple[str | None, str]
Encoded = bytes | str
Keys = list[Key]  # spelled out here: inside the class, ``list`` is the store's method


class _Row:
    __slots__ = ("data", "scope", "seq")

    def __init__(self, seq: int, scope: str | None, data: Encoded) -> None:
        self.seq = seq
        self.scope = scope
        self.data = data


def _place(rows: dict[Key, _Row], key: Key, row: _Row) -> None:
    """Put ``row`` into ``rows`` at its place in insertion order (the end, unless it comes back from a
    rollback or moves to another scope: then the dict is rebuilt in order, which is rare)."""
    if rows and next(reversed(rows.values())).seq > row.seq:
        rows[key] = row
        ordered = sorted(rows.items(), key=lambda item: item[1].seq)
        rows.clear()
        rows.update(ordered)
    else:
        rows[key] = row


class _Table:
    __slots__ = ("by_scope", "is_global", "name", "rows", "seq")

    def __init__(self, name: str, is_global: bool) -> None:
        self.name = name
        self.is_global = is_global
        self.rows: dict[Key, _Row] = {}  # every row, in insertion order
        self.by_scope: dict[str | None, dict[Key, _Row]] = {}  # the same rows per scope, same order
        self.seq = 0

    def key(self, id: str, scope: str | None) -> Key:
        return id if self.is_global else (scope, id)

    def add(self, key: Key, row: _Row) -> None:
        _place(self.rows, key, row)
        _place(self.by_scope.setdefault(row.scope, {}), key, row)

    def remove(self, key: Key) -> _Row:
        row = self.rows.pop(key)
        rows = self.by_scope[row.scope]
        del rows[key]
        if not rows:
            del self.by_scope[row.scope]
        return row


class MemoryStore(Store):
    """The demo instance's database in memory (see the module); made by ``Store(None)``."""

    def __init__(self, path: Path | None = None) -> None:
        """An empty database; ``path`` is kept for the interface's sake (a memory store has none)."""
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0
        self._undo: list[Callable[[], None]] = []
        self._closed = False
        self._tables = {kind: _Table(kind, True) for kind in GLOBAL_KINDS}
        self._tables.update({kind: _Table(kind, False) for kind in SCOPED_KINDS})

    def close(self) -> None:
        """Drop everything; any later call raises as SQLite's does on a closed connection."""
        with self._lock:
            self._closed = True
            for table in self._tables.values():
                table.rows.clear()
                table.by_scope.clear()

    def _table(self, kind: str) -> _Table:
        table = self._tables.get(kind)
        if table is None:
            raise ValueError(f"unknown kind {kind!r}")
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return table

    @contextmanager
    def tx(self) -> Iterator[Store]:
        """One transaction: everything inside stands together or is undone (nests as one)."""
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            outer = self._depth == 0
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    undo, self._undo = self._undo, []
                    while undo:
                        undo.pop()()
                raise
            self._depth -= 1
            if outer:
                self._undo.clear()

    # --- rows -----------------------------------------------------------------------------------

    def _insert(self, table: _Table, id: str, scope: str | None, data: Encoded) -> None:
        if not table.is_global and scope is None:
            raise sqlite3.IntegrityError(f"NOT NULL constraint failed: {table.name}.scope")
        key = table.key(id, scope)
        if key in table.rows:
            columns = f"{table.name}.id" if table.is_global else f"{table.name}.scope, {table.name}.id"
            raise sqlite3.IntegrityError(f"UNIQUE constraint failed: {columns}")
        table.seq += 1
        table.add(key, _Row(table.seq, scope, data))
        if self._depth:
            self._undo.append(lambda: self._drop(table, key))

    @staticmethod
    def _drop(table: _Table, key: Key) -> None:
        table.remove(key)

    def insert(self, kind: str, id: str, doc: Doc, *, scope: str | None = None) -> None:
        """Insert a new row; raises ``sqlite3.IntegrityError`` if the id is taken (in its scope)."""
        table = self._table(kind)
        data = _encode(doc)
        with self._lock:
            self._insert(table, id, scope, data)

    def put(self, kind: str, id: str, doc: Doc, *, scope: str | None = None) -> None:
        """Insert or replace (keeps the row's place in the order when it exists)."""
        table = self._table(kind)
        data = _encode(doc)
        with self._lock:
            key = table.key(id, scope)
            row = table.rows.get(key)
            if row is None:
                self._insert(table, id, scope, data)
                return
            old_scope, old_data = row.scope, row.data
            row.data = data
            if old_scope != scope:  # a global row re-scoped: same place in its kind, new scope
                table.remove(key)
                row.scope = scope
                table.add(key, row)
            if self._depth:

                def undo() -> None:
                    row.data = old_data
                    if row.scope != old_scope:
                        table.remove(key)
                        row.scope = old_scope
                        table.add(key, row)

                self._undo.append(undo)

    def get(self, kind: str, id: str, *, scope: str | None = None) -> Doc | None:
        """One document by id (and scope for scoped kinds), or None."""
        table = self._table(kind)
        with self._lock:
            row = table.rows.get(id if table.is_global else (scope, id))
            data = None if row is None else row.data
        return None if data is None else _loads(data)

    def scope_of(self, kind: str, id: str) -> str | None:
        """The scope a document is stored under, or None when it does not exist."""
        table = self._table(kind)
        with self._lock:
            if table.is_global:
                row = table.rows.get(id)
                return None if row is None else row.scope
            # SQLite answers a lookup by id alone from its (scope, id) index: the lowest scope first.
            found = [row.scope for key, row in table.rows.items() if key[1] == id and row.scope is not None]
        return min(found) if found else None

    def list(self, kind: str, scope: str | None = None) -> list[Doc]:
        """All rows of a kind (in one scope when given), in insertion order."""
        table = self._table(kind)
        with self._lock:
            rows = table.rows if scope is None else table.by_scope.get(scope, {})
            data = [row.data for row in rows.values()]
        return [_loads(item) for item in data]

    def _delete_keys(self, table: _Table, keys: Keys) -> int:
        removed = [(key, table.remove(key)) for key in keys]
        if self._depth and removed:

            def undo() -> None:
                for key, row in removed:
                    table.add(key, row)

            self._undo.append(undo)
        return len(removed)

    def delete(self, kind: str, id: str, *, scope: str | None = None) -> bool:
        """Delete one document; True when it existed."""
        table = self._table(kind)
        with self._lock:
            key = table.key(id, scope)
            return key in table.rows and self._delete_keys(table, [key]) == 1

    def delete_scope(self, kind: str, scope: str) -> int:
        """Delete every document of a scope; returns how many."""
        table = self._table(kind)
        if scope is None:
            return 0  # SQLite's ``scope = NULL`` matches nothing
        with self._lock:
            return self._delete_keys(table, list(table.by_scope.get(scope, ())))

    def delete_children(self, kind: str, parent_kind: str, parent_scope: str) -> int:
        """Delete every document of ``kind`` whose scope is the id of a ``parent_kind`` row in
        ``parent_scope`` (a thread's runs' steps); returns how many."""
        table = self._table(kind)
        parent = self._table(parent_kind)
        if not parent.is_global:
            raise ValueError(f"parent kind {parent_kind!r} must be a global kind (its ids are scopes)")
        if parent_scope is None:
            return 0  # as delete_scope
        with self._lock:
            keys: Keys = []
            for parent_id in parent.by_scope.get(parent_scope, ()):
                keys.extend(table.by_scope.get(str(parent_id), ()))
            return self._delete_keys(table, keys)

    def count(self, kind: str, scope: str | None = None) -> int:
        """How many documents a scope holds."""
        table = self._table(kind)
        with self._lock:
            return len(table.rows if scope is None else table.by_scope.get(scope, ()))
