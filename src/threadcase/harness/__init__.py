"""Orchestration, and nothing else: the runner, one case-iteration's pipeline, the conversation loop,
lanes and statistics; and the runs made from journals — shards (``shard``), what a journal line
records of its run (``provenance``), merges (``merge``), re-grades (``regrade``) and comparisons
(``compare``). Everything it orchestrates lives on the floors below."""
