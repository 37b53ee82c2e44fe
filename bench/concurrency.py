"""Concurrency to the bound: N cases × T turns of agent latency L at concurrency C.

Generates 200 four-turn cases in a temporary directory, serves the demo instance in its own process
with ``--latency-ms 1000`` (every agent step sleeps 1 s — real builder turns take 5–180 s, so this is
the fast end of what a user sees), and runs them at concurrency 50 through the real runner (threads,
credentials, conversation, grading, journal, cleanup). The ideal wall time is ``ceil(N/C) · T · L``;
the last line prints the ratio of the measured wall to that bound (target ≤ 1.03), the wall, the bound
and the harness's CPU per case (target ≤ 6 ms).

``--floor`` first drives the same HTTP work per case (create the thread, pin an empty credential view,
subscribe, T × chat and wait for run-finish, delete the thread) through :class:`InstanceClient` with no
harness around it, at the same concurrency, and prints its CPU per case as ``floor_cpu_per_case_ms=``:
what httpx's transport and the event loop cost on this machine for the requests alone, so
``cpu_per_case_ms`` minus it is the harness's own share.

L is *measured*, not assumed: the generated turns are acknowledgements the demo agent answers in one
step (no tool call, no widget), and before the timed run a probe plays the same conversation on a few
idle threads and takes, per turn, the server's own duration of the turn's one agent step (run debug's
``output.performance.stepTimeMs``, as n8n records it). Their mean is L (a median of millisecond
stamps flipped the bound from run to run; the mean of 20 converges). The probe also
checks every turn took exactly one agent step, so L really is one latency plus the instance's own work
per turn. ``turn_latency=`` prints it before the final line; the client-side run-start → run-finish
median of the same probe is printed next to it for comparison. The line before the last also gives
the ratio to the nominal bound ``ceil(N/C) · T · latency`` (L taken as exactly ``--latency-ms``).

Timed: ``run_and_report`` from its call to its return: loading the suite, lane set-up, every case, the
journal and the reports. Not timed: ``prepare_process()``, what ``threadcase run`` does before its run
(importing the modules ``run_and_report`` imports lazily, settling the garbage collector), printed as
``imports=`` — a one-off process start-up cost that measures the machine's bytecode cache (0.1 s with
``.pyc`` files, twice that where ``PYTHONDONTWRITEBYTECODE`` forces compiling), not concurrency. Also
printed: the harness's CPU (and per case), the demo's CPU, and what other processes of the machine took
meanwhile (the cores are shared).

The run is CPU-bound on a 2-core machine, so the ratio moves with the speed of the cores it got:
``core_speed_ms=`` is how long a fixed pure-Python loop takes on this machine (best of three, before
the run), a yardstick to compare figures measured on different machines. It does not see a shared
machine slowing down for a spell (it stayed at 54–60 while the same code took 3.5–5.7 ms of harness CPU
per case): ``cpu_per_case_ms=`` shows which spell a run had.

Run: ``python -m bench.concurrency [--cases 200] [--turns 4] [--latency-ms 1000] [--concurrency 50] [--floor]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio
from pydantic import SecretStr

from threadcase import wire
from threadcase.demo_instance import DemoSettings
from threadcase.harness.runner import RunSettings, prepare_process
from threadcase.instance import InstanceClient
from threadcase.report import run_and_report

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


def process_times(pid: int) -> tuple[float, float]:
    """CPU seconds (user, system) a process used so far; zeros where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process used so far; 0 where /proc is missing."""
    return sum(process_times(pid))


def _machine_busy() -> float:
    """CPU seconds every process of the machine used so far (all cores); 0 where /proc is missing."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


@contextmanager
def demo_process(
    latency_ms: int, *, wrapper: Sequence[str] = (), python_args: Sequence[str] = ()
) -> Iterator[tuple[str, int]]:
    """``threadcase demo serve`` in its own process (its own core and GIL, as a real instance would be);
    yields (url, pid). ``wrapper`` runs it under another program (valgrind), ``python_args`` go to the
    interpreter (``-m cProfile -o FILE``)."""
    command = [*wrapper, sys.executable, *python_args, str(Path(sys.executable).parent / "threadcase")]
    command += ["demo", "serve", "--port", "0", "--latency-ms", str(latency_ms)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # The server's later output (valgrind's, a traceback) must not fill the pipe and block it.
    drain = threading.Thread(target=lambda: proc.stdout and proc.stdout.read(), daemon=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line.startswith("=="):  # valgrind's banner
            line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+", line)
        if match is None:
            raise RuntimeError(f"demo instance did not start: {line!r}")
        drain.start()
        yield match.group(0), proc.pid
    finally:
        # SIGINT, not SIGTERM: uvicorn re-raises the signal after its shutdown, and only an interrupt comes
        # back as an exception the CLI catches, so the process exits normally (and cProfile writes its file).
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


PROBE_THREADS = 5


def core_speed_ms() -> float:
    """Milliseconds for 2,000,000 iterations of a small pure-Python loop, best of three."""
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for value in range(2_000_000):
            total += value
        best = min(best, time.perf_counter() - started)
    return best * 1000


async def probe_turn_latency(url: str, email: str, password: str, turns: int) -> tuple[float, float]:
    """(server-side, client-side) median seconds of one generated turn on an idle instance."""
    server: list[float] = []
    client_side: list[float] = []
    async with InstanceClient(url, email=email, password=password) as client:
        project = await client.personal_project()
        for _ in range(PROBE_THREADS):
            thread_id = str(uuid.uuid4())
            await client.create_thread(thread_id, project.id)
            try:
                async with client.subscribe(thread_id) as sub:
                    for t in range(turns):
                        run_id = await client.chat(thread_id, wire.ChatRequest(message=TURN_TEXTS[t % len(TURN_TEXTS)]))
                        started: float | None = None
                        while True:
                            event = await sub.next_event(30)
                            if event is None:
                                raise RuntimeError(f"probe run {run_id} sent no event for 30 s")
                            if event.type == "run-start":
                                started = time.perf_counter()
                            elif event.type == "run-finish" and event.runId == run_id:
                                if started is not None:
                                    client_side.append(time.perf_counter() - started)
                                break
                        debug = (await client.http.get(f"/rest/instance-ai/debug/runs/{run_id}")).json()["data"]
                        steps = debug["steps"]
                        if len(steps) != 1:
                            raise RuntimeError(
                                f"a generated turn took {len(steps)} agent steps, not 1: the bound is off"
                            )
                        server.append(steps[0]["output"]["performance"]["stepTimeMs"] / 1000)
            finally:
                await client.delete_thread(thread_id)
    return statistics.fmean(server), statistics.median(client_side)


@contextmanager
def generated_run(url: str, cases: int, turns: int, concurrency: int) -> Iterator[RunSettings]:
    """The settings of a run of ``cases`` generated ``turns``-turn cases against the demo at ``url``
    (default login), suite and output in a temporary directory removed afterwards."""
    settings = DemoSettings()
    with tempfile.TemporaryDirectory(prefix="threadcase-bench-") as tmp:
        suite = Path(tmp) / "cases"
        suite.mkdir()
        write_cases(suite, cases, turns)
        yield RunSettings(
            suite=suite,
            base_urls=[url],
            email=settings.email,
            password=SecretStr(settings.password.get_secret_value()),
            concurrency=concurrency,
            output_dir=Path(tmp) / "out",
        )


async def transport_floor(url: str, cases: int, turns: int, concurrency: int) -> float:
    """CPU seconds per case of the requests alone (see the module docstring), on as many clients as a lane opens."""
    from bench.demo_server import one_case
    from threadcase.harness.runner import clients_per_lane

    settings = DemoSettings()
    password = settings.password.get_secret_value()
    clients = [
        InstanceClient(url, email=settings.email, password=password) for _ in range(clients_per_lane(concurrency))
    ]
    try:
        for client in clients:
            await client.login()
        project = await clients[0].personal_project()
        limit = anyio.Semaphore(concurrency)

        async def case(index: int) -> None:
            async with limit:
                await one_case(clients[index % len(clients)], project.id, turns)

        started = time.process_time()
        async with anyio.create_task_group() as tg:
            for index in range(cases):
                tg.start_soon(case, index)
        return (time.process_time() - started) / cases
    finally:
        for client in clients:
            await client.aclose()


async def main(cases: int, turns: int, latency_ms: int, concurrency: int, floor: bool) -> None:
    speed = core_speed_ms()
    settings = DemoSettings()
    with demo_process(latency_ms) as (url, pid), generated_run(url, cases, turns, concurrency) as run:
        floor_ms = 1000 * await transport_floor(url, cases, turns, concurrency) if floor else None
        turn_latency, turn_latency_client = await probe_turn_latency(
            url, settings.email, settings.password.get_secret_value(), turns
        )
        imports = time.perf_counter()
        prepare_process()  # as `threadcase run` does before its run
        imports = time.perf_counter() - imports
        started, cpu_started = time.perf_counter(), time.process_time()
        server_started, machine_started = _process_cpu(pid), _machine_busy()
        summary = await run_and_report(run)
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        server_cpu = _process_cpu(pid) - server_started
        # What everything else on the machine (other users' work) took meanwhile: on a shared machine
        # the ratio is only as good as the cores this run got.
        others_cpu = max(0.0, _machine_busy() - machine_started - cpu - server_cpu)
        bound = math.ceil(cases / concurrency) * turns * turn_latency
        errored = summary.units.errored
        print(
            f"cases={summary.case_iterations} passed_units={summary.units.passed} errored={errored} "
            f"exit={summary.exit_code} harness_cpu={cpu:.3f} cpu_per_case_ms={1000 * cpu / max(1, cases):.1f} "
            f"server_cpu={server_cpu:.3f} others_cpu={others_cpu:.3f} cores={os.cpu_count()} imports={imports:.3f} "
            f"core_speed_ms={speed:.0f}" + (f" floor_cpu_per_case_ms={floor_ms:.1f}" if floor_ms is not None else "")
        )
        nominal = math.ceil(cases / concurrency) * turns * latency_ms / 1000
        print(
            f"turn_latency={turn_latency:.4f} turn_latency_client={turn_latency_client:.4f} latency_ms={latency_ms} "
            f"nominal_bound={nominal:.3f} ratio_nominal={wall / nominal if nominal else math.inf:.3f}"
        )
        per_case = 1000 * cpu / max(1, cases)
        print(f"ratio={wall / bound:.3f} wall={wall:.3f} bound={bound:.3f} cpu_per_case_ms={per_case:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--floor", action="store_true", help="also measure the requests alone (see above)")
    args = parser.parse_args()
    anyio.run(main, args.cases, args.turns, args.latency_ms, args.concurrency, args.floor)
