"""The demo's document store: what is written is what is read back, in memory and on a file."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

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
