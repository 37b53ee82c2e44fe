"""Run debug (``/rest/instance-ai/debug/...``): a thread's runs, their steps and token numbers."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, ValidationError

from threadcase.wire._base import _Response


class TokenUsage(_Response):
    """Token numbers of one LLM step, as threadcase records them (read from a run-debug step's usage).

    n8n (the AI SDK) reports ``{inputTokens, inputTokenDetails: {noCacheTokens, cacheReadTokens,
    cacheWriteTokens?}, outputTokens, outputTokenDetails, totalTokens, raw}``; :meth:`from_step_usage`
    turns that into these four numbers.
    """

    inputTokens: int = 0
    outputTokens: int = 0
    cachedInputTokens: int = 0
    """Input tokens read from the provider's prompt cache (``inputTokenDetails.cacheReadTokens``)."""
    cacheWriteTokens: int = 0
    """Input tokens written to the prompt cache (``inputTokenDetails.cacheWriteTokens``), where reported."""

    @classmethod
    def from_step_usage(cls, usage: dict[str, Any]) -> TokenUsage:
        """The four numbers from an AI-SDK usage object (n8n's), or from one already in this shape."""
        details = usage.get("inputTokenDetails")
        details = details if isinstance(details, dict) else {}

        def number(*values: Any) -> int:
            for value in values:
                if isinstance(value, int | float) and not isinstance(value, bool):
                    return int(value)
            return 0

        return cls(
            inputTokens=number(usage.get("inputTokens")),
            outputTokens=number(usage.get("outputTokens")),
            cachedInputTokens=number(details.get("cacheReadTokens"), usage.get("cachedInputTokens")),
            cacheWriteTokens=number(details.get("cacheWriteTokens"), usage.get("cacheWriteTokens")),
        )


_OBSERVATIONS = re.compile(r"<observations>(.*?)(?:</observations>|\Z)", re.DOTALL)
_OBSERVATION_LINE = re.compile(r"^\s*[*-] ", re.MULTILINE)


def observation_count(instructions: str) -> int | None:
    """How many observations the ``<observations>`` block of a system prompt holds; None without one.

    n8n 2.41 puts the observer's log there once a thread compacted: a preamble ("The following is your
    memory of this conversation …", a marker legend) then one ``* CRITICAL (HH:MM) …`` bullet per
    observation.
    """
    found = _OBSERVATIONS.search(instructions)
    return None if found is None else len(_OBSERVATION_LINE.findall(found.group(1)))


class StepInstructions(_Response):
    """A step's system instructions as n8n 2.41 records them: ``{role: "system", content, providerOptions}``."""

    role: str | None = None
    content: str = ""


class StepInput(_Response):
    """What one step sent the model, as n8n 2.41's run debug records it.

    n8n: ``{callId, instructions, messages, modelId, promptMessages, provider, providerOptions,
    runtimeContext, sdkStepNumber, stepNumber, stepToolChoice, stepTools, steps, tools, toolsContext}``.
    Only what tells whether the thread compacted is read: once n8n's observer has run, ``messages``
    holds only what came after its cursor and ``instructions`` ends with an ``<observations>`` block.
    """

    stepNumber: int | None = None
    modelId: str | None = None
    instructions: StepInstructions | str | None = None
    """An object on n8n 2.41; a bare string is read too."""
    messages: list[dict[str, Any]] | None = None
    """The conversation messages sent (``{role, content}``), without the system prompt; None when not recorded."""

    @property
    def system_text(self) -> str:
        """The system prompt's text ("" when none was recorded)."""
        if isinstance(self.instructions, StepInstructions):
            return self.instructions.content
        return self.instructions or ""

    @property
    def observations(self) -> int | None:
        """The observations the system prompt carried (None: no ``<observations>`` block, no compaction)."""
        return observation_count(self.system_text)


class RunDebugStep(_Response):
    """One LLM step of a run, as ``GET /rest/instance-ai/debug/runs/:runId`` lists it.

    n8n: ``{stepNumber, input, output}``; a step whose model call failed has no ``output`` (and so no
    token numbers).
    """

    stepNumber: int | None = None
    input: dict[str, Any] | None = None
    """What the step sent the model (instructions, messages, tools): large, so kept raw and read only
    through :attr:`prompt`."""
    output: dict[str, Any] | None = None
    """AI-SDK shaped: ``{usage, content, finishReason, model, performance, ...}``; None when the call failed."""

    @property
    def prompt(self) -> StepInput | None:
        """The step's input read as :class:`StepInput`; None when it recorded no messages (the demo's steps)."""
        if not isinstance(self.input, dict) or not isinstance(self.input.get("messages"), list):
            return None
        try:
            return StepInput.model_validate(self.input)
        except ValidationError:
            return None  # a shape this n8n does not send: no compaction evidence, never a crash

    @property
    def usage(self) -> TokenUsage | None:
        """The step's token numbers; None when the step has no output (its model call failed)."""
        if not isinstance(self.output, dict) or not isinstance(self.output.get("usage"), dict):
            return None
        return TokenUsage.from_step_usage(self.output["usage"])


def step_usages(steps: list[RunDebugStep]) -> list[TokenUsage]:
    """The token numbers of every step that has them, in order (failed steps have none)."""
    return [usage for usage in (step.usage for step in steps) if usage is not None]


class RunSummary(_Response):
    """One run of a thread, as ``GET /rest/instance-ai/debug/threads/:threadId/runs`` lists it.

    n8n: ``{runId, threadId, startedAt (epoch ms), stepCount, workflowCodeCount, label}``.
    """

    runId: str
    threadId: str | None = None
    label: str | None = None
    """The user message that started the run."""
    startedAt: int | None = None
    """Epoch milliseconds."""
    stepCount: int | None = None
    workflowCodeCount: int | None = None
    steps: list[RunDebugStep] | None = None
    """threadcase extension: the run's steps as ``GET .../debug/runs/:runId`` lists them, so a client
    need not fetch each run. The demo instance sends them; n8n does not (None), and a client then asks."""


class RunDebug(_Response):
    """``GET /rest/instance-ai/debug/runs/:runId``: ``{threadId, runId, startedAt, label, nextStepIndex,
    steps, workflowCode}``."""

    runId: str
    threadId: str | None = None
    startedAt: int | None = None
    """Epoch milliseconds."""
    label: str | None = None
    steps: list[RunDebugStep] = Field(default_factory=list)
