"""Run debug's step input, read as n8n 2.41.1 sends it: the evidence that a thread compacted.

The fixture is a trimmed capture from the real n8n (``N8N_INSTANCE_AI_OBSERVER_MESSAGE_TOKENS=1000``):
the first live run after a 26-message restore, and the run after the observer ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from threadcase import wire

CAPTURE = Path(__file__).with_name("n8n_run_debug_compaction.json")


def _capture(which: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CAPTURE.read_text(encoding="utf-8"))[which]
    return data


def test_a_compacted_run_sends_one_message_and_its_observations_in_the_system_prompt() -> None:
    debug = wire.RunDebug.model_validate(_capture("compacted"))
    prompt = debug.steps[0].prompt
    assert prompt is not None
    assert isinstance(prompt.instructions, wire.StepInstructions)
    assert prompt.instructions.role == "system"
    assert prompt.messages is not None
    assert len(prompt.messages) == 1
    assert prompt.observations == 5  # the capture keeps five of the observer's bullets
    assert prompt.system_text.startswith("<built_in_rules>")
    assert debug.steps[0].usage is not None  # the token numbers are read as before


def test_a_run_before_compaction_sends_the_whole_history_and_no_observations() -> None:
    prompt = wire.RunDebug.model_validate(_capture("full")).steps[0].prompt
    assert prompt is not None
    assert prompt.messages is not None
    assert len(prompt.messages) == 27
    assert prompt.observations is None


def test_a_step_without_recorded_messages_has_no_prompt() -> None:
    """The demo's steps record only ``{stepNumber, provider, modelId}``: no evidence, not an empty prompt."""
    demo = wire.RunDebugStep.model_validate({"stepNumber": 0, "input": {"stepNumber": 0, "provider": "demo"}})
    assert demo.prompt is None
    assert wire.RunDebugStep.model_validate({"stepNumber": 0}).prompt is None
    odd = wire.RunDebugStep.model_validate({"input": {"messages": [], "instructions": 7}})
    assert odd.prompt is None  # a shape n8n does not send is no evidence, never a crash


def test_observation_count_reads_the_block_only() -> None:
    assert wire.observation_count("no memory here\n* a bullet outside") is None
    assert wire.observation_count("<observations>\nThe following is your memory …\n</observations>") == 0
    text = "rules\n* not this one\n<observations>\nlegend\n\n* CRITICAL (10:16) a\n* INFO (10:17) b\n</observations>"
    assert wire.observation_count(text) == 2
    assert wire.observation_count("<observations>\n* CRITICAL (10:16) cut off") == 1  # no closing tag
    bare = wire.StepInput.model_validate({"messages": [], "instructions": "<observations>\n* x\n</observations>"})
    assert bare.observations == 1
