"""Turning a case's seed into a restored thread: inline seeds here, replay in ``seeds.replay``."""

from threadcase.seeds.inline import (
    CreatedResources,
    InstanceSnapshot,
    RestoredSeed,
    cleanup_created,
    expand_messages,
    restore_inline_seed,
    take_snapshot,
)

__all__ = [
    "CreatedResources",
    "InstanceSnapshot",
    "RestoredSeed",
    "cleanup_created",
    "expand_messages",
    "restore_inline_seed",
    "take_snapshot",
]
