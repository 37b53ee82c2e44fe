"""``prepare_process``: what ``threadcase run`` does to its own process before a run."""

from __future__ import annotations

import subprocess
import sys


def test_it_loads_the_run_modules_and_settles_the_collector() -> None:
    # In a child process: the collector settings are process-wide and must not leak into this one.
    probe = (
        "import gc, sys\n"
        "from threadcase.harness.runner import prepare_process\n"
        "assert 'threadcase.harness.pipeline' not in sys.modules\n"
        "prepare_process()\n"
        "print('threadcase.harness.pipeline' in sys.modules, gc.get_threshold()[0], gc.get_freeze_count() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "10000", "True"]
