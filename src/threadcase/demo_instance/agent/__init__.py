"""The demo instance's deterministic, rule-based builder agent (see ``demo_instance/README.md``).

The platform calls :func:`run_turn` once per chat message through the seam in :mod:`.protocol`.
"""

from threadcase.demo_instance.agent.builder import run_turn
from threadcase.demo_instance.agent.protocol import AgentContext, BuilderAgent, HistoryMessage, ToolFailed, TurnInput

__all__ = ["AgentContext", "BuilderAgent", "HistoryMessage", "ToolFailed", "TurnInput", "run_turn"]
