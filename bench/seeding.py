"""The harness's own cost of standing a case up and taking it down, against the demo instance.

Per iteration, on a fresh thread: create the case's credentials and pin them (6 declared), take the
pre-run snapshot, restore a seed with every artifact kind (2 messages, 2 workflows in nested
folders, a table, an agent with a skill, a project, a prior run), then clean both up (sequential
deletes, one request each). Figures are medians in milliseconds over ``--iterations``; the
machine is shared, so compare runs on one machine only.

Run: ``python -m bench.seeding [--iterations 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

import anyio
from tests.instance.demo import serve_demo
from tests.seeds.test_inline_restore import _seed

from threadcase.case.schema import CredentialDecl
from threadcase.credentials import CredentialSeeder
from threadcase.seeds import cleanup_created, restore_inline_seed, take_snapshot

DECLARED = [
    CredentialDecl.model_validate(d)
    for d in (
        {"type": "slackApi"},
        {"type": "slackApi"},
        {"type": "notionApi", "valid": False},
        {"type": "githubApi", "blank": True},
        {"type": "httpHeaderAuth"},
        {"type": "openAiApi"},
    )
]


async def main(iterations: int) -> None:
    figures: dict[str, list[float]] = {k: [] for k in ("credentials", "snapshot", "restore", "cleanup")}
    for demo in serve_demo():
        async with demo.client() as client:
            project_id = (await client.personal_project()).id
            seed = _seed("bench")
            for _ in range(iterations):
                thread_id = str(uuid.uuid4())
                await client.create_thread(thread_id, project_id)
                t0 = time.perf_counter()
                credentials = CredentialSeeder(client, environ={})
                await credentials.seed(thread_id, DECLARED)
                t1 = time.perf_counter()
                snapshot = await take_snapshot(client, project_id)
                t2 = time.perf_counter()
                restored = await restore_inline_seed(
                    client,
                    seed,
                    thread_id=thread_id,
                    project_id=project_id,
                    run_suffix=uuid.uuid4().hex[:8],
                    snapshot=snapshot,
                )
                t3 = time.perf_counter()
                await cleanup_created(client, restored.created)
                await credentials.cleanup()
                t4 = time.perf_counter()
                await client.delete_thread(thread_id)
                for key, seconds in zip(figures, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                    figures[key].append(seconds * 1000)
    print(
        " ".join(f"{key}_median_ms={statistics.median(values):.1f}" for key, values in figures.items())
        + f" iterations={iterations}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    anyio.run(main, parser.parse_args().iterations)
