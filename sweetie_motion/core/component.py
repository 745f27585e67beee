"""
The cycle side's components and what they share.

A component is something of the cycle side that one node of the ROS side configures and drives:
a controller core, a servo bus, the servo identification. Its class is declared once: it says
what it is made from (:attr:`Component.SPEC`, a picklable dataclass) and how
(:meth:`Component.create`). What the node may ask of it crosses the process seam as a
command, one dataclass per method (:class:`ComponentCommand`: :class:`Activate`,
``StartGoal``, ...), whose :meth:`~ComponentCommand.run` calls that method: from a call on the
ROS side, go-to-definition leads to the method that runs on the cycle side. The host creates a
component from the class itself: adding a kind touches no registry.

They share one RobotModel, one arbiter, one sync cycle with its aggregator and safety stage,
and the servo bus a bus component installs (:class:`CycleResources`); components never create
these. Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import (
    Any, Callable, ClassVar, Generic, List, Optional, Tuple, Type, TypeVar,
)

import numpy as np

from sweetie_motion.core.aggregator import Aggregator
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.cycle import SyncCycle
from sweetie_motion.core.events import SendEvent
from sweetie_motion.core.safety import SafetyStage
from sweetie_motion.core.servo_bus import ServoBus
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModel


class CycleResources:
    """
    What the components of the cycle side share.

    :param model: the configured robot model.
    :param period: cycle period [s].
    """

    def __init__(self, model: RobotModel, period: float) -> None:
        self.model = model
        self.view = model.view()
        groups = model.list_groups()
        self.arbiter = Arbiter(groups)
        self.cycle = SyncCycle(period, len(model.list_all_joints()), on_error=self._stage_error)
        self.aggregator = Aggregator({g: model.get_group_indices(g) for g in groups},
                                     self.arbiter.owners, lambda: self.arbiter.version)
        self.bus: Optional[ServoBus] = None
        self.error_listeners: List[Callable[[str, BaseException], None]] = []
        self.safety_listeners: List[Callable[[str], None]] = []
        #: the last word on the reference before the bus; installed with the aggregator
        self.safety = SafetyStage(model.list_all_joints(), model.joint_limits(), period,
                                  lambda: self.aggregator.joint_owners, self.servos_off,
                                  self._safety_event)
        # the bus the indices were looked up for, and its joints' canonical indices
        self._bus_indices: Tuple[Optional[ServoBus], np.ndarray] = (None,
                                                                    np.zeros(0, dtype=np.intp))

    @property
    def period(self) -> float:
        """Return the cycle period [s]."""
        return self.cycle.period

    def servo_joints(self) -> List[str]:
        """Return the joints driven by servos: every joint but the virtual ones."""
        return [j for j in self.model.list_all_joints() if not self.model.is_virtual(j)]

    def servos_off(self) -> Optional[np.ndarray]:
        """Return a mask of the joints (canonical order) whose servos are off, None: no bus."""
        bus = self.bus
        if bus is None:
            return None
        if self._bus_indices[0] is not bus:
            self._bus_indices = (bus, self.view.get_joint_indices(bus.joints))
        mask = np.zeros(self.cycle.size, dtype=bool)
        mask[self._bus_indices[1]] = ~bus.torque()
        return mask

    def _safety_event(self, message: str) -> None:
        for listener in list(self.safety_listeners):
            listener(message)

    def _stage_error(self, stage: str, error: BaseException) -> None:
        for listener in list(self.error_listeners):
            listener(stage, error)


class ComponentError(SweetieMotionError):
    """A component cannot be created or does not offer what was asked."""


#: a component class
K = TypeVar('K', bound='Component')


class Component:
    """
    Base of the cycle side's components: joining and leaving the cycle, the shared objects.

    Subclasses set :attr:`SPEC` and implement :meth:`create`; :meth:`attach` gives them the
    shared objects and the event sender.
    """

    #: the class of the spec a component is made from
    SPEC: ClassVar[type] = object

    name: str
    #: the shared objects of the cycle side
    shared: CycleResources
    #: sends an event to the ROS side
    send_event: SendEvent

    @classmethod
    def create(cls: Type[K], shared: CycleResources, name: str, send_event: SendEvent,
               spec: Any) -> K:
        """
        Make the component ``name`` from ``spec`` (an instance of :attr:`SPEC`).

        :raises SweetieMotionError: the spec does not fit the robot (unknown chains, ...).
        """
        raise NotImplementedError

    def attach(self, shared: CycleResources, name: str, send_event: SendEvent) -> None:
        """Take the shared objects and the event sender (called by :meth:`create`)."""
        self.shared = shared
        self.name = name
        self.send_event = send_event

    def activate(self) -> None:
        """Join the cycle."""

    def deactivate(self) -> None:
        """Leave the cycle."""

    def destroy(self) -> None:
        """Release what creating the component took (after deactivate)."""


#: what a command's method returns
R = TypeVar('R')


@dataclass(frozen=True)
class ComponentCommand(Generic[K, R]):
    """
    A call the ROS side makes of one method of the component ``target``: a subclass per method.

    A subclass names the class it needs (:attr:`KIND`), carries the method's arguments as
    fields and calls the method in :meth:`run`, on the cycle side; it is pickled whole across
    the process seam (:meth:`~sweetie_motion.host.client.HostClient.call`). Only what a
    command runs can be asked of a component: there is no call by name.
    """

    #: the class the component must be an instance of
    KIND: ClassVar[Type[Component]] = Component

    #: the component's name
    target: str

    @property
    def label(self) -> str:
        """Return the command's name, for messages (``StartGoal``)."""
        return type(self).__name__

    def run(self, component: K) -> R:
        """Call the method on ``component`` (an instance of :attr:`KIND`); return its result."""
        raise NotImplementedError


@dataclass(frozen=True)
class Activate(ComponentCommand[Component, None]):
    """Let the component join the cycle (:meth:`Component.activate`)."""

    def run(self, component: Component) -> None:
        """Call :meth:`Component.activate`."""
        component.activate()


@dataclass(frozen=True)
class Deactivate(ComponentCommand[Component, None]):
    """Let the component leave the cycle (:meth:`Component.deactivate`)."""

    def run(self, component: Component) -> None:
        """Call :meth:`Component.deactivate`."""
        component.deactivate()
