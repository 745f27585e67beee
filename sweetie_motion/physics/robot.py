"""
The physics robot as a component of the cycle side: installs a :class:`PhysicsServoBus` (pure).

Its node (:mod:`sweetie_motion.nodes.physics_robot`) creates it at configure; the robot's
physics model is built here, in the cycle process, from the robot description the process
loaded (its ``physics:`` section), as ``sweetie-motion simulate`` builds it.
"""

from dataclasses import dataclass

from sweetie_motion.core.component import ComponentCommand, CycleResources
from sweetie_motion.core.events import SendEvent
from sweetie_motion.physics.bus import PhysicsServoBus, PhysicsState, PhysicsStatistics
from sweetie_motion.servo.components import BusComponent


@dataclass(frozen=True)
class PhysicsRobotSpec:
    """
    The simulated robot on the floor.

    :param max_catch_up: after lost ticks, the most simulated time one tick makes up, in
        cycle periods (the rest is dropped: the robot lags the wall clock).
    """

    max_catch_up: int = 2


class PhysicsRobotComponent(BusComponent):
    """Installs a :class:`PhysicsServoBus` as the servo bus of the cycle."""

    SPEC = PhysicsRobotSpec
    bus: PhysicsServoBus

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: PhysicsRobotSpec) -> 'PhysicsRobotComponent':
        """
        Build the robot's physics model and install its bus in the cycle of ``shared``.

        :raises PhysicsConfigError: a ``physics:`` setting the model cannot be built from.
        """
        return cls(shared, name, send_event, spec)

    def __init__(self, shared: CycleResources, name: str, send_event: SendEvent,
                 spec: PhysicsRobotSpec) -> None:
        self.attach(shared, name, send_event)
        from sweetie_motion.physics.builder import build_physics
        physics = build_physics(shared.model)
        self.install(PhysicsServoBus(shared.servo_joints(), physics,
                                     spec.max_catch_up * shared.period,
                                     physics.settings.settle_time))

    def reset(self) -> str:
        """Stand the robot up again where it is (see :meth:`PhysicsServoBus.reset`)."""
        return self.bus.reset()

    def state(self) -> PhysicsState:
        """Return the robot's base pose and its feet's contacts."""
        return self.bus.state()

    def statistics(self) -> PhysicsStatistics:
        """Return how the simulation kept up with the cycle."""
        return self.bus.statistics()


@dataclass(frozen=True)
class ResetPhysics(ComponentCommand[PhysicsRobotComponent, str]):
    """Stand the robot up again where it is (:meth:`PhysicsRobotComponent.reset`)."""

    KIND = PhysicsRobotComponent

    def run(self, component: PhysicsRobotComponent) -> str:
        """Call :meth:`PhysicsRobotComponent.reset`; return what it did."""
        return component.reset()


@dataclass(frozen=True)
class ReadPhysicsState(ComponentCommand[PhysicsRobotComponent, PhysicsState]):
    """Read the robot's base pose and its feet's contacts (:meth:`PhysicsRobotComponent.state`)."""

    KIND = PhysicsRobotComponent

    def run(self, component: PhysicsRobotComponent) -> PhysicsState:
        """Call :meth:`PhysicsRobotComponent.state`."""
        return component.state()


@dataclass(frozen=True)
class ReadPhysicsStatistics(ComponentCommand[PhysicsRobotComponent, PhysicsStatistics]):
    """Read how the simulation kept up (:meth:`PhysicsRobotComponent.statistics`)."""

    KIND = PhysicsRobotComponent

    def run(self, component: PhysicsRobotComponent) -> PhysicsStatistics:
        """Call :meth:`PhysicsRobotComponent.statistics`."""
        return component.statistics()
