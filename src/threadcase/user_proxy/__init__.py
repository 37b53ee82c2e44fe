"""The simulated user: director notes, deterministic answers, scripted and model decisions.

:func:`make_proxy` picks the proxy for a case: the model proxy when ``ModelSettings.proxy_model`` is
set, else the scripted proxy (deterministic, documented as weaker).
"""

from __future__ import annotations

from threadcase.case.notes import Script, split_notes, strip_notes
from threadcase.models import ModelSettings
from threadcase.records import UserPlayer
from threadcase.user_proxy.base import ConversationView, ProxyAnswer, SavedWorkflow, UserProxy
from threadcase.user_proxy.scripted import ScriptedProxy
from threadcase.user_proxy.stats import ProxyStats, format_proxy_stats

__all__ = [
    "ConversationView",
    "ModelProxy",
    "ProxyAnswer",
    "ProxyStats",
    "SavedWorkflow",
    "Script",
    "ScriptedProxy",
    "UserProxy",
    "format_proxy_stats",
    "make_proxy",
    "split_notes",
    "strip_notes",
    "user_player",
]


def make_proxy(
    script: Script, models: ModelSettings, *, stats: ProxyStats | None = None, case: str = "the case"
) -> ScriptedProxy:
    """The simulated user for one run: model-driven when a proxy model is configured, else scripted.

    ``case`` names the run in the model proxy's recorded answers and replay misses. The model proxy
    holds an SDK client: close it with ``await proxy.aclose()`` (a no-op for the scripted one) when the
    conversation ends.
    """
    if models.proxy_enabled:
        from threadcase.user_proxy.model import ModelProxy

        return ModelProxy(script, models, stats, case=case)
    return ScriptedProxy(script, stats)


def user_player(models: ModelSettings) -> UserPlayer:
    """Who plays the user in a multi-turn case under these settings (the run's header says it too)."""
    if models.proxy_enabled:
        from threadcase.user_proxy.prompts import PROMPT_VERSION

        return UserPlayer(kind="model", model=models.proxy_model, prompt_version=PROMPT_VERSION)
    return UserPlayer(kind="scripted")


def __getattr__(name: str) -> object:
    # The model proxy pulls in the openai SDK; importing the package (e.g. to parse director notes at
    # case load) should not pay for it.
    if name == "ModelProxy":
        from threadcase.user_proxy.model import ModelProxy

        return ModelProxy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
