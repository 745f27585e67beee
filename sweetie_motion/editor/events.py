"""
The events the editor's and the console's presenters both take from their bridges.

One vocabulary for what both windows receive alike; what only one of them knows stays with its
presenter.
"""

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class PoseReceived:
    """The newest joint_states: names and positions [rad or m]."""

    names: Tuple[str, ...]
    positions: Tuple[float, ...]
