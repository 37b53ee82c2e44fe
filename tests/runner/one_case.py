"""Acknowledgement cases ("Thanks!" → "You're welcome"), and one of them on a lane of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from threadcase.case.loader import LoadedCase, load_suite
from threadcase.harness.lanes import Lane, LanePool
from threadcase.harness.pipeline import LaneResources
from threadcase.instance import InstanceClient


def write_thanks_cases(directory: Path, count: int, turns: int = 2, **fields: Any) -> Path:
    """``count`` cases of ``turns`` "Thanks!" turns each (plus ``fields``) in a new ``directory``."""
    directory.mkdir()
    for index in range(count):
        body = {
            "complexity": "simple",
            "tags": ["thanks"],
            "conversation": [{"role": "user", "text": "Thanks!"} for _ in range(turns)],
            "messageBudget": turns,
            "checks": {"mustContain": ["You're welcome"]},
            **fields,
        }
        (directory / f"thanks-{index}.json").write_text(json.dumps(body), encoding="utf-8")
    return directory


async def one_case_lane(
    tmp_path: Path, url: str, client: InstanceClient, *, case_fields: dict[str, Any] | None = None, **pool_options: Any
) -> tuple[LoadedCase, Lane, LanePool]:
    """A one-turn case (with ``case_fields``), and a one-slot lane and pool on ``client``'s instance."""
    (loaded,) = load_suite([write_thanks_cases(tmp_path / "suite", 1, turns=1, **(case_fields or {}))])
    project = await client.personal_project()
    lane = Lane(url, cap=1)
    lane.state["resources"] = LaneResources(clients=[client], project_id=project.id)
    return loaded, lane, LanePool([lane], concurrency=1, **pool_options)
