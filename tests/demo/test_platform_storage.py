"""The demo's document store: what is written is what is read back, in memory and on a file; which events it keeps."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.demo.conftest import ScriptedAgent, events, finished, session, settings
from threadcase.demo_instance.app import create_app
from threadcase.demo_instance.serve import serving
from threadcase.demo_instance.storage import Store

AWKWARD: dict[str, Any] = {
    "text": 'é ✓ \u2028 "quoted" \n\t \\ / \x00',
    "lone_surrogate": "a\ud800b",  # json.loads of "\\ud800" gives this; UTF-8 cannot encode it
    "big": 2**70,
    "negative_big": -(2**65),
    "floats": [1.5, 1e16, 1e-7, 0.1, -0.0],
    "nested": {"list": [None, True, False, {"empty": {}}], "keys": {"1": "a"}},
}


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    db = Store(None) if request.param == "memory" else Store(tmp_path / "demo.sqlite")
    yield db
    db.close()


def test_awkward_documents_round_trip(store: Store) -> None:
    store.insert("workflows", "w1", AWKWARD, scope="p")
    assert store.get("workflows", "w1") == AWKWARD
    store.put("workflows", "w1", {**AWKWARD, "text": "changed"}, scope="p")
    assert store.list("workflows", "p") == [{**AWKWARD, "text": "changed"}]


def test_nan_and_infinity_survive_as_json_writes_them(store: Store) -> None:
    store.insert("steps", "000000", {"values": [math.nan, math.inf, -math.inf]}, scope="run")
    doc = store.get("steps", "000000", scope="run")
    assert doc is not None
    nan, inf, minus_inf = doc["values"]
    assert math.isnan(nan)
    assert (inf, minus_inf) == (math.inf, -math.inf)


def test_a_file_database_holds_json_text_other_tools_can_read(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    store = Store(db)
    store.insert("threads", "t1", {"id": "t1", "name": "é"}, scope="u")
    store.close()
    with sqlite3.connect(db) as conn:
        kind, text = conn.execute("SELECT typeof(doc), doc FROM threads").fetchone()
    assert kind == "text"
    assert json.loads(text) == {"id": "t1", "name": "é"}
    reopened = Store(db)
    assert reopened.get("threads", "t1") == {"id": "t1", "name": "é"}
    reopened.close()


def test_rows_written_by_the_json_module_are_read_back(tmp_path: Path) -> None:
    # Databases made before the store switched encoders hold json.dumps text (ASCII escapes, ", " separators).
    db = tmp_path / "old.sqlite"
    Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO threads (id, scope, doc) VALUES (?, ?, ?)", ("t1", "u", json.dumps(AWKWARD)))
    store = Store(db)
    assert store.get("threads", "t1") == AWKWARD
    store.close()


def test_delete_children_removes_only_the_scoped_rows_of_that_parent_scope(store: Store) -> None:
    for thread, runs in (("t1", ("r1", "r2")), ("t2", ("r3",))):
        for run in runs:
            store.insert("runs", run, {"runId": run}, scope=thread)
            for index in range(2):
                store.insert("steps", f"{index:06d}", {"run": run, "index": index}, scope=run)
    assert store.delete_children("steps", "runs", "t1") == 4
    assert store.list("steps", "r1") == store.list("steps", "r2") == []
    assert [s["index"] for s in store.list("steps", "r3")] == [0, 1]
    assert store.count("runs") == 3  # the parents stay: deleting them is the caller's next step
    with pytest.raises(ValueError, match="global kind"):
        store.delete_children("steps", "messages", "t1")


@pytest.mark.anyio
@pytest.mark.parametrize("on_file", [False, True])
async def test_events_are_stored_only_where_a_restart_could_replay_them(
    agent: ScriptedAgent, tmp_path: Path, on_file: bool
) -> None:
    overrides = {"db_path": tmp_path / "demo.sqlite"} if on_file else {}
    app = create_app(settings(**overrides), agent=agent)
    async with serving(app) as url, session(url) as client:
        await client.post("/rest/instance-ai/threads", json={"threadId": "t1"})
        async with events(client, "t1") as reader:
            await client.post("/rest/instance-ai/chat/t1", json={"message": "hello"})
            live = await reader.until(finished)
        # Replay after Last-Event-ID is served from memory either way.
        async with events(client, "t1", last_event_id="1") as reader:
            replayed = await reader.until(finished)
        stored = app.state.platform.store.count("events", "t1")
    # Live: run-start, id-less deltas, run-finish; the durable log holds the text as one block between.
    live_ids = [e["id"] for e in live if "id" in e]
    assert [e["id"] for e in replayed] == [str(n) for n in range(2, int(live_ids[-1]) + 1)]
    assert [e["type"] for e in replayed] == ["text-block", "run-finish"]
    assert stored == (int(live_ids[-1]) if on_file else 0)


# --- the memory store answers as SQLite does ---------------------------------------------------------


def test_order_is_insertion_order_and_a_put_keeps_the_place(store: Store) -> None:
    for name in ("c", "a", "b"):
        store.insert("workflows", name, {"n": name}, scope="p")
    store.put("workflows", "c", {"n": "c2"}, scope="p")
    store.put("workflows", "d", {"n": "d"}, scope="q")
    assert [d["n"] for d in store.list("workflows")] == ["c2", "a", "b", "d"]
    assert [d["n"] for d in store.list("workflows", "p")] == ["c2", "a", "b"]
    # A global row moved to another scope keeps its place in its kind and sorts by it in the new scope.
    store.put("workflows", "a", {"n": "a2"}, scope="q")
    assert [d["n"] for d in store.list("workflows", "q")] == ["a2", "d"]
    assert [d["n"] for d in store.list("workflows")] == ["c2", "a2", "b", "d"]
    assert store.scope_of("workflows", "a") == "q"
    assert (store.count("workflows"), store.count("workflows", "p"), store.count("workflows", "zz")) == (4, 2, 0)


def test_taken_ids_and_missing_scopes_raise_sqlites_errors(store: Store) -> None:
    store.insert("threads", "t1", {}, scope="u")
    with pytest.raises(sqlite3.IntegrityError, match=r"^UNIQUE constraint failed: threads\.id$"):
        store.insert("threads", "t1", {}, scope="other")
    store.insert("messages", "m1", {}, scope="t1")
    store.insert("messages", "m1", {}, scope="t2")  # scoped: the same id in another scope is fine
    with pytest.raises(sqlite3.IntegrityError, match=r"^UNIQUE constraint failed: messages\.scope, messages\.id$"):
        store.insert("messages", "m1", {}, scope="t1")
    with pytest.raises(sqlite3.IntegrityError, match=r"^NOT NULL constraint failed: messages\.scope$"):
        store.insert("messages", "m2", {})
    with pytest.raises(ValueError, match="unknown kind"):
        store.get("nope", "x")


def test_a_null_scope_matches_nothing_where_sql_compares_it(store: Store) -> None:
    store.insert("users", "u1", {"id": "u1"})  # global kinds may have no scope
    store.insert("projects", "p1", {"id": "p1"}, scope="u1")
    assert store.get("users", "u1") == {"id": "u1"}
    assert store.scope_of("users", "u1") is None
    assert store.list("users") == [{"id": "u1"}]
    assert store.delete_scope("users", None) == 0  # type: ignore[arg-type]
    assert store.get("messages", "m", scope=None) is None
    assert store.delete("messages", "m") is False
    assert store.count("users") == 1


def test_a_failed_transaction_leaves_nothing_behind(store: Store) -> None:
    for index in range(3):
        store.insert("runs", f"r{index}", {"i": index}, scope="t1")
        store.insert("steps", "000000", {"run": index}, scope=f"r{index}")
    before = (store.list("runs"), store.list("steps"), [store.list("steps", f"r{i}") for i in range(3)])

    def every_kind_of_write_then_fail() -> None:
        with store.tx():
            store.insert("runs", "r9", {"i": 9}, scope="t1")
            store.put("runs", "r0", {"i": "changed"}, scope="t2")
            store.put("runs", "r1", {"i": "changed"}, scope="t1")
            store.delete("runs", "r2")
            store.delete_children("steps", "runs", "t1")
            with store.tx():  # nested: one transaction with the outer one
                store.delete_scope("runs", "t1")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        every_kind_of_write_then_fail()
    after = (store.list("runs"), store.list("steps"), [store.list("steps", f"r{i}") for i in range(3)])
    assert after == before
    assert store.scope_of("runs", "r0") == "t1"
    assert [r["i"] for r in store.list("runs", "t1")] == [0, 1, 2]
    with store.tx():  # a transaction that ends normally keeps its writes
        store.delete("runs", "r1")
        store.insert("runs", "r3", {"i": 3}, scope="t1")
    assert [r["i"] for r in store.list("runs", "t1")] == [0, 2, 3]


def test_an_error_caught_inside_a_transaction_keeps_what_came_before_it(store: Store) -> None:
    with store.tx():
        store.insert("threads", "t1", {"n": 1}, scope="u")
        with pytest.raises(sqlite3.IntegrityError):
            store.insert("threads", "t1", {"n": 2}, scope="u")
    assert store.list("threads") == [{"n": 1}]


def test_a_read_is_a_copy_of_what_was_written(store: Store) -> None:
    doc: dict[str, Any] = {"list": [1, 2], "tuple": (1, 2), "keys": {1: "a"}}
    store.insert("threads", "t1", doc, scope="u")
    doc["list"].append(3)
    read = store.get("threads", "t1")
    assert read == {"list": [1, 2], "tuple": [1, 2], "keys": {"1": "a"}}  # JSON's normalisation, as a row
    assert read is not None
    read["list"].append(4)
    assert store.get("threads", "t1") == {"list": [1, 2], "tuple": [1, 2], "keys": {"1": "a"}}


def test_a_closed_store_refuses_work(store: Store) -> None:
    store.insert("threads", "t1", {}, scope="u")
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.get("threads", "t1")
    with pytest.raises(sqlite3.ProgrammingError), store.tx():
        pass
