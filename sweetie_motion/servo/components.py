"""
The servo side of the cycle as components: a servo bus (virtual or HerkuleX), the servo ident.

Each is configured by its node (see :mod:`sweetie_motion.core.component`). Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import (
    Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TYPE_CHECKING,
)

import numpy as np

from sweetie_motion.core.component import (
    Component, ComponentCommand, ComponentError, CycleResources,
)
from sweetie_motion.core.cycle import StageRole
from sweetie_motion.core.events import SendEvent, ServoCommandDone
from sweetie_motion.core.servo_bus import ServoBus, ServoStatus
from sweetie_motion.errors import did_you_mean
from sweetie_motion.servo.bus import BusInput, BusOutput
from sweetie_motion.servo.virtual import VirtualServoBus

if TYPE_CHECKING:  # annotations only: these are imported when a component needs them
    from sweetie_motion.servo.driver import SerialServoBus
    from sweetie_motion.servo.ident import IdentConfig, IdentProgress, IdentResult
    from sweetie_motion.servo.servo_model import ServoModelParams


# --- servo buses ---------------------------------------------------------------------------------


class BusComponent(Component):
    """
    A component that installs a servo bus.

    It reads the bus before the controllers and commands it after the aggregator (and the
    safety stage).
    """

    bus: ServoBus

    def install(self, bus: ServoBus) -> None:
        """Make ``bus`` the bus of the cycle (call once, from the constructor)."""
        view = self.shared.view
        indices = view.get_joint_indices(bus.joints)
        self.bus = bus
        self._input = BusInput(bus, indices, view.get_joint_indices(view.list_virtual_joints()))
        self._output = BusOutput(bus, indices)
        self.shared.bus = bus

    def activate(self) -> None:
        """Read the servos before the controllers, command them after the aggregator."""
        self.shared.cycle.add_stage(StageRole.INPUT, self._input)
        self.shared.cycle.add_stage(StageRole.OUTPUT, self._output)

    def deactivate(self) -> None:
        """Leave the cycle (servos hold their last command)."""
        self.shared.cycle.remove_stage(self._input)
        self.shared.cycle.remove_stage(self._output)

    def destroy(self) -> None:
        """Uninstall the bus."""
        if self.shared.bus is self.bus:
            self.shared.bus = None


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

    SPEC = VirtualRobotSpec
    bus: VirtualServoBus

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: VirtualRobotSpec) -> 'VirtualRobotComponent':
        """Make the simulated bus from its spec and install it in the cycle of ``shared``."""
        return cls(shared, name, send_event, spec)

    def __init__(self, shared: CycleResources, name: str, send_event: SendEvent,
                 spec: VirtualRobotSpec) -> None:
        self.attach(shared, name, send_event)
        view = shared.view
        joints = shared.servo_joints()
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

    SPEC = SerialBusSpec
    bus: 'SerialServoBus'

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: SerialBusSpec) -> 'SerialBusComponent':
        """Connect the servos of the spec and install their bus in the cycle of ``shared``."""
        return cls(shared, name, send_event, spec)

    def __init__(self, shared: CycleResources, name: str, send_event: SendEvent,
                 spec: SerialBusSpec) -> None:
        self.attach(shared, name, send_event)
        from sweetie_motion.servo.driver import load_bus_config, SerialServoBus
        section = dict(spec.config.get('servo_bus', spec.config))
        section['period'] = shared.period  # the goals go out once a cycle
        config = load_bus_config(section)
        bus = SerialServoBus(config, shared.servo_joints())
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
        status, reset_statistics (the measurement ages, as the bench measures them). The
        outcome arrives as a ``servo_command`` event.

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
        elif command in ('reset_statistics', 'status'):
            self.send_event(self._answer_now(ident, command, targets))
            return ident
        else:
            raise ComponentError(f'unknown servo command {command!r} (known: torque_on, '
                                 'torque_off, clear_errors, reboot, read, write, scan, status, '
                                 'reset_statistics)')

        def finished(f) -> None:
            try:
                ok, message, names, values = done(f.result())
            except Exception as error:  # noqa: B902 -- every failure goes to the caller
                ok, message, names, values = False, f'{type(error).__name__}: {error}', [], []
            self.send_event(ServoCommandDone(ident, ok, message, names, values))
        future.add_done_callback(finished)
        return ident

    def _answer_now(self, ident: int, command: str, targets: List[str]) -> ServoCommandDone:
        """Return the answer of a command that needs no servo's reply: its statistics, status."""
        bus = self.bus
        if command == 'reset_statistics':
            bus.reset_ages()
            return ServoCommandDone(ident, True, 'measurement ages forgotten: measured from now '
                                    'on', [], [])
        statuses = [s for s in bus.status() if s.joint in targets]
        bad = [s for s in statuses if not s.ok]
        summary = f'{len(statuses)} servo(s): {len(statuses) - len(bad)} ok'
        if bad:
            summary += f', {len(bad)} not: ' + '; '.join(f'{s.joint} {s.message}' for s in bad)
        return ServoCommandDone(ident, True, summary, [s.joint for s in statuses],
                                [int(s.torque) for s in statuses])

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
    :param bus_delays: each joint's control delay from the bus where it knows it (a serial
        bus: its line's schedule); else ``config.control_delay`` for every joint.
    """

    config: 'IdentConfig'
    models: Tuple['ServoModelParams', ...] = ()
    bus_delays: bool = True


#: how often a running identification takes the lines' control delays again [ticks]
DELAY_REFRESH_TICKS = 50


class ServoIdentComponent(Component):
    """
    Feeds :class:`ServoIdentification` every tick: the reference sent, the measurements made.

    An observer stage: it reads the tick's reference (what went to the servos) and the bus's
    newest measurements with their own times (a serial bus measures its servos one after
    another), and never changes anything.
    """

    SPEC = ServoIdentSpec

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: ServoIdentSpec) -> 'ServoIdentComponent':
        """Make the identification of every joint's servo from its spec."""
        return cls(shared, name, send_event, spec)

    def __init__(self, shared: CycleResources, name: str, send_event: SendEvent,
                 spec: ServoIdentSpec) -> None:
        self.attach(shared, name, send_event)
        from sweetie_motion.servo.ident import ServoIdentification
        self.ident = ServoIdentification(shared.model.list_all_joints(), spec.models,
                                         spec.config)
        #: take each joint's control delay from the bus where it knows it
        self.use_bus_delays = spec.bus_delays
        self._stamps: Optional[np.ndarray] = None
        self._joints: List[str] = []
        self._indices = np.zeros(0, dtype=np.intp)
        self._ticks_since_delays = 0

    def activate(self) -> None:
        """Observe the cycle."""
        self.shared.cycle.add_stage(StageRole.OBSERVER, self)

    def deactivate(self) -> None:
        """Stop observing."""
        self.shared.cycle.remove_stage(self)

    def update(self, tick) -> None:
        """Push this tick's reference and the measurements that are new since the last one."""
        reference = tick.reference
        self.ident.push_reference(reference.position, reference.velocity, reference.effort,
                                  tick.now)
        if self.ident.identifying:
            # the identification's own work in this process lengthens the lines' S_JOG lag
            # (1-1.5 ms on a pony's lines): the delays are followed while it runs
            self._ticks_since_delays += 1
            if self._ticks_since_delays >= DELAY_REFRESH_TICKS:
                self._take_bus_delays()
        bus = self.shared.bus
        if bus is None:
            return
        if list(bus.joints) != self._joints:
            self._joints = list(bus.joints)
            self._indices = self.shared.view.get_joint_indices(self._joints)
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
        """
        Start identifying ``servos`` (empty: every servo with a model); return them.

        Each servo's control delay is its line's, as the bus knows it now (a serial bus: from
        each line's schedule); the configured one where the bus does not know.
        """
        names = list(servos) or [m.name for m in self.models()]
        self.ident.start(names)
        self._take_bus_delays()
        return names

    def _take_bus_delays(self) -> None:
        """Give the identification each line's control delay as the bus measures it now."""
        self._ticks_since_delays = 0
        if self.use_bus_delays and self.shared.bus is not None:
            period = self.shared.period
            known = self.shared.bus.control_delays()
            self.ident.set_control_delays({j: d / period for j, (_, d) in known.items()
                                           if j in self.ident.joints})

    def delays(self, servos: Sequence[str]) -> List[Tuple[str, float]]:
        """Return (line, delay [s]) of ``servos`` ('' : the configured delay, no line known)."""
        known = self.shared.bus.control_delays() if self.shared.bus is not None and \
            self.use_bus_delays else {}
        period = self.shared.period
        return [(known[s][0] if s in known else '', self.ident.control_delay(s) * period)
                for s in servos]

    def end(self) -> 'IdentResult':
        """End: return the IdentResult (the models under the threshold, the others' error)."""
        return self.ident.end()

    def abort(self) -> List[str]:
        """Abort; return the servos that were being identified."""
        return self.ident.abort()

    def progress(self) -> Dict[str, 'IdentProgress']:
        """Return servo -> IdentProgress."""
        return self.ident.progress()

    def torque_error(self) -> np.ndarray:
        """Return the model's prediction error as torque, every joint [N*m]."""
        return self.ident.torque_error.copy()

    def models(self) -> list:
        """Return the servo models known now: identified ones replace the configured ones."""
        return [m for m in (self.ident.model(j) for j in self.ident.joints) if m is not None]


# --- what the ROS side asks of these components (see ComponentCommand) ---------------------------


@dataclass(frozen=True)
class MoveByHand(ComponentCommand[VirtualRobotComponent, List[str]]):
    """Move free servos as a hand would (:meth:`VirtualRobotComponent.move_by_hand`)."""

    KIND = VirtualRobotComponent

    positions: Mapping[str, float]

    def run(self, component: VirtualRobotComponent) -> List[str]:
        """Call :meth:`VirtualRobotComponent.move_by_hand`; return the joints that moved."""
        return component.move_by_hand(self.positions)


@dataclass(frozen=True)
class SetBlocked(ComponentCommand[VirtualRobotComponent, None]):
    """Jam exactly these joints' servos (:meth:`VirtualRobotComponent.set_blocked`)."""

    KIND = VirtualRobotComponent

    joints: Sequence[str]

    def run(self, component: VirtualRobotComponent) -> None:
        """Call :meth:`VirtualRobotComponent.set_blocked`."""
        component.set_blocked(self.joints)


@dataclass(frozen=True)
class StartServoOperation(ComponentCommand[SerialBusComponent, int]):
    """Start an operation on some servos (:meth:`SerialBusComponent.command`); its id."""

    KIND = SerialBusComponent

    command: str
    joints: Sequence[str] = ()
    register: str = ''
    value: int = 0

    def run(self, component: SerialBusComponent) -> int:
        """Call :meth:`SerialBusComponent.command`."""
        return component.command(self.command, self.joints, self.register, self.value)


@dataclass(frozen=True)
class ReadBusReport(ComponentCommand[SerialBusComponent, Tuple[list, list, list]]):
    """Read the bus's statistics and active faults (:meth:`SerialBusComponent.report`)."""

    KIND = SerialBusComponent

    def run(self, component: SerialBusComponent) -> Tuple[list, list, list]:
        """Call :meth:`SerialBusComponent.report`."""
        return component.report()


@dataclass(frozen=True)
class StartIdentification(ComponentCommand[ServoIdentComponent, List[str]]):
    """Start identifying servos (:meth:`ServoIdentComponent.start`); return them."""

    KIND = ServoIdentComponent

    servos: Sequence[str]

    def run(self, component: ServoIdentComponent) -> List[str]:
        """Call :meth:`ServoIdentComponent.start`."""
        return component.start(self.servos)


@dataclass(frozen=True)
class ReadControlDelays(ComponentCommand[ServoIdentComponent, List[Tuple[str, float]]]):
    """Read the servos' lines and control delays (:meth:`ServoIdentComponent.delays`)."""

    KIND = ServoIdentComponent

    servos: Sequence[str]

    def run(self, component: ServoIdentComponent) -> List[Tuple[str, float]]:
        """Call :meth:`ServoIdentComponent.delays`."""
        return component.delays(self.servos)


@dataclass(frozen=True)
class ReadIdentProgress(ComponentCommand[ServoIdentComponent, Dict[str, 'IdentProgress']]):
    """Read each servo's identification progress (:meth:`ServoIdentComponent.progress`)."""

    KIND = ServoIdentComponent

    def run(self, component: ServoIdentComponent) -> Dict[str, 'IdentProgress']:
        """Call :meth:`ServoIdentComponent.progress`."""
        return component.progress()


@dataclass(frozen=True)
class EndIdentification(ComponentCommand[ServoIdentComponent, 'IdentResult']):
    """End the identification (:meth:`ServoIdentComponent.end`): its result."""

    KIND = ServoIdentComponent

    def run(self, component: ServoIdentComponent) -> 'IdentResult':
        """Call :meth:`ServoIdentComponent.end`."""
        return component.end()


@dataclass(frozen=True)
class AbortIdentification(ComponentCommand[ServoIdentComponent, List[str]]):
    """Abort the identification (:meth:`ServoIdentComponent.abort`); the servos it had."""

    KIND = ServoIdentComponent

    def run(self, component: ServoIdentComponent) -> List[str]:
        """Call :meth:`ServoIdentComponent.abort`."""
        return component.abort()


@dataclass(frozen=True)
class ReadTorqueError(ComponentCommand[ServoIdentComponent, np.ndarray]):
    """Read the models' prediction error as torque (:meth:`ServoIdentComponent.torque_error`)."""

    KIND = ServoIdentComponent

    def run(self, component: ServoIdentComponent) -> np.ndarray:
        """Call :meth:`ServoIdentComponent.torque_error`."""
        return component.torque_error()


@dataclass(frozen=True)
class ReadServoModels(ComponentCommand[ServoIdentComponent, list]):
    """Read the servo models known now (:meth:`ServoIdentComponent.models`)."""

    KIND = ServoIdentComponent

    def run(self, component: ServoIdentComponent) -> list:
        """Call :meth:`ServoIdentComponent.models`."""
        return component.models()
