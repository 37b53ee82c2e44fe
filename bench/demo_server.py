"""The demo instance's own CPU over a fixed workload: per case and per turn, server side only.

Serves ``threadcase demo serve --port 0 --latency-ms 0`` (``--latency-ms`` to change it) in its own
process and drives N cases of T acknowledgement turns (the turns of :mod:`bench.concurrency`) against
it, then reads the server's CPU from ``/proc/<pid>/stat`` before and after. Two drivers:

- ``client`` (default): a fixed request sequence per case through :class:`InstanceClient` — create the
  thread, pin an empty credential view, subscribe, T × (chat, wait for run-finish), delete the thread —
  at ``--concurrency``; the same requests every run, so the figure moves only with the server's code;
- ``runner``: the real :func:`run_and_report` over generated cases (what ``bench.concurrency`` times), whose
  exact request mix depends on the harness.

Seconds of CPU are noisy on a shared machine, so the figure to compare is instructions:
``DEMO_BENCH_CALLGRIND=/tmp/cg/demo.out`` runs the server under valgrind's callgrind, instrumented only
for the measured workload (repeatable to ~0.1 %), and prints ``instructions= per_case= per_turn=`` (the
dump stays for ``callgrind_annotate``). Also: ``--profile FILE`` (cProfile, written at the server's
graceful exit; wall-clock times, so read its call counts), ``DEMO_BENCH_PYSPY=FILE`` (py-spy's collapsed
stacks of the measured window; ``DEMO_BENCH_NATIVE=1`` for C frames) and ``--repeat`` (best of several).

Run: ``python -m bench.demo_server [--cases 50] [--turns 4] [--concurrency 10] [--driver client|runner]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from bench.concurrency import TURN_TEXTS, generated_run, process_times
from bench.concurrency import demo_process as serve_demo
from threadcase import wire
from threadcase.demo_instance import DemoSettings
from threadcase.instance import InstanceClient

CALLGRIND = os.environ.get("DEMO_BENCH_CALLGRIND")
"""Set to a file name: the server runs under callgrind, and the workload's instruction count is printed."""


def _callgrind(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL)


def _instructions(path: str) -> int:
    """Total instructions of a callgrind dump (its ``totals:`` line)."""
    for line in Path(path).read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


@contextmanager
def demo_process(profile: Path | None, latency_ms: int) -> Iterator[tuple[str, int]]:
    """The demo server in its own process, optionally under callgrind or cProfile; yields (url, pid)."""
    # Instrumented only between callgrind_control -i on/off (start-up runs at valgrind's fast speed).
    wrapper = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={CALLGRIND}"]
    with serve_demo(
        latency_ms,
        wrapper=wrapper if CALLGRIND else (),
        python_args=["-m", "cProfile", "-o", str(profile)] if profile is not None else (),
    ) as served:
        yield served


async def one_case(client: InstanceClient, project_id: str, turns: int) -> None:
    """One case's requests and no more: the fixed sequence the ``client`` driver replays."""
    thread_id = str(uuid.uuid4())
    await client.create_thread(thread_id, project_id)
    try:
        await client.set_credential_allowlist(thread_id, [], [])
        async with client.subscribe(thread_id) as sub:
            for t in range(turns):
                run_id = await client.chat(thread_id, wire.ChatRequest(message=TURN_TEXTS[t % len(TURN_TEXTS)]))
                while True:
                    event = await sub.next_event(30)
                    if event is None:
                        raise RuntimeError(f"run {run_id} sent no event for 30 s")
                    if event.type == "run-finish" and event.runId == run_id:
                        if event.payload.get("status") != "completed":
                            raise RuntimeError(f"run {run_id} finished {event.payload.get('status')}")
                        break
    finally:
        await client.delete_thread(thread_id)


async def drive_client(url: str, cases: int, turns: int, concurrency: int) -> None:
    settings = DemoSettings()
    async with InstanceClient(url, email=settings.email, password=settings.password.get_secret_value()) as client:
        project = await client.personal_project()
        limit = anyio.Semaphore(concurrency)

        async def case() -> None:
            async with limit:
                await one_case(client, project.id, turns)

        async with anyio.create_task_group() as tg:
            for _ in range(cases):
                tg.start_soon(case)


async def drive_runner(url: str, cases: int, turns: int, concurrency: int) -> None:
    from threadcase.harness.runner import prepare_process
    from threadcase.report import run_and_report

    with generated_run(url, cases, turns, concurrency) as settings:
        prepare_process()
        summary = await run_and_report(settings)
        if summary.units.errored:
            raise RuntimeError(f"{summary.units.errored} errored units")


def _py_spy(pid: int) -> subprocess.Popen[bytes] | None:
    """With DEMO_BENCH_PYSPY=FILE: py-spy's collapsed stacks of the measured window, for profiling."""
    output = os.environ.get("DEMO_BENCH_PYSPY")
    if not output:
        return None
    return subprocess.Popen(
        ["py-spy", "record", "--pid", str(pid), "--format", "raw", "--rate", "1000"]
        + (["--native"] if os.environ.get("DEMO_BENCH_NATIVE") else ["--nonblocking"])
        + ["--output", output],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def measure(
    driver: str, cases: int, turns: int, concurrency: int, latency_ms: int, profile: Path | None
) -> tuple[float, float]:
    """Server CPU seconds (user, system) over one workload (start-up and the warm-up case excluded)."""
    drive = drive_client if driver == "client" else drive_runner
    with demo_process(profile, latency_ms) as (url, pid):
        await drive_client(url, 1, turns, 1)  # warm-up: first-use imports and caches
        spy = _py_spy(pid)
        if spy is not None:
            await anyio.sleep(1)  # py-spy attaching
        if CALLGRIND:
            _callgrind(pid, "-i", "on")
        user, system = process_times(pid)
        await drive(url, cases, turns, concurrency)
        user_after, system_after = process_times(pid)
        if CALLGRIND:
            _callgrind(pid, "-d")
            _callgrind(pid, "-i", "off")
            dumps = sorted(Path(CALLGRIND).parent.glob(Path(CALLGRIND).name + "*"), key=lambda p: p.stat().st_mtime)
            ir = _instructions(str(dumps[-1]))
            print(f"instructions={ir} per_case={ir // cases} per_turn={ir // (cases * turns)} dump={dumps[-1]}")
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        return user_after - user, system_after - system


async def main(
    driver: str, cases: int, turns: int, concurrency: int, latency_ms: int, repeat: int, profile: Path | None
) -> None:
    runs = [await measure(driver, cases, turns, concurrency, latency_ms, profile) for _ in range(repeat)]
    best_user, best_system = min(runs, key=sum)
    best = best_user + best_system
    print(f"runs={' '.join(f'{u + s:.3f}' for u, s in runs)} best_user={best_user:.3f} best_system={best_system:.3f}")
    print(
        f"driver={driver} cases={cases} turns={turns} server_cpu={best:.3f} "
        f"per_case_ms={1000 * best / cases:.2f} per_turn_ms={1000 * best / (cases * turns):.3f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", choices=("client", "runner"), default="client")
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    anyio.run(main, args.driver, args.cases, args.turns, args.concurrency, args.latency_ms, args.repeat, args.profile)
