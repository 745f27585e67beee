"""
:class:`SerialServoBus`: HerkuleX servos on one or several serial lines, as the cycle's bus.

It implements :class:`sweetie_motion.core.servo_bus.ServoBus` (the original robot used three UARTs
of at most 10 servos: legs 1-2, legs 3-4, head). Each line has its own I/O thread
(:class:`~sweetie_motion.servo.driver.line.BusLine`), paced by the cycle:

* :meth:`SerialServoBus.send` converts the reference into goal counts and hands them to the
  line threads; it never blocks. The goal leads the reference as the original robot's
  ServoInvLead did: the playtime is the goal interval rounded up to whole 11.2 ms ticks plus
  one tick, the goal is ``position + velocity * lead`` with ``lead = playtime - goal
  interval``, and the servos' acceleration ratio is set to 0 (rectangular speed profile), so
  that the servo's desired position follows the reference one goal interval late.
* :meth:`SerialServoBus.receive` returns the newest measurement of every servo, stamped with
  the time the servo sampled it (never blocks); a servo that does not answer keeps its last.

Operations run on threads of their own and return :class:`concurrent.futures.Future` objects:
torque on/off, clear errors (fact sheet 10.1), reboot and re-init (10.2), change the control
mode (10.3), read/write a register, scan IDs.

Safety:

* :meth:`connect` opens the ports and reads every servo's position before anything else (so
  :meth:`receive` starts from the measured pose), sets the RAM init registers (ACK policy 2,
  acceleration ratio 0, ...) and, with ``torque_on_connect``, switches the torque on (the
  servo holds where it is). Servos that do not answer make it raise
  :class:`ServoNotFoundError` (``require_all_servos``) or are marked lost.
* A fault (error flags in ``error_persistence`` replies in a row) switches that servo's torque
  off; it is kept (:meth:`faults`, :meth:`active_faults`, the status) until cleared.
* A port that disappears never raises into the caller: the line reopens it every
  ``reconnect_interval``, reads every position again, re-applies the RAM registers and takes
  the torque state from the servos (never switched on by a reconnection). After a
  (re)connection or a reboot the goals move from the measured position towards the reference
  at most ``resume_speed``: no jump.
* :meth:`disconnect` stops the goals, then applies ``shutdown_torque`` to every servo that
  answers: ``brake`` (default: the servos stop driving, which ends the heating under load, but
  resist, so the robot sinks instead of collapsing), ``off`` (free) or ``keep``.
"""

import collections
import concurrent.futures
import functools
import math
import time
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.core.servo_bus import BusState, ServoBus, ServoStatus
from sweetie_motion.errors import UnknownJointError
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.config import (
    BusConfigError, BusPortError, BusStoppedError, DriverConfig, SerialBusError,
    ServoNotFoundError, ServoTimeoutError, SHUTDOWN_TORQUE,
)
from sweetie_motion.servo.driver.health import BusStatistics, ServoFault, ServoStatistics
from sweetie_motion.servo.driver.line import BusLine
from sweetie_motion.servo.driver.operations import gather, LineOperations
from sweetie_motion.servo.driver.port import SerialFactory
from sweetie_motion.servo.driver.servo_state import LineServo, MeasurementBoard
from sweetie_motion.servo.driver.wire import goal_playtime


class _Line:
    """A line with its operations and the arrays that turn joint goals into its counts."""

    def __init__(self, line: BusLine, indices: np.ndarray, period: float) -> None:
        self.line = line
        self.ops = LineOperations(line)
        servos = line.config.servos
        self.indices = indices
        self.base = np.array([s.kind.centre + s.offset / s.kind.rad_per_count for s in servos])
        self.gain = np.array([s.direction / s.kind.rad_per_count for s in servos])
        self.low = np.array([float(s.min_position) for s in servos])
        self.high = np.array([float(s.max_position) for s in servos])
        self.lead = goal_playtime(period * line.budget.goal_every)[1]

    def counts(self, position: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """Return the goal counts of the line's servos (NaN stays NaN: no goal)."""
        idx = self.indices
        counts = self.base + self.gain * (position[idx] + velocity[idx] * self.lead)
        return np.clip(counts, self.low, self.high, out=counts)


class SerialServoBus(ServoBus):
    """
    HerkuleX servos on serial lines, one I/O thread per line (see the module docstring).

    :param config: the driver configuration.
    :param joints: the bus joints in the order of the arrays of send/receive (default: the
        configuration's order); each must have exactly one servo.
    :param clock: the time source of the threads.
    :param serial_factory: ``f(port, baud)`` opening a port (default: pyserial).
    :raises BusConfigError: joints without servo or servos without joint.
    """

    def __init__(self, config: DriverConfig, joints: Optional[Sequence[str]] = None,
                 clock: Callable[[], float] = time.monotonic,
                 serial_factory: Optional[SerialFactory] = None) -> None:
        configured = config.joints
        joints = list(configured if joints is None else joints)
        missing = [j for j in joints if j not in configured]
        if missing:
            raise BusConfigError('servo_bus.buses', f'no servo drives joint(s) '
                                                    f'{", ".join(missing)}')
        extra = [j for j in configured if j not in joints]
        if extra:
            raise BusConfigError('servo_bus.buses', f'servos of joint(s) {", ".join(extra)} '
                                                    'are not joints of this bus')
        super().__init__(joints)
        self.config = config
        self.clock = clock
        self.serial_factory = serial_factory
        self._index = {j: i for i, j in enumerate(self.joints)}
        self._board = MeasurementBoard(len(self.joints))
        self._lines: List[_Line] = []
        self._servo_of: Dict[str, Tuple[_Line, LineServo]] = {}
        self._connected = False

    # --- lifecycle -----------------------------------------------------------------------------

    def _make_lines(self) -> None:
        self._lines, self._servo_of = [], {}
        for bus in self.config.buses:
            indices = np.array([self._index[s.joint] for s in bus.servos], dtype=np.intp)
            line = _Line(BusLine(bus, self.config, indices, self._board, self.clock,
                                 self.serial_factory), indices, self.config.period)
            self._lines.append(line)
            for servo in line.line.servos:
                self._servo_of[servo.joint] = (line, servo)

    def connect(self) -> None:
        """
        Open the ports, read every servo's position, init the servos, start the cycle.

        :raises BusPortError: a port cannot be opened.
        :raises ServoNotFoundError: servos did not answer (with ``require_all_servos``).
        """
        if self._connected:
            return
        self._make_lines()
        opened = []
        try:
            for line in self._lines:
                line.line.port.connect()
                opened.append(line)
        except BusPortError:
            for line in opened:
                line.line.port.close()
            raise
        for line in self._lines:
            line.line.start()
        missing, reasons = self._init_servos(self.config.torque_on_connect)
        if missing and self.config.require_all_servos:
            self._shutdown(self.config.shutdown_torque)
            raise ServoNotFoundError(missing, reasons)
        for line in self._lines:
            line.line.ready = True
        self._connected = True

    def _init_servos(self, torque: bool) -> Tuple[List[Tuple[str, str, int]], List[str]]:
        """
        Init every servo; return (joint, bus, ID) and a reason of each that was not set up.

        A servo that did not answer is asked again until ``connect_timeout`` has passed (one
        try is ``retries`` requests of a reply ``timeout`` each: a fraction of a second that a
        noisy line or a stall of the machine can fill); one that answered wrongly is not.
        """
        started = self.clock()
        deadline = started + self.config.connect_timeout
        # (line, servo, when this try began, the try, the request an earlier try got no reply to)
        futures: Deque[Tuple[_Line, LineServo, float, concurrent.futures.Future, str]] = \
            collections.deque()
        for line in self._lines:
            for servo in line.line.servos:
                servo.torque_cmd = torque
                futures.append((line, servo, started, line.ops.start(
                    'connect', line.ops.init, servo, torque), ''))
        missing, reasons = [], []
        not_set_up = f'not set up within connect_timeout ({self.config.connect_timeout:g} s)'

        def no_reply(request: str) -> str:
            return (f'no reply to {request} (asked for {self.clock() - started:.1f} s, '
                    'connect_timeout)')
        while futures:
            line, servo, asked, future, unanswered = futures.popleft()
            try:
                future.result(timeout=max(0.0, deadline - self.clock()))
                continue
            except ServoTimeoutError as error:
                now = self.clock()
                # another try only if one as long as this one ends before the deadline
                if now + (now - asked) < deadline:
                    futures.append((line, servo, now, line.ops.start(
                        'connect', line.ops.init, servo, torque), str(error.request)))
                    continue
                reason = no_reply(error.request)
            except concurrent.futures.TimeoutError:
                # a loaded machine stretched the last try past the deadline: what the servo
                # left unanswered before is still the truth a person needs
                reason = no_reply(unanswered) if unanswered else not_set_up
            except (SerialBusError, hx.HerkulexError) as error:
                reason = str(error) or not_set_up
            missing.append((servo.joint, line.line.config.name, servo.servo_id))
            reasons.append(f'{servo.joint}: {reason}')
            line.line.event(f'{servo.describe()} not found at connect: {reason}')
            servo.health.lost = servo.stats.lost = True
        return missing, reasons

    def disconnect(self) -> None:
        """
        Stop the goals, apply ``shutdown_torque`` to the servos, stop the threads, close ports.

        Waits at most about a second for the torque writes. Servos that do not answer keep
        whatever they had.
        """
        if not self._lines:
            return
        self._shutdown(self.config.shutdown_torque)
        self._connected = False

    def _shutdown(self, policy: str) -> None:
        value = SHUTDOWN_TORQUE[policy]
        for line in self._lines:
            line.line.stop_goals()
        futures = [line.ops.start('shutdown', line.ops.shutdown, value)
                   for line in self._lines if line.line.is_alive()]
        for future in futures:
            try:
                future.result(timeout=1.0)
            except (SerialBusError, concurrent.futures.TimeoutError):
                pass
        for line in self._lines:
            line.line.stop()
        for line in self._lines:
            if line.line.is_alive():
                line.line.join(timeout=2.0)

    @property
    def connected(self) -> bool:
        """Return whether connect() succeeded and disconnect() was not called."""
        return self._connected

    # --- the cycle -----------------------------------------------------------------------------

    def send(self, now: float, position: np.ndarray, velocity: np.ndarray) -> None:
        """
        Hand the goals to the line threads (arrays in :attr:`joints` order); never blocks.

        :param now: cycle time [s].
        :param position: [rad]; :param velocity: [rad/s] (for the goal lead).
        """
        if not self._connected:
            return
        position = np.asarray(position, dtype=float)
        velocity = np.asarray(velocity, dtype=float)
        for line in self._lines:
            line.line.set_goals(line.counts(position, velocity), now)

    def receive(self, now: float) -> BusState:
        """Return the newest measurement (lost servos keep their last); never blocks."""
        board = self._board
        with board.lock:
            return BusState(board.position.copy(), board.velocity.copy(), board.effort.copy(),
                            board.stamp, board.stamps.copy())

    def control_delays(self) -> Dict[str, Tuple[str, float]]:
        """
        Return, per joint, its line and its line's control delay [s].

        Each line's from its own schedule (:meth:`BusLine.control_delay`): its goal interval,
        when its S_JOG reaches the servos after the cycle (measured: the batch before it,
        its wire time), the servo tick that takes it. Lines of other sizes and speeds differ.
        """
        out = {}
        for line in self._lines:
            delay = line.line.control_delay()
            for servo in line.line.servos:
                out[servo.joint] = (line.line.config.name, delay)
        return out

    def set_torque(self, joints: Iterable[str], on: bool) -> None:
        """
        Switch servos on (hold where they are) or off (free); never blocks.

        :raises UnknownJointError: joints that are not on this bus.
        """
        self.set_torque_async(joints, on)

    def set_torque_async(self, joints: Iterable[str], on: bool) -> concurrent.futures.Future:
        """
        Switch servos on or off; return a future of the list of new torque states.

        :meth:`torque` reports the command until the switch is done.

        :raises UnknownJointError: joints that are not on this bus.
        """
        futures = []
        for line, servo in self._targets(joints):
            servo.torque_cmd = bool(on)
            with line.line.lock:
                servo.torque_pending += 1     # held until the operation is done
            # urgent, as a fault's torque off: the robot goes limp or stiff at once, not at the
            # pace of the operations' share of a full line's wire (a tenth of a cycle's)
            future = line.ops.start('torque', functools.partial(
                line.ops.torque, servo, bool(on), urgent=True))
            future.add_done_callback(_release(line.line, servo))
            futures.append(future)
        return gather(futures)

    def torque(self) -> np.ndarray:
        """Return torque on per joint (commanded while a switch is pending, else reported)."""
        out = np.zeros(len(self.joints), dtype=bool)
        for joint, (_, servo) in self._servo_of.items():
            out[self._index[joint]] = servo.torque_reported()
        return out

    def status(self) -> List[ServoStatus]:
        """Return the status of every servo (lost, port lost, faults, packet problems)."""
        out = []
        for joint in self.joints:
            if joint not in self._servo_of:
                out.append(ServoStatus(joint, False, False, 'not connected'))
                continue
            line, servo = self._servo_of[joint]
            torque = servo.torque_reported()
            fault = servo.health.fault
            if not self._connected:
                out.append(ServoStatus(joint, False, False, 'disconnected (shutdown torque: '
                                       f'{self.config.shutdown_torque})'))
            elif not line.line.port.is_open:
                out.append(ServoStatus(joint, torque, False,
                                       f'port lost: {line.line.port.error or "closed"}'))
            elif servo.health.lost or fault is not None:
                parts = []
                if servo.health.lost:
                    ago = self.clock() - servo.stats.last_reply
                    since = f', last answer {ago:.1f} s ago' if math.isfinite(ago) else ''
                    parts.append(f'no answer (lost, ID {servo.servo_id}{since})')
                if fault is not None:
                    parts.append(fault.describe())
                out.append(ServoStatus(joint, torque, False, '; '.join(parts)))
            elif servo.status.error:
                out.append(ServoStatus(joint, torque, True, servo.status.describe()))
            else:
                out.append(ServoStatus(joint, torque, True, 'ok'))
        return out

    # --- operations ----------------------------------------------------------------------------

    def _targets(self, joints: Optional[Iterable[str]]) -> List[Tuple[_Line, LineServo]]:
        if not self._servo_of:
            raise BusStoppedError('the serial bus is not connected')
        if joints is None:
            return [self._servo_of[j] for j in self.joints]
        joints = list(joints)
        unknown = [j for j in joints if j not in self._servo_of]
        if unknown:
            raise UnknownJointError(unknown, 'serial servo bus', self._servo_of)
        return [self._servo_of[j] for j in joints]

    def _each(self, joints: Optional[Iterable[str]], name: str,
              operation: Callable[[LineOperations, LineServo], Callable[[], Any]]
              ) -> concurrent.futures.Future:
        return gather([line.ops.start(name, operation(line.ops, servo))
                       for line, servo in self._targets(joints)])

    def clear_errors(self, joints: Optional[Iterable[str]] = None) -> concurrent.futures.Future:
        """
        Clear the status of servos (all by default); future of their statuses.

        Each servo's status is read again after its next error check: it fails with
        :class:`ServoStatusError` (naming the flags) while a condition persists. The torque
        stays off where the torque policy or a fault released it: switch it on after clearing.
        """
        return self._each(joints, 'clear', lambda ops, servo: lambda: ops.clear(servo))

    def reboot(self, joints: Optional[Iterable[str]] = None,
               reinit: bool = True) -> concurrent.futures.Future:
        """
        Reboot servos (all by default), wait, re-init and restore the commanded torque.

        :return: future of their statuses.
        """
        return self._each(joints, 'reboot',
                          lambda ops, servo: lambda: ops.reboot(servo, reinit))

    def set_control_mode(self, joint: str, mode: str) -> concurrent.futures.Future:
        """
        Switch a servo to 'position' or 'speed' control; future of the mode read back.

        :raises ValueError: another mode name.
        """
        if mode not in ('position', 'speed'):
            raise ValueError(f'mode {mode!r} must be position or speed')
        line, servo = self._targets([joint])[0]
        return line.ops.start('mode', line.ops.switch_mode, servo, mode == 'speed')

    def read_register(self, joint: str, name: str,
                      memory: hx.Memory = hx.Memory.RAM) -> concurrent.futures.Future:
        """
        Read a register of a servo; future of its value.

        :raises UnknownRegisterError: unknown name (at once).
        """
        hx.register(name).address(memory)
        line, servo = self._targets([joint])[0]
        return line.ops.start('read', line.ops.read_register, servo.servo_id, name, memory)

    def write_register(self, joint: str, name: str, value: int,
                       memory: hx.Memory = hx.Memory.RAM) -> concurrent.futures.Future:
        """
        Write a register of a servo (EEP values act after a reboot); future of the value.

        A written LED value stays (the goals carry it) until the servo reboots.

        :raises UnknownRegisterError, ValueRangeError: at once.
        """
        reg = hx.register(name)
        reg.address(memory)
        reg.encode(value)
        line, servo = self._targets([joint])[0]
        return line.ops.start('write', line.ops.write_register_checked, servo, name, value,
                              memory)

    def scan(self, bus: Optional[str] = None, ids: Optional[Iterable[int]] = None,
             tries: int = 1) -> concurrent.futures.Future:
        """
        Ask IDs (default 0..253) on a bus (default: each) with STAT; future of what answered.

        The future's result has one list of (id, model) per line asked.

        :raises BusConfigError: unknown bus name.
        """
        lines = [line for line in self._lines if bus is None or line.line.config.name == bus]
        if not lines:
            raise BusConfigError('bus', f'unknown bus {bus!r}')
        id_list = list(range(hx.MAX_ID + 1) if ids is None else ids)
        return gather([line.ops.start('scan', line.ops.scan, id_list, tries) for line in lines])

    # --- reports -------------------------------------------------------------------------------

    def faults(self) -> List[ServoFault]:
        """Return every fault that switched a servo off, oldest first."""
        with self._board.lock:
            return list(self._board.faults)

    def active_faults(self) -> Dict[str, ServoFault]:
        """Return the faults not cleared yet, by joint."""
        with self._board.lock:
            return dict(self._board.active_faults)

    def statistics(self) -> Tuple[List[BusStatistics], List[ServoStatistics]]:
        """Return snapshots of the counters of every bus and every servo."""
        buses, servos = [], []
        for line in self._lines:
            buses.append(line.line.statistics())
            servos += [ServoStatistics(**vars(s.stats)) for s in line.line.servos]
        return buses, servos

    def reset_ages(self) -> None:
        """Forget the measurement ages sampled so far (to measure from now on)."""
        for line in self._lines:
            line.line.ages.reset()
            line.line.wakes.reset()

    def events(self) -> List[str]:
        """Return the recent events of every bus (port lost, servo lost, faults)."""
        return [e for line in self._lines for e in line.line.events]

    def bus_names(self) -> List[str]:
        """Return the names of the lines."""
        return [b.name for b in self.config.buses]


def _release(line: BusLine, servo: LineServo) -> Callable[[concurrent.futures.Future], None]:
    """Return the callback that ends a caller's hold on a servo's torque report."""
    def release(_: concurrent.futures.Future) -> None:
        with line.lock:
            servo.torque_pending -= 1
    return release
