"""The embedded demo instance: an n8n-compatible server with a rule-based builder agent.

``demo_server(settings)`` (async) / ``demo_server_sync(settings)`` serve it on a free loopback port
and yield the base URL; ``create_app(settings, agent=...)`` builds the ASGI app. Attributes resolve
lazily so importing the package (e.g. for ``agent.protocol``) starts nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from threadcase.demo_instance.app import create_app
    from threadcase.demo_instance.server import demo_server, demo_server_sync
    from threadcase.demo_instance.settings import DemoSettings

__all__ = ["DemoSettings", "create_app", "demo_server", "demo_server_sync"]

_WHERE = {
    "DemoSettings": "threadcase.demo_instance.settings",
    "create_app": "threadcase.demo_instance.app",
    "demo_server": "threadcase.demo_instance.server",
    "demo_server_sync": "threadcase.demo_instance.server",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
