"""
A controller type of a user's own, added to the motion process without touching sweetie_motion.

HoldPose drives its chains' joints to a fixed pose at a bounded speed. It is what a user
writes: the core (a ControllerCore that says what it is made from and how), the command its
node sends it (:class:`ReadDistance`) and its node (a ControllerNode naming the core); a
process config then names it ``hold_pose:HoldPoseNode``. No registry of the package is
touched (issue #21, item 1).
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np
from std_srvs.srv import Trigger
from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.core.component import ComponentCommand, CycleResources
from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.events import SendEvent
from sweetie_motion.nodes.controllers import controller_parameters, ControllerNode
from sweetie_motion.parameters import ParameterSpec


@dataclass(frozen=True)
class HoldPoseSpec:
    """What a HoldPose controller is made from: chains, one target per joint, speed."""

    chains: Tuple[str, ...]
    pose: Tuple[float, ...]
    speed: float
    order: int = 0


class HoldPoseCore(ControllerCore):
    """Moves its joints towards the pose at ``speed`` [rad/s] and holds them there."""

    SPEC = HoldPoseSpec

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: HoldPoseSpec) -> 'HoldPoseCore':
        """Make the controller for the cycle of ``shared``."""
        core = cls(name, shared.view, shared.arbiter, spec.chains)
        if len(spec.pose) != len(core.joints):
            raise ValueError(f'pose has {len(spec.pose)} values for {len(core.joints)} joints')
        core.target = np.array(spec.pose, dtype=float)
        core.step = spec.speed * shared.period
        core.order = spec.order
        core.attach(shared, name, send_event)
        return core

    def update(self, tick: Tick) -> None:
        """Step towards the pose from the reference."""
        position = tick.reference.position.copy()
        now = position[self.indices]
        position[self.indices] = now + np.clip(self.target - now, -self.step, self.step)
        self.emit(tick, position, np.zeros(len(position)))

    def distance(self) -> float:
        """Return how far the reference is from the pose [rad] (a call of the node)."""
        reference = self.shared.cycle.reference.position[self.indices]
        return float(np.abs(reference - self.target).max())


@dataclass(frozen=True)
class ReadDistance(ComponentCommand[HoldPoseCore, float]):
    """Read how far the reference is from the pose (:meth:`HoldPoseCore.distance`)."""

    KIND = HoldPoseCore

    def run(self, component: HoldPoseCore) -> float:
        """Call :meth:`HoldPoseCore.distance`."""
        return component.distance()


class HoldPoseNode(ControllerNode):
    """The HoldPose controller as a lifecycle node; ``~/at_pose`` says how far it is."""

    COMPONENT = HoldPoseCore
    PARAMETERS = controller_parameters() + [
        ParameterSpec('pose', [0.0], 'Target of every joint of the chains [rad].',
                      array_of=float),
        ParameterSpec('speed', 0.5, 'Speed towards the pose [rad/s].', low=0.01, high=10.0),
    ]

    def component_spec(self) -> HoldPoseSpec:
        """Return the spec the core is made from."""
        values = self.values
        return HoldPoseSpec(tuple(values['controlled_chains']), tuple(values['pose']),
                            values['speed'], self.order)

    def create_entities(self) -> None:
        """Offer ``~/at_pose``."""
        self._entities = [self.create_service(Trigger, '~/at_pose', self._at_pose)]

    def _at_pose(self, request, response):
        distance = self.host.run(ReadDistance(self.get_name()))
        response.success = distance < 1e-6
        response.message = f'{distance:.6f} rad from the pose'
        return response
