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
    Any, Callable, Dict, Hashable, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple,
    TYPE_CHECKING,
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
from sweetie_motion.errors import did_you_mean, SweetieMotionError
from sweetie_motion.host.shared import CycleResources
from sweetie_motion.servo.bus import BusInput, BusOutput, ServoStatus
from sweetie_motion.servo.virtual import VirtualServoBus
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import ResultCode

if TYPE_CHECKING:  # annotations only: the identification is imported when a component needs it
    from sweetie_motion.servo.ident import IdentConfig
    from sweetie_motion.servo.servo_model import ServoModelParams

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


# --- servo buses ---------------------------------------------------------------------------------


class BusComponent(Component):
    """
    A component that installs a servo bus.

    It reads the bus before the controllers and commands it after the aggregator (and the
    safety stage).
    """

    def install(self, bus) -> None:
        """Make ``bus`` the bus of the cycle (call once, from the constructor)."""
        view = self.resources.view
        indices = view.get_joint_indices(bus.joints)
        self.bus = bus
        self._input = BusInput(bus, indices, view.get_joint_indices(view.list_virtual_joints()))
        self._output = BusOutput(bus, indices)
        self.resources.bus = bus

    def activate(self) -> None:
        """Read the servos before the controllers, command them after the aggregator."""
        self.resources.cycle.add_stage('input', self._input)
        self.resources.cycle.add_stage('output', self._output)

    def deactivate(self) -> None:
        """Leave the cycle (servos hold their last command)."""
        self.resources.cycle.remove_stage(self._input)
        self.resources.cycle.remove_stage(self._output)

    def destroy(self) -> None:
        """Uninstall the bus."""
        if self.resources.bus is self.bus:
            self.resources.bus = None


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


class VirtualRobotComponent(BusComponent):
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
        self.install(VirtualServoBus(joints, limits, lag=spec.lag, delay=spec.delay))
        self.set_blocked(spec.blocked)

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


# --- the HerkuleX serial bus ---------------------------------------------------------------------


@dataclass(frozen=True)
class SerialBusSpec:
    """
    The HerkuleX servos on serial lines (R-SERVO-1).

    :param config: the driver configuration, the ``servo_bus`` mapping of a servo config file
        (ports already replaced by the simulators' for ``sim-serial``).
    """

    config: Mapping


class SerialBusComponent(BusComponent):
    """
    Installs a :class:`SerialServoBus` as the servo bus of the cycle.

    Creating it connects: the ports open and every servo's position is read before anything
    else, so the cycle starts from the measured pose. Operations (torque, clear, reboot,
    registers, scan) run on the bus threads; :meth:`command` answers at once with an id and
    the result comes as a ``('servo_command', id, ok, message, joints, values)`` event, so the
    process's command thread never waits on a serial line.
    """

    REMOTE = ('command', 'report', 'status')

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: SerialBusSpec) -> None:
        super().__init__(resources, name, emit)
        from sweetie_motion.servo.driver import load_bus_config, SerialServoBus
        section = dict(spec.config.get('servo_bus', spec.config))
        section['period'] = resources.period  # the goals go out once a cycle
        config = load_bus_config(section)
        bus = SerialServoBus(config, resources.servo_joints())
        bus.connect()
        self.install(bus)
        self._commands = 0

    def destroy(self) -> None:
        """Uninstall the bus and disconnect (the configured shutdown torque)."""
        super().destroy()
        self.bus.disconnect()

    def command(self, command: str, joints: Sequence[str] = (), register: str = '',
                value: int = 0) -> int:
        """
        Start an operation on the servos of ``joints`` (empty: all); return its id.

        ``command``: torque_on, torque_off, brake, clear_errors, reboot, read, write, scan,
        status. The outcome arrives as a ``servo_command`` event.

        :raises ComponentError: an unknown command or joint, a register missing.
        """
        bus = self.bus
        unknown = [j for j in joints if j not in bus.joints]
        if unknown:
            raise ComponentError(f'not servo joints of this bus: {", ".join(unknown)}'
                                 f'{did_you_mean(unknown[0], bus.joints)}')
        targets = list(joints) or list(bus.joints)
        self._commands += 1
        ident = self._commands
        # the operation's result -> (success, message, joints, values) of the event
        done: Callable[[Any], Tuple[bool, str, List[str], List[int]]]
        if command in ('torque_on', 'torque_off'):
            future = bus.set_torque_async(targets, command == 'torque_on')
            done = (lambda result: (True, f'torque {"on" if command == "torque_on" else "off"}'
                                    f' for {len(targets)} servo(s)', [], []))
        elif command == 'clear_errors':
            future = bus.clear_errors(targets)
            done = (lambda result: (True, f'errors cleared on {len(targets)} servo(s)', [],
                                    []))
        elif command == 'reboot':
            future = bus.reboot(targets)
            done = (lambda result: (True, f'{len(targets)} servo(s) rebooted and set up '
                                    'again', [], []))
        elif command in ('read', 'write'):
            if not register:
                raise ComponentError(f'{command} needs a register name')
            futures = [bus.read_register(j, register) if command == 'read' else
                       bus.write_register(j, register, int(value)) for j in targets]
            from sweetie_motion.servo.driver import gather
            future = gather(futures)
            done = (lambda result: (True, f'{command} {register}', targets,
                                    [int(v) for v in result] if command == 'read'
                                    else [int(value)] * len(targets)))
        elif command == 'scan':
            future = bus.scan()
            done = (lambda result: scan_report(bus.bus_names(), result))
        elif command == 'status':
            statuses = [s for s in bus.status() if s.joint in targets]
            bad = [s for s in statuses if not s.ok]
            summary = f'{len(statuses)} servo(s): {len(statuses) - len(bad)} ok'
            if bad:
                summary += f', {len(bad)} not: ' + '; '.join(
                    f'{s.joint} {s.message}' for s in bad)
            self.emit(('servo_command', ident, True, summary, [s.joint for s in statuses],
                       [int(s.torque) for s in statuses]))
            return ident
        else:
            raise ComponentError(f'unknown servo command {command!r} (known: torque_on, '
                                 'torque_off, clear_errors, reboot, read, write, scan, status)')

        def finished(f) -> None:
            try:
                ok, message, names, values = done(f.result())
            except Exception as error:  # noqa: B902 -- every failure goes to the caller
                ok, message, names, values = False, f'{type(error).__name__}: {error}', [], []
            self.emit(('servo_command', ident, ok, message, names, values))
        future.add_done_callback(finished)
        return ident

    def report(self) -> Tuple[list, list, list]:
        """Return (bus statistics, servo statistics, active faults) for diagnostics."""
        buses, servos = self.bus.statistics()
        return buses, servos, list(self.bus.active_faults().values())

    def status(self) -> List[ServoStatus]:
        """Return every servo's status."""
        return self.bus.status()


def scan_report(lines: Sequence[str], found: Sequence[Sequence[Tuple[int, str]]]
                ) -> Tuple[bool, str, List[str], List[int]]:
    """
    Return a scan's outcome: the servos that answered, counted per line and in total.

    :param lines: the line names, in the order of ``found``.
    :param found: per line, the (ID, model) that answered.
    :return: (success, message, one entry per servo 'LINE: ID MODEL', no values).
    """
    total = sum(len(servos) for servos in found)
    counts = ', '.join(f'{line} {len(servos)}' for line, servos in zip(lines, found))
    entries = [f'{line}: ID {servo_id} {model}' for line, servos in zip(lines, found)
               for servo_id, model in servos]
    return True, f'{total} servo(s) answered ({counts})', entries, []


# --- servo identification ------------------------------------------------------------------------


@dataclass(frozen=True)
class ServoIdentSpec:
    """
    The servo identification (R-SERVO-2/3, seed 003).

    :param config: the identification parameters.
    :param models: the known servo models (ServoModelParams).
    """

    config: 'IdentConfig'
    models: Tuple['ServoModelParams', ...] = ()


class ServoIdentComponent(Component):
    """
    Feeds :class:`ServoIdentification` every tick: the reference sent, the measurements made.

    An observer stage: it reads the tick's reference (what went to the servos) and the bus's
    newest measurements with their own times (a serial bus measures its servos one after
    another), and never changes anything.
    """

    REMOTE = ('start', 'end', 'abort', 'progress', 'torque_error', 'models')
    name = 'servo_ident'

    def __init__(self, resources: CycleResources, name: str, emit: Emit,
                 spec: ServoIdentSpec) -> None:
        super().__init__(resources, name, emit)
        from sweetie_motion.servo.ident import ServoIdentification
        self.ident = ServoIdentification(resources.model.list_all_joints(), spec.models,
                                         spec.config)
        self._stamps: Optional[np.ndarray] = None
        self._joints: List[str] = []
        self._indices = np.zeros(0, dtype=np.intp)

    def activate(self) -> None:
        """Observe the cycle."""
        self.resources.cycle.add_stage('observer', self)

    def deactivate(self) -> None:
        """Stop observing."""
        self.resources.cycle.remove_stage(self)

    def update(self, tick) -> None:
        """Push this tick's reference and the measurements that are new since the last one."""
        reference = tick.reference
        self.ident.push_reference(reference.position, reference.velocity, reference.effort,
                                  tick.now)
        bus = self.resources.bus
        if bus is None:
            return
        if list(bus.joints) != self._joints:
            self._joints = list(bus.joints)
            self._indices = self.resources.view.get_joint_indices(self._joints)
            self._stamps = None
        state = bus.receive(tick.now)
        stamps = state.stamps if state.stamps is not None else \
            np.full(len(self._joints), state.stamp)
        fresh = stamps > 0 if self._stamps is None else stamps > self._stamps
        self._stamps = stamps
        if fresh.any():
            chosen = np.flatnonzero(fresh)
            self.ident.add_measurement([self._joints[i] for i in chosen],
                                       state.position[chosen], state.velocity[chosen],
                                       stamps[chosen])

    def start(self, servos: Sequence[str]) -> List[str]:
        """Start identifying ``servos`` (empty: every servo with a model); return them."""
        names = list(servos) or [m.name for m in self.models()]
        self.ident.start(names)
        return names

    def end(self):
        """End: return the IdentResult (the models under the threshold, the others' error)."""
        return self.ident.end()

    def abort(self) -> List[str]:
        """Abort; return the servos that were being identified."""
        return self.ident.abort()

    def progress(self):
        """Return servo -> IdentProgress."""
        return self.ident.progress()

    def torque_error(self) -> np.ndarray:
        """Return the model's prediction error as torque, every joint [N*m]."""
        return self.ident.torque_error.copy()

    def models(self) -> list:
        """Return the servo models known now: identified ones replace the configured ones."""
        return [m for m in (self.ident.model(j) for j in self.ident.joints) if m is not None]


# --- controllers ---------------------------------------------------------------------------------


class ControllerComponent(Component):
    """
    A controller core in the cycle: stage order, arbiter requests, not-operational events.

    :param order: place among the controllers of a tick (lower first).
    """

    REMOTE: Tuple[str, ...] = ('acquire',)

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
    core: FollowJointStateCore

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
    core: TorqueMainSwitchCore

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

    def set_torque_off(self, off: bool, chains: Optional[Sequence[str]] = None
                       ) -> Tuple[bool, str]:
        """Switch the servos (of ``chains``, default all) off (True) or on; (success, message)."""
        return self.core.set_torque_off(off, chains)

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
    core: JointTrajectoryCore

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
    'herkulex_bus': (SerialBusComponent, SerialBusSpec),
    'servo_ident': (ServoIdentComponent, ServoIdentSpec),
    'follow_joint_state': (FollowJointStateComponent, FollowJointStateSpec),
    'torque_main_switch': (TorqueSwitchComponent, TorqueSwitchSpec),
    'joint_trajectory': (JointTrajectoryComponent, JointTrajectorySpec),
}


class Poses(NamedTuple):
    """The newest full poses of the cycle: the reference and the measured state."""

    reference: JointVector
    measured: JointVector
