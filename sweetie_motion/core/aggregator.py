"""
The aggregator: one full reference pose from the references of the resource owners (R-SYS-3).

For every resource (RobotModel group) the joints are taken from the output of the controller
that owns it *now*, per the arbiter: a controller that just lost a resource cannot drive it
even within the same tick. Joints of a free resource, or of an owner that produced nothing this
tick, hold their last reference with zero velocity.
"""

from typing import Callable, Dict, Mapping

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import ControllerOutput


class Aggregator:
    """
    Merges controller outputs into ``tick.reference`` (a cycle stage of role 'aggregator').

    :param group_indices: resource -> canonical indices of its joints.
    :param owners: returns resource -> owner name ('' when free), e.g. ``Arbiter.owners``.
    """

    name = 'aggregator'

    def __init__(self, group_indices: Mapping[str, np.ndarray],
                 owners: Callable[[], Dict[str, str]]) -> None:
        self.group_indices = dict(group_indices)
        self._owners = owners

    def merge(self, reference_position: np.ndarray, reference_velocity: np.ndarray,
              outputs: Mapping[str, ControllerOutput], owners: Mapping[str, str]) -> None:
        """
        Write the owners' references into the reference arrays, in place.

        Free resources and owners without output this tick hold position, zero velocity.
        """
        for resource, indices in self.group_indices.items():
            output = outputs.get(owners.get(resource, ''))
            if output is not None and resource in output.resources:
                reference_position[indices] = output.position[indices]
                reference_velocity[indices] = output.velocity[indices]
            else:
                reference_velocity[indices] = 0.0

    def update(self, tick: Tick) -> None:
        """Merge this tick's controller outputs into ``tick.reference``."""
        self.merge(tick.reference.position, tick.reference.velocity, tick.outputs,
                   self._owners())
        tick.reference.stamp = tick.now
