"""threadcase: an evaluation harness for conversational builder agents.

The package is built in floors; a module imports only from its own floor or below, never upwards,
and no two modules import each other (``tests/test_floors.py`` walks the imports):

- floor 0, the words everything uses: ``wire`` (the wire shapes of n8n's Instance AI API),
  ``errors`` (the one exception tree), ``records`` and ``render`` (the evidence of a run and its
  text form), ``verdicts``, ``models`` (model settings), ``_util`` (the one fan-out helper);
- floor 1: ``case`` (the case-file model, its rules, the loader) and ``instance`` (the n8n
  REST/SSE client);
- floor 2: ``seeds``, ``credentials``, ``user_proxy`` (the simulated user), ``grading``;
- floor 3: ``harness`` (orchestration only: runner, pipeline, conversation loop, lanes, statistics);
- floor 4: ``report`` and ``cli``, the outside faces.

``demo_instance``, the embedded system under test, stands beside the floors: it imports ``wire``
and nothing else of threadcase, so it could be lifted out whole.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
