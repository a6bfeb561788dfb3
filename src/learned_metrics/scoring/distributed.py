"""Sharding a chunk of rows across ``accelerate launch`` processes and gathering the results.

Every process reads and validates the whole chunk (a bad row stops every process at the same point, and none waits
forever in a collective) and scores its share, dealt round-robin over the rows sorted by length; process 0 writes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Processes:
    """This process's place among the launched ones (1 process when not launched by accelerate)."""

    rank: int = 0
    world: int = 1

    is_main = property(lambda self: self.rank == 0)

    def share(self, sizes: Sequence[int]) -> np.ndarray:
        """Input indices this process scores: round-robin over the rows ordered by ``sizes``."""
        import numpy as np  # here, not at the top: `score --help` builds its parser from this module

        order = np.argsort(-np.asarray(sizes, dtype=np.int64), kind="stable")
        return np.sort(order[self.rank :: self.world])

    def gather(self, obj: Any) -> list[Any]:
        """Every process's ``obj``, in rank order."""
        if self.world == 1:
            return [obj]
        from accelerate.utils import gather_object

        return gather_object([obj])


def launched_world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def processes_on_this_machine() -> int:
    """Processes ``accelerate launch`` (or torchrun) started on this machine; 1 otherwise."""
    return max(1, int(os.environ.get("LOCAL_WORLD_SIZE") or launched_world_size()))


def current_processes(cpu: bool = False) -> Processes:
    """Join the process group that ``accelerate launch`` (or torchrun) set up; a plain run is one process."""
    if launched_world_size() <= 1:
        return Processes()
    from accelerate import PartialState

    state = PartialState(cpu=cpu)
    return Processes(state.process_index, state.num_processes)
