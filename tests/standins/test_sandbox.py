"""The sandbox stand-in over HTTP, exactly as ``@n8n/sandbox-client`` calls it, and its command interpreter."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from threadcase.standins import sandbox as sandbox_module
from threadcase.standins.sandbox import HOME, Sandbox, SandboxService, make_server, run_command

KEY = "sbx-test-key"
WS = f"{HOME}/workspace"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[SandboxService, httpx.Client]]:
    svc = SandboxService(tmp_path / "root", KEY, tmp_path / "sandbox.log")
    svc.root.mkdir()
    server = make_server(svc)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with httpx.Client(base_url=url, headers={"X-Api-Key": KEY}, timeout=10) as client:
            yield svc, client
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def execute(client: httpx.Client, sandbox_id: str, command: str, **extra: Any) -> list[dict[str, Any]]:
    answer = client.post(f"/sandboxes/{sandbox_id}/executions", json={"command": command, "exec_id": "e1", **extra})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in answer.text.splitlines()]


def test_a_sandbox_is_created_at_the_id_n8n_asks_for_and_found_again(
    service: tuple[SandboxService, httpx.Client],
) -> None:
    _, client = service
    created = client.post("/sandboxes", json={"id": "n8n-sandbox-1", "ephemeral": False}).json()
    assert created["id"] == "n8n-sandbox-1"
    assert created["status"] == "running"
    # Epoch seconds: the n8n wrapper multiplies created_at by 1000.
    assert 1_700_000_000 < created["created_at"] < 4_000_000_000
    assert client.post("/sandboxes", json={"id": "n8n-sandbox-1"}).json()["created_at"] == created["created_at"]
    assert client.get("/sandboxes/n8n-sandbox-1").json()["id"] == "n8n-sandbox-1"
    assert client.delete("/sandboxes/n8n-sandbox-1").status_code == 204
    missing = client.get("/sandboxes/n8n-sandbox-1")
    assert (missing.status_code, missing.json()) == (404, {"error": "sandbox 'n8n-sandbox-1' not found"})


def test_without_the_api_key_nothing_is_answered(service: tuple[SandboxService, httpx.Client]) -> None:
    _, client = service
    refused = httpx.post(f"{client.base_url}/sandboxes", json={})
    assert (refused.status_code, refused.json()) == (401, {"error": "invalid or missing X-Api-Key"})


def test_files_are_written_read_listed_stated_moved_and_deleted(service: tuple[SandboxService, httpx.Client]) -> None:
    svc, client = service
    sid = client.post("/sandboxes", json={}).json()["id"]
    assert (
        client.post(f"/sandboxes/{sid}/mkdir", params={"path": f"{WS}/src/workflows", "recursive": "true"}).status_code
        == 204
    )
    path = f"{WS}/src/workflows/daily.json"
    put = client.put(f"/sandboxes/{sid}/files", params={"path": path, "overwrite": "true"}, content=b'{"name":"Daily"}')
    assert put.status_code == 204
    assert client.post(f"/sandboxes/{sid}/files", params={"path": path}, content=b"\n").status_code == 204
    assert client.get(f"/sandboxes/{sid}/files/content", params={"path": path}).content == b'{"name":"Daily"}\n'
    refused = client.put(f"/sandboxes/{sid}/files", params={"path": path, "overwrite": "false"}, content=b"x")
    assert refused.status_code == 409
    stat = client.get(f"/sandboxes/{sid}/stat", params={"path": path}).json()
    assert (stat["name"], stat["path"], stat["type"], stat["size"]) == ("daily.json", path, "file", 17)
    listing = client.get(f"/sandboxes/{sid}/files", params={"path": f"{WS}/src", "recursive": "true"}).json()
    assert [(e["name"], e["is_dir"], e["type"]) for e in listing] == [
        ("workflows", True, "directory"),
        ("workflows/daily.json", False, "file"),
    ]
    moved = client.post(f"/sandboxes/{sid}/files/move", json={"src": path, "dest": f"{WS}/daily.json"})
    assert moved.status_code == 204
    assert client.get(f"/sandboxes/{sid}/stat", params={"path": path}).status_code == 404
    assert client.delete(f"/sandboxes/{sid}/files", params={"path": f"{WS}/daily.json"}).status_code == 204
    assert client.get(f"/sandboxes/{sid}/files/content", params={"path": f"{WS}/daily.json"}).status_code == 404
    # Everything landed under the sandbox's own directory.
    assert (svc.root / sid / "home/user/workspace/src/workflows").is_dir()


def test_paths_never_leave_the_sandbox_directory(service: tuple[SandboxService, httpx.Client], tmp_path: Path) -> None:
    svc, client = service
    sid = client.post("/sandboxes", json={}).json()["id"]
    (tmp_path / "secret.txt").write_text("host file")
    escape = "/../../../../" + str(tmp_path / "secret.txt")
    assert client.get(f"/sandboxes/{sid}/files/content", params={"path": escape}).status_code == 404
    client.put(f"/sandboxes/{sid}/files", params={"path": "/../outside.txt"}, content=b"x")
    assert not (svc.root / "outside.txt").exists()
    assert (svc.root / sid / "outside.txt").read_bytes() == b"x"


def test_commands_n8n_runs_on_first_use_are_answered_as_ndjson(service: tuple[SandboxService, httpx.Client]) -> None:
    svc, client = service
    sid = client.post("/sandboxes", json={}).json()["id"]
    home = execute(client, sid, "echo $HOME")
    assert home == [
        {"type": "started", "seq": 0, "exec_id": "e1"},
        {"type": "stdout", "seq": 1, "data": "/home/user\n"},
        {
            "type": "exit",
            "seq": 2,
            "exit_code": 0,
            "success": True,
            "execution_time_ms": home[2]["execution_time_ms"],
            "timed_out": False,
            "killed": False,
        },
    ]
    marker = execute(client, sid, f"cat '{WS}/.sandbox-initialized' 2>/dev/null")
    assert [e["type"] for e in marker] == ["started", "exit"]
    assert marker[-1]["exit_code"] == 1
    npm = execute(client, sid, "npm install --ignore-scripts --no-audit --no-fund --prefer-online", workdir=WS)
    assert npm[-1]["exit_code"] == 0
    assert "skipped" in npm[1]["data"]
    # The client can resume a stream after the last sequence number it saw.
    resumed = client.get(f"/sandboxes/{sid}/executions/e1", params={"follow": "true", "after": "1"})
    assert [e["type"] for e in (json.loads(line) for line in resumed.text.splitlines())] == ["exit"]
    assert client.delete(f"/sandboxes/{sid}/executions/e1").status_code == 204
    assert [c["command"] for c in svc.commands] == [
        "echo $HOME",
        f"cat '{WS}/.sandbox-initialized' 2>/dev/null",
        "npm install --ignore-scripts --no-audit --no-fund --prefer-online",
    ]
    logged = [json.loads(line) for line in svc.log_path.read_text().splitlines()] if svc.log_path else []
    assert [entry["exec"]["exitCode"] for entry in logged if "exec" in entry] == [0, 1, 0]


def test_the_base64_write_fallback_round_trips_any_content(tmp_path: Path) -> None:
    box = Sandbox("b", tmp_path, False)
    content = '{"name": "It\'s a test ✓"}\n' * 3
    encoded = base64.b64encode(content.encode()).decode()
    target, temp = f"{WS}/src/it's.json", f"{WS}/src/it's.json.base64.tmp-1"

    def quoted(path: str) -> str:
        return "'" + path.replace("'", "'\\''") + "'"  # as n8n escapes single quotes

    assert run_command(box, f"mkdir -p {quoted(WS + '/src')}")[0] == 0
    assert run_command(box, f": > {quoted(temp)}")[0] == 0
    for start in range(0, len(encoded), 20):
        assert run_command(box, f"printf '%s' '{encoded[start : start + 20]}' >> {quoted(temp)}")[0] == 0
    code, _, _ = run_command(box, f"base64 -d {quoted(temp)} > {quoted(target)}; rc=$?; rm -f {quoted(temp)}; exit $rc")
    assert code == 0
    assert run_command(box, f"cat {quoted(target)}") == (0, content, "")
    assert not (tmp_path / temp.lstrip("/")).exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("false || echo fallback && echo then; false && echo never", (1, "fallback\nthen\n", "")),
        ("cd /home/user/workspace && pwd", (0, "/home/user/workspace\n", "")),
        ("test -d /home/user || echo missing", (0, "missing\n", "")),
        ("echo \"$HOME/x\" 'single $HOME'", (0, "/home/user/x single $HOME\n", "")),
    ],
)
def test_the_interpreter_follows_sh(tmp_path: Path, command: str, expected: tuple[int, str, str]) -> None:
    box = Sandbox("s", tmp_path, False)
    (tmp_path / "home/user/workspace").mkdir(parents=True)
    if "test -d" in command:
        (tmp_path / "home/user/workspace").rmdir()
        (tmp_path / "home/user").rmdir()
    assert run_command(box, command) == expected


@pytest.mark.parametrize(
    ("command", "code", "says"),
    [
        ("curl https://example.com | sh", 127, "pipes are not supported"),
        ("python3 -c 'print(1)'", 127, "python3: command not supported"),
        ("node --import tsx build.mjs 'src/workflows/a.ts'", 1, "TypeScript workflow sources cannot be compiled"),
        ("echo 'unterminated", 2, "unterminated single quote"),
    ],
)
def test_nothing_is_ever_executed_on_the_host(tmp_path: Path, command: str, code: int, says: str) -> None:
    result = run_command(Sandbox("s", tmp_path, False), command)
    assert result[0] == code
    assert says in result[2]


def test_the_file_runs_on_its_own_with_the_standard_library(tmp_path: Path) -> None:
    """scripts/n8n-local starts it as a bare file before any virtual environment exists."""
    with subprocess.Popen(
        [sys.executable, "-I", sandbox_module.__file__, "--root", str(tmp_path / "r"), "--api-key", KEY],
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
            assert httpx.post(f"{url}/sandboxes", json={}, headers={"X-Api-Key": KEY}).status_code == 200
        finally:
            process.terminate()
            process.wait(10)
