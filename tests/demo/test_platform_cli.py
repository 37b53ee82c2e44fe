"""``threadcase demo serve``: starts, prints the URL and login, serves, stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from threadcase.cli import main


def test_serve_prints_url_and_login_and_stops_on_ctrl_c() -> None:
    env = {**os.environ, "THREADCASE_DEMO_PASSWORD": "not-the-default"}
    command = [sys.executable, "-c", "from threadcase.cli import main; main()", "demo", "serve", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("threadcase demo instance at http://127.0.0.1:"), first
        url = first.rsplit(" ", 1)[-1].strip()
        login_line = process.stdout.readline()
        assert "owner@threadcase.dev" in login_line
        assert "not-the-default" not in login_line  # a chosen password is never printed
        response = httpx.post(
            f"{url}/rest/login", json={"emailOrLdapLoginId": "owner@threadcase.dev", "password": "not-the-default"}
        )
        assert response.status_code == 200
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "stopped" in output


def test_unknown_misbehaviour_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "serve", "--misbehave", "sulks"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "sulks" in err
    assert "drops-change" in err  # says what would be valid


@pytest.mark.parametrize(
    ("flag", "value"), [("--trace-to", "/proc/nope/t.jsonl"), ("--db", "/proc/x.db"), ("--db", "/proc/nope/x.db")]
)
def test_an_unusable_path_is_a_usage_error_and_leaves_no_temp_folder(
    flag: str, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An unwritable --trace-to / --db printed a traceback, exited 1 and leaked the temporary folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "serve", "--port", "0", flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert flag in err
    assert value in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_served_process_tunes_its_garbage_collector_and_an_embedded_one_does_not() -> None:
    import gc

    from threadcase.demo_instance.server import demo_server_sync

    before = gc.get_threshold()
    with demo_server_sync() as url:
        assert httpx.get(f"{url}/healthz").status_code == 200
    assert gc.get_threshold() == before  # the runner's own process is left alone
    probe = "import gc; from threadcase.demo_instance.server import _tune_gc; _tune_gc(); "
    probe += "print(gc.get_threshold()[0], gc.get_freeze_count() > 0)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["10000", "True"]
