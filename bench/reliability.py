"""The reliability soak: interrupted runs, faulty instances, every secret set, fuzzed case files.

Four parts, each against real processes over loopback (a demo instance on a SQLite file in a
temporary directory, ``threadcase`` as a user runs it):

1. **Double signals** — ``--runs`` runs of the golden suite, each sent a first SIGINT or SIGTERM at a
   random moment, a second one up to 0.4 s later, and (one run in three) a third up to 80 ms after that,
   on an instance with a 0.1 fault rate (``--signal-fault-rate``: slow answers stretch the clean-ups).
   Every run must exit 130 with no traceback, and everything the run left on the instance (read
   straight from the demo's database) must be in the journal's leftovers; ``threadcase cleanup
   --journal`` must then leave the instance as it was.
2. **Faults** — the golden suite against a demo answering 503s, slow answers and dropped event
   streams at ``--fault-rate`` (0.4) for ``--seeds`` seeds: no unit may fail (the demo agent is
   correct, so a failure is a false one), and every leftover must be reported.
3. **Secrets** — one run with an instance password, URL userinfo, model key and endpoint userinfo,
   ``EVAL_*`` tokens and LangSmith keys set, against a model endpoint that echoes them in its errors:
   no secret in stdout, stderr, the journal, summary.json, junit.xml or report.html.
4. **Case-file fuzz** — ``--fuzz`` mutated case files (random keys and values, lone surrogates, deep
   nesting, long integers, broken bytes, odd file names): ``threadcase validate`` must accept each or
   answer one line per problem with exit 2.

The last line holds the figures::

    double_signal_runs=20 exit_130=20 tracebacks=0 leftovers_unreported=0 ... secrets_found=0 fuzz_bad=0

Run: ``python -m bench.reliability [--runs 20] [--seeds 5] [--fault-rate 0.4] [--fuzz 300] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import SecretStr

from threadcase.demo_instance import DemoSettings, demo_server_sync
from threadcase.demo_instance.serve import serve_in_thread
from threadcase.harness.journal import read_journal_entries

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "cases" / "golden"
THREADCASE = Path(sys.executable).parent / "threadcase"
KINDS = {
    "threads": "thread",
    "workflows": "workflow",
    "folders": "folder",
    "data_tables": "data_table",
    "agents": "agent",
    "credentials": "credential",
}


def stored(db: Path) -> set[tuple[str, str]]:
    """(kind, id) of every resource in the demo database a run could have created."""
    with sqlite3.connect(db) as conn:
        return {(kind, row[0]) for table, kind in KINDS.items() for row in conn.execute(f"SELECT id FROM {table}")}


def _env(demo: DemoSettings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "THREADCASE_", "LANGSMITH_"))}
    env.update(THREADCASE_EMAIL=demo.email, THREADCASE_PASSWORD=demo.password.get_secret_value(), **extra)
    return env


def _reported(journal: Path) -> set[tuple[str, str]]:
    if not journal.exists():
        return set()
    return {(x.kind, x.id) for x in read_journal_entries(journal).leftovers}


def _cleanup(url: str, journal: Path, demo: DemoSettings) -> int:
    return subprocess.run(
        [str(THREADCASE), "cleanup", "--journal", str(journal), "--base-url", url],
        env=_env(demo),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).returncode


def double_signals(runs: int, rng: random.Random, work: Path, fault_rate: float) -> dict[str, int]:
    """Part 1: interrupted runs (see the module docstring), on an instance with a few faults: its slow
    answers make clean-ups long enough for a third signal to land in the middle of one."""
    names = ("double_signal_runs", "triple_signal_runs", "exit_130", "tracebacks", "leftovers_reported",
             "leftovers_unreported", "left_after_cleanup", "finished_first")  # fmt: skip
    figures = dict.fromkeys(names, 0)
    db = work / "signals.sqlite"
    demo = DemoSettings(db_path=db, latency_ms=40, faults=fault_rate, seed=rng.randint(1, 10**6))
    with demo_server_sync(demo) as url:
        for index in range(runs):
            before = stored(db)
            out = work / f"signals-{index}"
            proc = subprocess.Popen(
                [str(THREADCASE), "run", "--suite", str(GOLDEN), "--base-url", url, "--concurrency", "4",
                 "--no-progress", "--output-dir", str(out), "--inactivity-seconds", "10"],
                env=_env(demo), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            signals = [rng.choice([signal.SIGINT, signal.SIGTERM]) for _ in range(3 if index % 3 == 2 else 2)]
            time.sleep(rng.uniform(0.3, 2.5))
            for number, signum in enumerate(signals):
                if proc.poll() is not None:
                    break
                proc.send_signal(signum)
                if number == 0:
                    time.sleep(rng.uniform(0.0, 0.4))
                elif number == 1:
                    time.sleep(rng.uniform(0.0, 0.08))  # the third lands while the clean-ups run
            _, stderr = proc.communicate(timeout=180)
            if proc.returncode == 0 and "interrupt" not in stderr:
                figures["finished_first"] += 1  # the run ended before its first signal: not counted
                continue
            figures["triple_signal_runs" if len(signals) == 3 else "double_signal_runs"] += 1
            figures["exit_130"] += proc.returncode == 130
            figures["tracebacks"] += "Traceback" in stderr or "internal error" in stderr
            left = stored(db) - before
            reported = _reported(out / "journal.jsonl")
            figures["leftovers_reported"] += len(reported)
            figures["leftovers_unreported"] += len(left - reported)
            for kind, resource_id in sorted(left - reported):
                print(f"run {index}: {kind} {resource_id} left on the instance, not reported", file=sys.stderr)
            if reported:
                _cleanup(url, out / "journal.jsonl", demo)
            figures["left_after_cleanup"] += len(stored(db) - before)
    return figures


def faults(seeds: int, rate: float, work: Path) -> dict[str, int]:
    """Part 2: the golden suite on a faulty instance, once per seed."""
    names = ("fault_runs", "fault_exit_1", "false_failures", "fault_errored", "fault_leftovers_reported",
             "fault_leftovers_unreported")  # fmt: skip
    figures = dict.fromkeys(names, 0)
    for seed in range(1, seeds + 1):
        db = work / f"faults-{seed}.sqlite"
        demo = DemoSettings(db_path=db, faults=rate, seed=seed)
        with demo_server_sync(demo) as url:
            before = stored(db)
            out = work / f"faults-{seed}"
            proc = subprocess.run(
                [str(THREADCASE), "run", "--suite", str(GOLDEN), "--base-url", url, "--concurrency", "4",
                 "--no-progress", "--output-dir", str(out), "--json"],
                env=_env(demo), capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            left = stored(db) - before
        figures["fault_runs"] += 1
        figures["fault_exit_1"] += proc.returncode == 1
        summary = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
        figures["false_failures"] += int(summary.get("units", {}).get("failed", 0))
        figures["fault_errored"] += int(summary.get("units", {}).get("errored", 0))
        reported = _reported(out / "journal.jsonl")
        figures["fault_leftovers_reported"] += len(reported)
        figures["fault_leftovers_unreported"] += len(left - reported)
    return figures


SECRETS = {
    "instance password": "soak-instance-pw-1",
    "url password": "soak-url-pw-2",
    "model key": "soak-model-key-3",
    "model url password": "soak-model-url-pw-4",
    "slack token": "soak-slack-token-5",
    "notion token": "soak-notion-token-6",
    "langsmith key": "soak-langsmith-key-7",
}


def echoing_model() -> FastAPI:
    """An OpenAI-compatible endpoint that refuses every call, echoing the key and headers it was sent."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def refuse(request: Request) -> JSONResponse:
        key = request.headers.get("authorization", "")
        message = f"Incorrect API key provided: {key}. Request headers: {dict(request.headers)}"
        return JSONResponse({"error": {"message": message}}, status_code=401)

    return app


def secrets(work: Path) -> dict[str, int]:
    """Part 3: every output of a run with every secret set, grepped for each secret."""
    demo = DemoSettings(password=SecretStr(SECRETS["instance password"]))
    out = work / "secrets"
    with demo_server_sync(demo) as url, serve_in_thread(echoing_model()) as model_url:
        env = _env(
            demo,
            OPENAI_API_KEY=SECRETS["model key"],
            OPENAI_BASE_URL=model_url.replace("http://", f"http://soak:{SECRETS['model url password']}@") + "/v1",
            THREADCASE_JUDGE_MODEL="echo",
            THREADCASE_PROXY_MODEL="echo",
            EVAL_SLACK_ACCESS_TOKEN=SECRETS["slack token"],
            EVAL_NOTION_TOKEN=SECRETS["notion token"],
            LANGSMITH_API_KEY=SECRETS["langsmith key"],
        )
        lane = url.replace("http://", f"http://soak:{SECRETS['url password']}@")
        proc = subprocess.run(
            [str(THREADCASE), "run", "--suite", str(GOLDEN), "--base-url", lane, "--skip-calibration",
             "--no-progress", "--output-dir", str(out), "--concurrency", "4"],
            env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
    texts = [proc.stdout, proc.stderr]
    texts += [
        (out / n).read_text(encoding="utf-8") for n in ("journal.jsonl", "summary.json", "junit.xml", "report.html")
    ]
    return {
        "secret_outputs": len(texts),
        "secrets_found": sum(text.count(s) for text in texts for s in SECRETS.values()),
    }


VALID: dict[str, Any] = {
    "conversation": [
        {"role": "user", "text": "Every Monday at 8am post the standup notes to #team on Slack"},
        {"role": "user", "text": "[When asked for the channel, say #standup]"},
    ],
    "complexity": "medium",
    "tags": ["fuzz"],
    "messageBudget": 4,
    "outcomeExpectations": ["It posts the notes to #standup"],
}
_ODD = ["", " ", "\n", "\udfff", "\ud800x", "\u202e", "\x00", "[", "[[note]]", "\\", "é" * 50, "z" * 100_000]


def _odd_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.3 or depth > 3:
        return rng.choice([None, True, 0, -1, 10**40, 1.5, *_ODD])
    if roll < 0.6:
        return [_odd_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice([*_ODD, "role", "text", "mode"]): _odd_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _mutated(rng: random.Random) -> bytes:
    case = json.loads(json.dumps(VALID))
    keys = [*VALID, "seed", "credentials", "checks", "datasets", "x"]
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(keys)
        if rng.random() < 0.3:
            case.pop(key, None)
        else:
            case[key] = _odd_value(rng)
    raw = json.dumps(case, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    damage = rng.choice(["none", "truncate", "bytes", "deep", "bigint"])
    if damage == "truncate":
        raw = raw[: rng.randint(0, len(raw))]
    elif damage == "bytes":
        at = rng.randint(0, len(raw))
        raw = raw[:at] + rng.randbytes(rng.randint(1, 8)) + raw[at:]
    elif damage == "deep":
        depth = rng.choice([500, 200_000])
        raw = raw[:-1] + b', "checks": ' + b"[" * depth + b"]" * depth + b"}"
    elif damage == "bigint":
        raw = raw[:-1] + b', "messageBudget": ' + b"9" * 5000 + b"}"
    return raw


def fuzz(count: int, rng: random.Random, work: Path) -> dict[str, int]:
    """Part 4: ``threadcase validate`` over mutated case files, a directory of 50 at a time."""
    figures = {"fuzz_files": 0, "fuzz_bad": 0}
    names = ["case", "with space", "new\nline", "tab\tbed", "ünï"]
    for batch in range(0, count, 50):
        suite = work / f"fuzz-{batch}"
        suite.mkdir()
        for index in range(min(50, count - batch)):
            (suite / f"{rng.choice(names)}-{index}.json").write_bytes(_mutated(rng))
            figures["fuzz_files"] += 1
        proc = subprocess.run(
            [str(THREADCASE), "validate", str(suite)], capture_output=True, text=True, timeout=300, check=False
        )
        lines = proc.stderr.strip().split("\n") if proc.stderr.strip() else []
        bad = proc.returncode not in (0, 2) or "Traceback" in proc.stderr or "internal error" in proc.stderr
        bad |= any(not line.startswith(str(suite)) for line in lines)
        figures["fuzz_bad"] += bad
    return figures


@contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="threadcase-soak-") as name:
        yield Path(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="interrupted runs")
    parser.add_argument("--seeds", type=int, default=5, help="faulty runs, one per seed")
    parser.add_argument("--fault-rate", type=float, default=0.4)
    parser.add_argument("--signal-fault-rate", type=float, default=0.1, help="faults of the interrupted runs' instance")
    parser.add_argument("--fuzz", type=int, default=300, help="mutated case files")
    parser.add_argument("--seed", type=int, default=1, help="seed of the signal timings and the fuzz")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    figures: dict[str, int] = {}
    with _workdir() as work:
        figures |= double_signals(args.runs, rng, work, args.signal_fault_rate)
        print(" ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
        figures |= faults(args.seeds, args.fault_rate, work)
        figures |= secrets(work)
        figures |= fuzz(args.fuzz, rng, work)
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
