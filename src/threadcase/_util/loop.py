"""Which event loop our entry points run on: uvloop where it is installed, asyncio's own otherwise.

A run at high concurrency spends most of its CPU in the event loop (every request, every SSE chunk);
uvloop does that work in C. It is a dependency on the platforms it supports, and the fallback keeps
Windows and PyPy working with the same code.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, TypeVarTuple

import anyio

__all__ = ["backend_options", "run"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def backend_options() -> dict[str, Any]:
    """anyio's asyncio backend options: ``use_uvloop`` when uvloop can be imported."""
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


def run(func: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
    """``anyio.run`` on the fastest loop available."""
    return anyio.run(func, *args, backend="asyncio", backend_options=backend_options())
