"""
The HerkuleX servo bus node: the serial driver in the motion process (R-SERVO-1, R-SYS-5/6).

Installs :class:`~sweetie_motion.servo.driver.SerialServoBus` (servos of ``config``, by
default ``sweetie_bot_servos.yaml``) as the servo bus of the cycle. With ``mode: sim-serial``
it first starts one bus simulator per line behind a pseudo-terminal
(:mod:`sweetie_motion.servo.sim`) and drives them through the same driver: the bytes,
timing and faults of real servos without hardware.

Its services and its diagnostics run in a callback group of their own (the design card's
"servo driver in a dedicated callback group"): a slow operation on a serial line never delays
the other nodes' callbacks.

- ``~/command`` (sweetie_motion_msgs/srv/ServoCommand): torque_on, torque_off, clear_errors,
  reboot, read, write (a register), scan, status; per servo or all;
- ``/diagnostics``: per line (replies; lost replies, damaged or missing; late and unexpected
  replies; the parser's checksum, size, command errors and garbage bytes; the age of the
  measurements p50 / p99 / max; bytes, utilisation, reconnections) and per servo (lost, last
  error flags, latency), WARN/ERROR where it matters;
- ``~/move_by_hand`` (sensor_msgs/JointState, ``sim-serial`` only): moves simulated servos
  whose torque is off, as a person posing the robot would.
"""

import tempfile
import threading
from typing import Dict, List, Optional, Tuple

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from sensor_msgs.msg import JointState
from sweetie_motion.core.events import CycleEvent, ServoCommandDone
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.lifecycle import ComponentNode, DIAGNOSTICS
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterError, ParameterSpec
from sweetie_motion.paths import config_path, load_yaml
from sweetie_motion.servo.components import (
    ReadBusReport, SerialBusComponent, SerialBusSpec, StartServoOperation,
)
from sweetie_motion.servo.sim.process import SIM_PRIORITY
from sweetie_motion_msgs.srv import ServoCommand

#: bus modes of the node
MODES = ('serial', 'sim-serial')
#: how long the driver waits for simulated servos at connect unless the config says [s]
SIM_CONNECT_TIMEOUT = 8.0
#: how long a command may take on the lines [s] (a scan asks up to 254 IDs per line)
COMMAND_TIMEOUT = {'scan': 60.0, 'reboot': 15.0}


class ServoBusNode(ComponentNode):
    """The HerkuleX serial driver (or its pty simulators) as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('config', 'sweetie_bot_servos.yaml',
                      'Servo configuration: ports, baud rates, IDs, joints, models, offsets, '
                      "directions (a path, or a name in the package's config/).",
                      read_only=True),
        ParameterSpec('mode', 'serial',
                      'serial: the configured ports; sim-serial: one bus simulator per line '
                      'behind a pseudo-terminal, driven through the same driver.',
                      choices=MODES, read_only=True),
        ParameterSpec('ports', [], 'Port overrides, "BUS=PORT" (e.g. leg12=/dev/ttyUSB0).',
                      array_of=str, read_only=True),
        ParameterSpec('sim.latency', 0.0, 'sim-serial: reply latency of the servos [s]; 0: '
                      "the simulator's (0.3 ms).", low=0.0, high=0.1, read_only=True),
        ParameterSpec('sim.faults', [], 'sim-serial: faults to inject, as servo-sim --fault '
                      '(corrupt=RATE, drop=RATE, error=ID:FLAG, jam=ID, silent=ID@T, ...).',
                      array_of=str, read_only=True),
        ParameterSpec('sim.seed', 0, 'sim-serial: seed of the fault draws.', low=0,
                      high=2**31 - 1, read_only=True),
        ParameterSpec('sim.priority', SIM_PRIORITY, 'sim-serial: SCHED_FIFO priority of the '
                      'simulators where the system allows it (0: normal scheduling). Above '
                      "the cycle's (the default) they are never late, as servos are not, but "
                      "they take the machine's cores from the motion process when they are "
                      "busy, which servos do not: below the driver's line threads (45) they "
                      'give way to it.', low=0, high=99, read_only=True),
        ParameterSpec('sim.models', '', 'sim-serial: the servo models (a servo_models file, '
                      'as servo_ident writes them) the simulated servos move by; empty: each '
                      "type's defaults. What identification then has to find.",
                      read_only=True),
        ParameterSpec('diagnostics_period', 1.0, 'Period of the bus diagnostics [s].',
                      low=0.05, high=60.0),
    )

    def __init__(self, process: MotionProcess, name: str = 'servo_bus', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._group = MutuallyExclusiveCallbackGroup()
        self._commands_group = ReentrantCallbackGroup()
        self._simulators: Dict[str, object] = {}
        self._sim_dir: Optional[tempfile.TemporaryDirectory] = None
        #: joint -> (bus, servo id, servo config) for move_by_hand
        self._servo_of: Dict[str, Tuple[str, int, object]] = {}
        self._pending: Dict[int, Tuple[threading.Event, List[ServoCommandDone]]] = {}
        self._early: Dict[int, ServoCommandDone] = {}
        self._pending_lock = threading.Lock()
        self.process.host.add_listener(self._on_event)

    # --- lifecycle -----------------------------------------------------------------------------

    def _driver_mapping(self, values: dict) -> dict:
        """Return the ``servo_bus`` mapping with the port overrides applied."""
        from sweetie_motion.servo.driver import BusConfigError, load_bus_config
        path = config_path(values['config'])
        document = load_yaml(path, ParameterError)
        section = document.get('servo_bus') if isinstance(document, dict) else None
        if not isinstance(section, dict) or not isinstance(section.get('buses'), dict):
            raise ParameterError(f'config: {path} has no servo_bus.buses')
        section = {**section, 'buses': {k: dict(v) for k, v in section['buses'].items()}}
        for entry in values['ports']:
            bus, _, port = entry.partition('=')
            if bus not in section['buses'] or not port:
                raise ParameterError(f'ports: {entry!r} must be BUS=PORT with a bus of '
                                     f'{path} ({", ".join(section["buses"])})')
            section['buses'][bus]['port'] = port
        try:
            load_bus_config(section)  # every key checked here, with the key in the message
        except BusConfigError as error:
            raise ParameterError(f'config {path}: {error}') from None
        return section

    def _start_simulators(self, section: dict, values: dict) -> None:
        """Start one simulator per line; point the line's port at it."""
        from sweetie_motion.servo.driver import load_bus_config
        from sweetie_motion.servo.sim import sim_config_from_bus, SimulatorProcess
        driver = load_bus_config(section)
        self._sim_dir = tempfile.TemporaryDirectory(prefix='sweetie_motion_sim-')
        args: List[str] = ['--seed', str(values['sim.seed'])]
        if values['sim.latency'] > 0:
            args += ['--latency', str(values['sim.latency'])]
        params = {}
        if values['sim.models']:
            from sweetie_motion.servo.model_files import load_servo_models
            path = config_path(values['sim.models'])
            if not path.exists():
                raise ParameterError(f'sim.models: {path} does not exist')
            params = {m.name: m for m in load_servo_models(str(path), values['config'])}
        for bus in driver.buses:
            ids = {servo.servo_id for servo in bus.servos}
            faults: List[str] = []
            for fault in values['sim.faults']:
                # a fault of one servo (error=ID:..., jam=ID, silent=ID) goes to its line only
                kind, _, target = fault.partition('=')
                if kind in ('error', 'jam', 'silent'):
                    head = target.split(':')[0].split('@')[0].split('+')[0]
                    if not head.isdigit() or int(head) not in ids:
                        continue
                faults += ['--fault', fault]
            simulator = SimulatorProcess(sim_config_from_bus(bus, params=params),
                                         self._sim_dir.name, bus.name, args + faults,
                                         priority=values['sim.priority'])
            self._simulators[bus.name] = simulator
            section['buses'][bus.name]['port'] = simulator.start()
            for servo in bus.servos:
                self._servo_of[servo.joint] = (bus.name, servo.servo_id, servo)
        # simulated servos are processes that share the machine with everything else: a busy
        # machine can keep them from answering for seconds while the driver's 2 s are meant
        # for servos that answer in a millisecond (a config's own value is kept)
        section.setdefault('connect_timeout', SIM_CONNECT_TIMEOUT)
        self.get_logger().info(
            f'{len(self._simulators)} bus simulator(s) on pseudo-terminals: ' + ', '.join(
                f'{name} {sim.port}' for name, sim in self._simulators.items()))

    def configure_component(self) -> None:
        values = self.read_parameters()
        section = self._driver_mapping(values)
        try:
            if values['mode'] == 'sim-serial':
                self._start_simulators(section, values)
            self.create_component(SerialBusComponent, SerialBusSpec(section), timeout=30.0)
        except BaseException:
            self._stop_simulators()
            raise
        # each command its own executor thread: a scan (seconds) or a reboot must not keep
        # a `servo status` or the diagnostics waiting behind it
        self._entities = [self.create_service(ServoCommand, '~/command', self._command,
                                              callback_group=self._commands_group)]
        self._diag_pub = self.make_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS)
        self._entities += [self._diag_pub, self.create_timer(
            values['diagnostics_period'], self._publish_diagnostics, callback_group=self._group)]
        if self._simulators:
            self._entities.append(self.make_subscription(JointState, '~/move_by_hand',
                                                         self._move_by_hand, 10))

    def cleanup_component(self) -> None:
        try:
            super().cleanup_component()  # the driver disconnects (its shutdown torque) first
        finally:
            self._stop_simulators()

    def _stop_simulators(self) -> None:
        for simulator in self._simulators.values():
            simulator.stop()
        self._simulators = {}
        self._servo_of = {}
        if self._sim_dir is not None:
            self._sim_dir.cleanup()
            self._sim_dir = None

    # --- commands ------------------------------------------------------------------------------

    def _on_event(self, event: CycleEvent) -> None:
        if not isinstance(event, ServoCommandDone):
            return
        with self._pending_lock:
            entry = self._pending.get(event.ident)
            if entry is None:  # it came before its caller got the id back: keep it
                self._early[event.ident] = event
                while len(self._early) > 100:
                    self._early.pop(next(iter(self._early)))
                return
        entry[1].append(event)
        entry[0].set()

    def run_command(self, command: str, joints: List[str], register: str = '',
                    value: int = 0) -> Tuple[bool, str, List[str], List[int]]:
        """Run a servo command and wait for its outcome: (ok, message, joints, values)."""
        done = threading.Event()
        answer: List[ServoCommandDone] = []
        try:
            ident = self.host.run(StartServoOperation(self.get_name(), command, joints,
                                                      register, value), timeout=5.0)
        except (SweetieMotionError, KeyError, ValueError) as error:
            return False, error.args[0] if isinstance(error, KeyError) else str(error), [], []
        with self._pending_lock:
            self._pending[ident] = (done, answer)
            early = self._early.pop(ident, None)  # the event and the call's reply race
        if early is not None:
            answer.append(early)
            done.set()
        try:
            if not done.wait(COMMAND_TIMEOUT.get(command, 10.0)):
                return False, f'{command}: no answer from the servos in time', [], []
        finally:
            with self._pending_lock:
                self._pending.pop(ident, None)
        outcome = answer[0]
        return (bool(outcome.ok), str(outcome.message), list(outcome.joints),
                [int(v) for v in outcome.values])

    def _command(self, request, response):
        if not self._created:
            response.success, response.message = False, f'{self.get_name()} is not configured'
            return response
        try:
            ok, message, names, values = self.run_command(
                request.command.strip(), list(request.joints), request.register_name,
                request.value)
        except Exception as error:  # noqa: B902 -- a service must always answer
            ok, message, names, values = False, f'{type(error).__name__}: {error}', [], []
        response.success, response.message = ok, message
        response.joints, response.values = names, values
        # one severity per call site: rclpy refuses a logging line that changes it
        if ok:
            self.get_logger().info(f'{request.command}: {message}')
        else:
            self.get_logger().warning(f'{request.command}: {message}')
        return response

    def _move_by_hand(self, msg: JointState) -> None:
        positions = self.hand_pose(msg)
        if positions is None:
            return
        by_bus: Dict[str, Dict[int, float]] = {}
        for joint, position in positions.items():
            if joint in self._servo_of:
                bus, servo_id, servo = self._servo_of[joint]
                by_bus.setdefault(bus, {})[servo_id] = float(servo.joint_to_servo(position))
        for bus, moves in by_bus.items():
            control = getattr(self._simulators.get(bus), 'control', None)
            if control is not None:
                try:
                    control.move(moves)
                except (OSError, SweetieMotionError) as error:
                    self.get_logger().warning(f'move_by_hand on {bus}: {error}',
                                              throttle_duration_sec=5.0)

    # --- diagnostics ---------------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        if not self._created:
            return
        try:
            buses, servos, faults = self.host.run(ReadBusReport(self.get_name()), timeout=2.0)
        except SweetieMotionError as error:
            self.get_logger().warning(f'servo diagnostics unavailable: {error}',
                                      throttle_duration_sec=10.0)
            return
        ns = self.get_namespace().strip('/')
        statuses = []
        for bus in buses:
            status = DiagnosticStatus(name=f'{ns}: servo bus {bus.name}', hardware_id=bus.port)
            if not bus.connected:
                status.level, status.message = DiagnosticStatus.ERROR, \
                    f'port {bus.port} lost: reconnecting'
            else:
                status.level = DiagnosticStatus.WARN if bus.timeouts and \
                    bus.timeouts > 0.05 * max(bus.replies, 1) else DiagnosticStatus.OK
                status.message = (f'{bus.replies} replies, {bus.timeouts} lost '
                                  f'({bus.damaged} damaged, {bus.missing} missing), '
                                  f'measurement age p99 {bus.age_p99 * 1e3:.0f} ms')
            status.values = [KeyValue(key=k, value=str(getattr(bus, k))) for k in (
                'port', 'connected', 'cycles', 'goals', 'reads', 'replies', 'timeouts',
                'damaged', 'missing', 'late_replies', 'unexpected_replies', 'checksum_errors',
                'size_errors', 'command_errors', 'garbage_bytes', 'reconnects')] + [
                KeyValue(key=key, value=f'{value * 1e3:.1f}') for key, value in (
                    ('age_p50_ms', bus.age_p50), ('age_p99_ms', bus.age_p99),
                    ('age_max_ms', bus.age_max), ('wake_p99_ms', bus.wake_p99),
                    ('wake_max_ms', bus.wake_max))] + [
                KeyValue(key='tx_utilisation', value=f'{bus.tx_utilisation:.3f}'),
                KeyValue(key='rx_utilisation', value=f'{bus.rx_utilisation:.3f}')]
            statuses.append(status)
        active = {fault.joint: fault for fault in faults}
        for servo in servos:
            status = DiagnosticStatus(name=f'{ns}: servo {servo.joint}',
                                      hardware_id=f'{servo.bus} id {servo.servo_id}')
            fault = active.get(servo.joint)
            if fault is not None:
                status.level, status.message = DiagnosticStatus.ERROR, fault.describe()
            elif servo.lost:
                status.level, status.message = DiagnosticStatus.WARN, \
                    'no answer: lost (keeps its last measurement)'
            else:
                status.level, status.message = DiagnosticStatus.OK, 'ok'
            status.values = [KeyValue(key=k, value=str(getattr(servo, k))) for k in (
                'servo_id', 'bus', 'reads', 'replies', 'timeouts', 'late_replies', 'lost')] + [
                KeyValue(key='latency_mean_ms', value=f'{servo.latency_mean * 1e3:.2f}'),
                KeyValue(key='last_error', value=f'0x{servo.last_error:02x}'),
                KeyValue(key='last_detail', value=f'0x{servo.last_detail:02x}')]
            statuses.append(status)
        array = DiagnosticArray(status=statuses)
        array.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(array)
