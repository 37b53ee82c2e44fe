"""threadcase: an evaluation harness for conversational builder agents.

The package is laid out as the project's map (DESIGN.md) draws it, one sub-package per part:
``harness`` (schema, loader, instance client, conversation loop, grading, reports, runner, CLI),
``seeds`` (inline and replayed seeds), ``user_proxy`` (the simulated user), ``credentials``
(declared credential sets) and ``demo_instance`` (the embedded system under test).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
