"""The demo's document store: what is written is what is read back, in memory and on a file; which events it keeps."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.demo.conftest import ScriptedAgent, events, finished, session, settings
from threadcase._util.serve import serving
from threadcase.demo_instance.app import create_app
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
    db = Store(None if request.param == "memory" else tmp_path / "demo.sqlite")
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
    assert [e["id"] for e in replayed] == [e["id"] for e in live][1:]
    assert stored == (len(live) if on_file else 0)
