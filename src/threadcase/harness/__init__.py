"""Orchestration, and nothing else: the runner, one case-iteration's pipeline, the conversation loop,
lanes and statistics. Everything it orchestrates lives on the floors below."""
