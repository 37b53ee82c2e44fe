"""Concurrency to the bound: N cases × T turns of agent latency L at concurrency C.

Generates 200 four-turn cases in a temporary directory, serves the demo instance with
``latency_ms=100`` (every agent step sleeps 100 ms), and runs them at concurrency 50 through the real
runner (threads, credentials, conversation, grading, journal, cleanup). The ideal wall time is
``ceil(N/C) · T · L``; the last line prints the measured wall, the bound and their ratio (target ≤ 1.10).

Run: ``python -m bench.concurrency [--cases 200] [--turns 4] [--latency-ms 100] [--concurrency 50]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from pydantic import SecretStr

from threadcase.demo_instance import DemoSettings
from threadcase.harness.runner import RunSettings, run_suite

# One agent step per turn: an acknowledgement the demo agent answers with one sentence and no tool
# call or widget, so each turn costs exactly one latency L on the server and the bound is exact.
TURN_TEXTS = ("Thanks!", "Great, thanks!", "Perfect, thanks a lot!", "Thank you again!", "Cool, thanks so much!")
EXPECTED = "You're welcome"


def write_cases(directory: Path, cases: int, turns: int) -> None:
    for index in range(cases):
        body = {
            "description": f"bench case {index}",
            "complexity": "simple",
            "tags": ["bench"],
            "conversation": [{"role": "user", "text": TURN_TEXTS[t % len(TURN_TEXTS)]} for t in range(turns)],
            "messageBudget": turns,
            "checks": {"mustContain": [EXPECTED]},
        }
        (directory / f"bench-{index:04d}.json").write_text(json.dumps(body), encoding="utf-8")


@contextmanager
def demo_process(latency_ms: int) -> Iterator[str]:
    """``threadcase demo serve`` in its own process (its own core and GIL, as a real instance would be)."""
    command = [str(Path(sys.executable).parent / "threadcase"), "demo", "serve", "--port", "0"]
    command += ["--latency-ms", str(latency_ms)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+", line)
        if match is None:
            raise RuntimeError(f"demo instance did not start: {line!r}")
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def main(cases: int, turns: int, latency_ms: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory(prefix="threadcase-bench-") as tmp:
        suite = Path(tmp) / "cases"
        suite.mkdir()
        write_cases(suite, cases, turns)
        settings = DemoSettings()
        with demo_process(latency_ms) as url:
            run = RunSettings(
                suite=suite,
                base_urls=[url],
                email=settings.email,
                password=SecretStr(settings.password.get_secret_value()),
                concurrency=concurrency,
                output_dir=Path(tmp) / "out",
            )
            started, cpu_started = time.perf_counter(), time.process_time()
            summary = await run_suite(run)
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
        bound = math.ceil(cases / concurrency) * turns * latency_ms / 1000
        errored = summary.units.errored
        print(
            f"cases={summary.case_iterations} passed_units={summary.units.passed} errored={errored} "
            f"exit={summary.exit_code} harness_cpu={cpu:.3f}"
        )
        print(f"ratio={wall / bound:.3f} wall={wall:.3f} bound={bound:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    anyio.run(main, args.cases, args.turns, args.latency_ms, args.concurrency)
