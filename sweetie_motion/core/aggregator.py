"""
The aggregator: one full reference pose from the references of the resource owners (R-SYS-3).

For every resource (RobotModel group) the joints are taken from the output of the controller
that owns it *now*, per the arbiter: a controller that just lost a resource cannot drive it
even within the same tick. Joints of a free resource, or of an owner that produced nothing this
tick, hold their last reference with zero velocity and are marked ``tick.held``: the safety
stage brings such a joint to rest along its motion if it was moving.
"""

from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import ControllerOutput


class Aggregator:
    """
    Merges controller outputs into ``tick.reference`` (a cycle stage of role StageRole.AGGREGATOR).

    :param group_indices: resource -> canonical indices of its joints.
    :param owners: returns resource -> owner name ('' when free), e.g. ``Arbiter.owners``.
    :param version: returns a number that changes whenever ownership changes, e.g.
        ``lambda: arbiter.version``; the per-owner index sets are rebuilt only then.
    """

    name = 'aggregator'

    def __init__(self, group_indices: Mapping[str, np.ndarray],
                 owners: Callable[[], Dict[str, str]],
                 version: Optional[Callable[[], int]] = None) -> None:
        self.group_indices = dict(group_indices)
        self._owners = owners
        self._version = version
        self._cached_version: Optional[int] = None
        self._plan: List[Tuple[str, FrozenSet[str], np.ndarray]] = []
        size = 1 + max((int(i.max()) for i in self.group_indices.values() if len(i)),
                       default=-1)
        #: the owner of each joint (canonical order), '' where none; refreshed with the plan
        self.joint_owners: List[str] = [''] * size

    def _owner_plan(self, owners: Mapping[str, str]
                    ) -> List[Tuple[str, FrozenSet[str], np.ndarray]]:
        by_owner: Dict[str, List[str]] = {}
        for resource in self.group_indices:
            by_owner.setdefault(owners.get(resource, ''), []).append(resource)
        return [(owner, frozenset(resources),
                 np.concatenate([self.group_indices[r] for r in resources]))
                for owner, resources in by_owner.items()]

    def merge(self, reference_position: np.ndarray, reference_velocity: np.ndarray,
              outputs: Mapping[str, ControllerOutput], owners: Mapping[str, str],
              plan: Optional[List[Tuple[str, FrozenSet[str], np.ndarray]]] = None,
              held: Optional[np.ndarray] = None) -> None:
        """
        Write the owners' references into the reference arrays, in place.

        Free resources and owners without output this tick hold position, zero velocity.

        :param plan: owner -> (resources, indices), precomputed from ``owners``.
        :param held: a boolean array set True where joints hold that way.
        """
        for owner, resources, indices in plan or self._owner_plan(owners):
            output = outputs.get(owner) if owner else None
            if output is None:
                reference_velocity[indices] = 0.0
                if held is not None:
                    held[indices] = True
            elif resources <= output.resources:
                reference_position[indices] = output.position[indices]
                reference_velocity[indices] = output.velocity[indices]
            else:  # the owner gained resources it did not drive yet this tick
                for resource in resources:
                    part = self.group_indices[resource]
                    if resource in output.resources:
                        reference_position[part] = output.position[part]
                        reference_velocity[part] = output.velocity[part]
                    else:
                        reference_velocity[part] = 0.0
                        if held is not None:
                            held[part] = True

    def update(self, tick: Tick) -> None:
        """Merge this tick's controller outputs into ``tick.reference``."""
        version = self._version() if self._version is not None else None
        if version is None or version != self._cached_version:
            owners = self._owners()
            self._plan = self._owner_plan(owners)
            self._cached_version = version
            joint_owners = [''] * len(self.joint_owners)
            for owner, _, indices in self._plan:
                for i in indices:
                    joint_owners[int(i)] = owner
            self.joint_owners = joint_owners
        held = np.zeros(len(tick.reference.position), dtype=bool)
        self.merge(tick.reference.position, tick.reference.velocity, tick.outputs, {},
                   self._plan, held)
        tick.held = held
        tick.reference.stamp = tick.now
