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


@dataclass(frozen=True)
class LinksChanged:
    """
    Which parts of the motion process answer: (part, up) for each part the window uses.

    :param virtual_robot: whether the virtual robot's ``move_by_hand`` is there (the editor
        poses a virtual robot's free servos through it; the console does not).
    """

    links: Tuple[Tuple[str, bool], ...]
    virtual_robot: bool = False
