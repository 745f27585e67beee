"""
The components of the cycle side, each configured by a spec and driven by its node.

A node of the ROS side (sweetie_motion.nodes) creates its component with a picklable spec at
configure, activates and deactivates it with its lifecycle, and calls the methods listed in the
component's :attr:`Component.REMOTE`; nothing else of the cycle side is reachable from there.
The components do what the nodes used to do with the cores directly: join and leave the cycle,
ask the arbiter, start goals.
"""

from dataclasses import dataclass
from typing import (
    Callable, Dict, Hashable, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple,
)

import numpy as np

from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.controllers.joint_state import FollowJointStateCore
from sweetie_motion.controllers.joint_trajectory import (
    ExecutingGoal, Feedback, GoalPlan, JointTrajectoryCore, Outcome,
)
from sweetie_motion.controllers.torque_switch import TorqueMainSwitchCore
from sweetie_motion.core.ports import JointVector
from sweetie_motion.core.smoothing import FilterSpec
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.shared import CycleResources
from sweetie_motion.servo.bus import BusInput, BusOutput, ServoStatus
from sweetie_motion.servo.virtual import VirtualServoBus
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import ResultCode

#: an event for the ROS side: a tuple whose first item names it
Emit = Callable[[tuple], None]


class ComponentError(SweetieMotionError):
    """A component cannot be created or does not offer what was asked."""


class Component:
    """
    Something of the cycle side that one node configures and drives.

    :param resources: the shared objects of the cycle side.
    :param name: the node's name (also the owner name the arbiter shows).
    :param emit: sends an event to the ROS side.
    """

    #: methods the ROS side may call, besides activate, deactivate and destroy
    REMOTE: Tuple[str, ...] = ()

    def __init__(self, resources: CycleResources, name: str, emit: Emit) -> None:
        self.resources = resources
        self.name = name
        self.emit = emit

    def activate(self) -> None:
        """Join the cycle."""

    def deactivate(self) -> None:
        """Leave the cycle."""

    def destroy(self) -> None:
        """Release what creating the component took (after deactivate)."""


# --- the virtual robot ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VirtualRobotSpec:
    """
    The simulated servo bus.

    :param lag: position loop time constant [s].
    :param delay: command delay [cycles].
    :param max_velocity: top speed of every servo [rad/s]; 0 = the URDF velocity limits.
    :param blocked: joints whose servos are jammed.
    """

    lag: float = 0.05
    delay: int = 1
    max_velocity: float = 0.0
    blocked: Tuple[str, ...] = ()


class VirtualRobotComponent(Component):
    """Installs a :class:`VirtualServoBus` as the servo bus of the cycle."""

    REMOTE = ('move_by_hand', 'set_blocked')

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: VirtualRobotSpec) -> None:
        super().__init__(resources, name, emit)
        view = resources.view
        joints = resources.servo_joints()
        indices = view.get_joint_indices(joints)
        limits = view.velocity_limits()[indices]
        if spec.max_velocity > 0:
            limits = np.full(len(joints), spec.max_velocity)
        self.bus = VirtualServoBus(joints, limits, lag=spec.lag, delay=spec.delay)
        self.set_blocked(spec.blocked)
        self._input = BusInput(self.bus, indices,
                               view.get_joint_indices(view.list_virtual_joints()))
        self._output = BusOutput(self.bus, indices)
        resources.bus = self.bus

    def activate(self) -> None:
        """Read the servos before the controllers, command them after the aggregator."""
        self.resources.cycle.add_stage('input', self._input)
        self.resources.cycle.add_stage('output', self._output)

    def deactivate(self) -> None:
        """Leave the cycle."""
        self.resources.cycle.remove_stage(self._input)
        self.resources.cycle.remove_stage(self._output)

    def destroy(self) -> None:
        """Uninstall the bus."""
        if self.resources.bus is self.bus:
            self.resources.bus = None

    def move_by_hand(self, positions: Mapping[str, float]) -> List[str]:
        """Move free servos as a hand would; return the joints that moved."""
        return self.bus.move_by_hand(positions)

    def set_blocked(self, joints: Iterable[str]) -> None:
        """
        Jam exactly ``joints`` (and free every other servo of the bus).

        :raises ComponentError: a name is not a servo joint (nothing changes).
        """
        joints = list(joints)
        unknown = [j for j in joints if j not in set(self.bus.joints)]
        if unknown:
            raise ComponentError(f'blocked_joints: not servo joints: {", ".join(unknown)}')
        self.bus.block(self.bus.joints, False)
        self.bus.block(joints, True)


# --- controllers ---------------------------------------------------------------------------------


class ControllerComponent(Component):
    """
    A controller core in the cycle: stage order, arbiter requests, not-operational events.

    :param order: place among the controllers of a tick (lower first).
    """

    REMOTE = ('acquire',)

    def __init__(self, resources: CycleResources, name: str, emit: Emit, core: ControllerCore,
                 order: int) -> None:
        super().__init__(resources, name, emit)
        self.core = core
        self.order = order
        core.on_not_operational = lambda: emit(('not_operational', name))

    def activate(self) -> None:
        """Join the cycle and take the resources."""
        self.start_core()
        self.resources.cycle.add_stage('controller', self.core, self.order)
        self.core.acquire()

    def start_core(self) -> None:
        """Prepare the core for activation (subclasses)."""

    def deactivate(self) -> None:
        """Leave the cycle and give every resource back."""
        self.resources.cycle.remove_stage(self.core)
        self.core.release()

    def destroy(self) -> None:
        """Forget the controller in the arbiter."""
        self.resources.arbiter.forget(self.core)

    def acquire(self) -> None:
        """Request every resource of the controller again (set_operational while active)."""
        self.core.acquire()


@dataclass(frozen=True)
class FollowJointStateSpec:
    """
    FollowJointState (R-FJS).

    :param chains: controlled chains; :param activation_delay: [s];
    :param smoothing: the filter; :param order: place among the controllers.
    """

    chains: Tuple[str, ...]
    activation_delay: float
    stay_operational: bool
    smoothing: FilterSpec
    order: int = 0


class FollowJointStateComponent(ControllerComponent):
    """FollowJointState in the cycle; targets arrive already checked by the node."""

    REMOTE = ('acquire', 'set_targets', 'src_reset')

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: FollowJointStateSpec) -> None:
        period = resources.period
        core = FollowJointStateCore(name, resources.view, resources.arbiter, spec.chains,
                                    spec.activation_delay, spec.stay_operational,
                                    lambda joints: spec.smoothing.create(joints, period))
        super().__init__(resources, name, emit, core, spec.order)

    def start_core(self) -> None:
        """Start from the current reference (the activation delay begins)."""
        self.core.start(self.resources.cycle.reference)

    def set_targets(self, local: np.ndarray, values: np.ndarray) -> None:
        """Take checked targets (local indices into the controller's joints)."""
        self.core.set_targets(local, values)

    def src_reset(self) -> Tuple[bool, Optional[np.ndarray]]:
        """
        Return (still to offer, the full reference position to offer or None).

        Nothing is left to offer once the cycle has run the controller past its activation
        delay.
        """
        core = self.core
        pose = core.src_reset.value
        done = core.started and not core.in_activation_delay
        return not done, (None if pose is None or done else pose.position)


@dataclass(frozen=True)
class TorqueSwitchSpec:
    """TorqueMainSwitch (R-SYS-6): the chains whose servos it switches."""

    chains: Tuple[str, ...]
    order: int = 0


class TorqueSwitchComponent(ControllerComponent):
    """The torque main switch; it needs the servo bus (create the bus component first)."""

    REMOTE = ('set_torque_off', 'status')

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: TorqueSwitchSpec) -> None:
        if resources.bus is None:
            raise ComponentError('no servo bus in the process: configure the bus node first')
        core = TorqueMainSwitchCore(name, resources.view, resources.arbiter, spec.chains,
                                    resources.bus)
        super().__init__(resources, name, emit, core, spec.order)
        # losing every resource means "torque on again", not "deactivate"
        core.on_not_operational = None

    def activate(self) -> None:
        """Join the cycle; resources are requested only when the torque goes off."""
        self.resources.cycle.add_stage('controller', self.core, self.order)

    def set_torque_off(self, off: bool) -> Tuple[bool, str]:
        """Switch the servos off (True) or on; return (success, message)."""
        return self.core.set_torque_off(off)

    def status(self) -> List[ServoStatus]:
        """Return the status of the switch's servos."""
        return self.core.status()


@dataclass(frozen=True)
class JointTrajectorySpec:
    """
    The FollowJointTrajectory controller (R-FJT).

    :param chains: controlled chains; :param smoothing: the filter;
    :param defaults: default tolerances; :param interpolation: akima or cubic.
    """

    chains: Tuple[str, ...]
    smoothing: FilterSpec
    defaults: ToleranceDefaults
    interpolation: str = 'akima'
    order: int = 0


@dataclass
class GoalReport:
    """What the ROS side learns about a running goal when it polls."""

    outcome: Optional[Outcome]
    feedback: Optional[Feedback]


class JointTrajectoryComponent(ControllerComponent):
    """
    The trajectory controller in the cycle; goals arrive as plans, named by the caller's ids.

    A goal stays known until the poll that reports its outcome.
    """

    REMOTE = ('start_goal', 'cancel_goal', 'poll', 'running')

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: JointTrajectorySpec) -> None:
        period = resources.period
        core = JointTrajectoryCore(name, resources.view, resources.arbiter, spec.chains,
                                   lambda joints: spec.smoothing.create(joints, period),
                                   spec.defaults, spec.interpolation)
        super().__init__(resources, name, emit, core, spec.order)
        self._goals: Dict[Hashable, ExecutingGoal] = {}

    def activate(self) -> None:
        """Hold the current pose; resources are requested per goal."""
        self.core.reset(self.resources.cycle.reference)
        self.resources.cycle.add_stage('controller', self.core, self.order)
        self.core.operational = True

    def deactivate(self) -> None:
        """Abort every goal, then leave the cycle."""
        for executing in list(self._goals.values()):
            executing.end('aborted', ResultCode.INVALID_GOAL,
                          f'controller {self.name} was deactivated')
        super().deactivate()

    def start_goal(self, goal_id: Hashable, plan: GoalPlan) -> None:
        """Execute ``plan`` from the next tick on (preempting the running goal)."""
        executing = ExecutingGoal(plan)
        self._goals[goal_id] = executing
        self.core.start(executing)

    def cancel_goal(self, goal_id: Hashable) -> None:
        """Stop a goal: the motion decelerates and holds (no-op for unknown ids)."""
        executing = self._goals.get(goal_id)
        if executing is not None:
            self.core.cancel(executing)

    def poll(self, goal_ids: Sequence[Hashable]
             ) -> Tuple[Dict[Hashable, GoalReport], Optional[Dict[str, float]]]:
        """
        Return each goal's outcome (None while running) and newest feedback, and the support.

        A goal whose outcome is returned is forgotten.
        """
        reports = {}
        for goal_id in goal_ids:
            executing = self._goals.get(goal_id)
            if executing is None:
                reports[goal_id] = GoalReport(
                    Outcome('aborted', int(ResultCode.INVALID_GOAL),
                            f'controller {self.name} does not know this goal'), None)
                continue
            outcome = executing.outcome
            if outcome is not None:
                del self._goals[goal_id]
            reports[goal_id] = GoalReport(outcome, executing.feedback.value)
        return reports, self.core.support.value

    def running(self) -> bool:
        """Return whether a goal is being executed (or about to be)."""
        return self.core.running_goal() is not None


#: component kind (the node type of the process config) -> (class, spec class)
COMPONENTS: Dict[str, Tuple[type, type]] = {
    'virtual_robot': (VirtualRobotComponent, VirtualRobotSpec),
    'follow_joint_state': (FollowJointStateComponent, FollowJointStateSpec),
    'torque_main_switch': (TorqueSwitchComponent, TorqueSwitchSpec),
    'joint_trajectory': (JointTrajectoryComponent, JointTrajectorySpec),
}


class Poses(NamedTuple):
    """The newest full poses of the cycle: the reference and the measured state."""

    reference: JointVector
    measured: JointVector
