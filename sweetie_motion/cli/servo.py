"""
`sweetie-motion servo`: the HerkuleX servos of a running motion process (R-SERVO-1..3).

The motion process runs the bus (``bringup --bus serial`` or ``--bus sim-serial``); these
commands go through its ``servo_bus`` node (``~/command``) and ``servo_ident`` node
(``~/identification``). ``identify`` starts the identification, plays a stored excitation
motion, ends it (the models under the threshold are published and saved) and writes a
convergence plot: each alpha over time and the prediction error against the threshold.
"""

import argparse
import os
import sys
import threading
import time
from typing import List, Optional, Sequence, TYPE_CHECKING

from sweetie_motion.command_line import (add_connection_options, CommandParser, fail,
                                         positive_number)
from sweetie_motion.errors import SweetieMotionError

if TYPE_CHECKING:   # for the types only: the client loads rclpy where it is used
    from sweetie_motion.ros.motion_client import MotionResult

#: the stored motion that excites the servos for identification
EXCITATION = 'servo_excitation'


class ServoClient:
    """Calls the servo_bus and servo_ident services of the motion process in ``namespace``."""

    def __init__(self, namespace: str, timeout: float = 15.0) -> None:
        from sweetie_motion.ros.background import BackgroundNode
        from sweetie_motion_msgs.srv import ServoCommand, ServoIdentification
        self.ns = '/' + namespace.strip('/')
        self.timeout = timeout
        self._background = BackgroundNode('sweetie_motion_servo_cli', lean=True)
        self.node = self._background.node
        self._command_type, self._ident_type = ServoCommand, ServoIdentification
        self._command = self.node.create_client(ServoCommand, f'{self.ns}/servo_bus/command')
        self._ident = self.node.create_client(ServoIdentification,
                                              f'{self.ns}/servo_ident/identification')
        from controller_manager_msgs.srv import ListHardwareComponents
        self._hardware_type = ListHardwareComponents
        #: the motion process's hardware: one without a HerkuleX bus is told so at once
        self._hardware = self.node.create_client(
            ListHardwareComponents, f'{self.ns}/controller_manager/list_hardware_components')
        self._hardware_asked: List = []

    def close(self) -> None:
        """Release the node and its context."""
        self._background.close()

    def _call(self, client, request, what: str, timeout: float):
        from sweetie_motion.command_line import notice
        from sweetie_motion.ros.background import wait_future
        started = time.monotonic()
        noticed = False
        while not client.service_is_ready():
            self._check_hardware()
            if time.monotonic() - started > self.timeout:
                domain = os.environ.get('ROS_DOMAIN_ID', '0') or '0'
                raise SweetieMotionError(
                    f'no {client.srv_name} in ROS_DOMAIN_ID {domain} within {self.timeout:g} '
                    's: is `sweetie-motion bringup --bus serial` (or sim-serial) running with '
                    'that namespace (--namespace) and domain?')
            if not noticed and time.monotonic() - started > 0.5:
                noticed = True
                notice(f'waiting for {client.srv_name} (up to {self.timeout:g} s, '
                       '--timeout) ...')
            time.sleep(0.02)
        return wait_future(client.call_async(request), timeout, what)

    def _check_hardware(self) -> None:
        """
        Ask the controller manager for the hardware once it is there; refuse one without a bus.

        :raises SweetieMotionError: the motion process runs without a HerkuleX servo bus.
        """
        from sweetie_motion.controllers.catalog import HARDWARE_TYPES
        asked = self._hardware_asked
        if not asked and self._hardware.service_is_ready():
            asked.append(self._hardware.call_async(self._hardware_type.Request()))
        if not asked or not asked[0].done() or asked[0].result() is None:
            return
        components = list(asked[0].result().component)
        if components and not any(c.plugin_name == HARDWARE_TYPES['herkulex_bus']
                                  for c in components):
            hardware = ', '.join(f'{c.name} ({c.plugin_name.split("/")[-1]})'
                                 for c in components)
            raise SweetieMotionError(
                f'the motion process in {self.ns} has no HerkuleX servo bus (its hardware: '
                f'{hardware}); start it with `sweetie-motion bringup --bus serial` (or '
                '--bus sim-serial)')

    def command(self, command: str, joints: Sequence[str] = (), register: str = '',
                value: int = 0, timeout: float = 70.0):
        """Run a servo command; return the response (success, message, joints, values)."""
        request = self._command_type.Request(command=command, joints=list(joints),
                                             register_name=register, value=int(value))
        return self._call(self._command, request, command, timeout)

    def identification(self, command: str, servos: Sequence[str] = ()):
        """Call start / status / end / abort of the identification; return the response."""
        request = self._ident_type.Request(command=command, servos=list(servos))
        return self._call(self._ident, request, f'identification {command}', self.timeout)


def _print_response(response, command: str) -> int:
    print(response.message)
    values = list(response.values) or [None] * len(response.joints)
    for joint, value in zip(response.joints, values):
        if command == 'status':
            print(f'  {joint}: torque {"on" if value else "off"}')
        else:
            print(f'  {joint}: {value}' if value is not None else f'  {joint}')
    return 0 if response.success else 1


def identify(client: ServoClient, args: argparse.Namespace) -> int:
    """
    Start, play the excitation, end; write the convergence plot.

    Ctrl+C stops the excitation (the motion is cancelled: the robot decelerates and holds)
    and aborts the identification; so does an abort by anyone else while it plays.
    """
    from sweetie_motion.ros.motion_client import ClientError, MotionClient
    if args.abort:
        # the way out when the client that started one is gone (a closed terminal, a kill)
        aborted = client.identification('abort')
        print(aborted.message)
        return 0 if aborted.success else 1
    with MotionClient(args.namespace.strip('/'), timeout=args.timeout) as motion:
        started = client.identification('start', args.joints)
        if not started.success:
            raise SweetieMotionError(started.message)
        print(started.message, flush=True)
        history = []  # (t, servos, alpha rows, error)
        stop = threading.Event()
        aborted = threading.Event()

        def poll() -> None:
            t0 = time.monotonic()
            while not stop.wait(0.2):
                try:
                    status = client.identification('status')
                except SweetieMotionError:
                    continue
                if not status.servos:       # ended or aborted by someone else
                    aborted.set()
                    motion.stop()
                    return
                history.append((time.monotonic() - t0, list(status.servos),
                                list(status.alpha), list(status.error)))
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        shown = [0.0]

        def show(t: float, duration: float, progress: float) -> None:
            if time.monotonic() - shown[0] >= 1.0 or progress >= 1.0:  # once a second
                shown[0] = time.monotonic()
                print(f'{args.trajectory}: {t:6.2f} / {duration:.2f} s ({progress:.0%})',
                      flush=True)
        try:
            outcome = motion.play(args.trajectory, feedback=show)
        except KeyboardInterrupt as error:
            from sweetie_motion.ros.motion_client import interrupt_message
            stop.set()
            client.identification('abort')
            print(f'sweetie-motion servo identify: {interrupt_message(error)} (the excitation '
                  'motion); the identification was aborted, no model changed', file=sys.stderr)
            return 130
        except ClientError:
            stop.set()
            if not aborted.is_set():
                client.identification('abort')
                raise
            outcome = None
        finally:
            stop.set()
        poller.join(2.0)
    return _end_identification(client, args, outcome, aborted.is_set(), history)


def _end_identification(client: ServoClient, args: argparse.Namespace,
                        outcome: Optional['MotionResult'],
                        aborted: bool, history: List[tuple]) -> int:
    """
    End an identification whose excitation motion has ended: print and plot its models.

    :param outcome: the excitation's play outcome (None: it failed); :param aborted: the
        identification was ended or aborted elsewhere while it played.
    """
    if aborted:
        raise SweetieMotionError('the identification was ended or aborted elsewhere: the '
                                 'excitation motion was stopped; no model changed')
    if outcome is None or not outcome.succeeded:
        client.identification('abort')
        raise SweetieMotionError(f'the excitation motion failed ({outcome.error_code}): '
                                 f'{outcome.error_string}' if outcome is not None else
                                 'the excitation motion failed')
    ended = client.identification('end')
    print(ended.message)
    for line in servo_lines(ended):
        print(line)
    if args.png and history:
        from sweetie_motion.plots import plot_identification
        print(f'convergence plot: {plot_identification(args.png, history, args.threshold)}')
    return 0 if ended.success else 1


def servo_lines(ended) -> List[str]:
    """
    Return one line per servo of an identification's end: its samples, error and outcome.

    The outcome is the node's (the words of the summary); a servo without samples says why,
    never a prediction error it does not have.
    """
    outcomes = list(ended.outcome) or [
        'identified' if done else 'not identified' for done in ended.identified]
    lines = []
    for name, samples, prediction, outcome in zip(ended.servos, ended.samples, ended.error,
                                                  outcomes):
        if not samples:
            text = outcome if outcome.startswith('no samples') else f'no samples: {outcome}'
            lines.append(f'  {name}: {text}')
        else:
            lines.append(f'  {name}: {samples} samples, prediction error {prediction:.4f} rad: '
                         f'{outcome}')
    return lines


DESCRIPTION = """\
The HerkuleX servos of a running motion process (started with
`sweetie-motion bringup --bus serial` or `--bus sim-serial`).

  status                        every servo: ok, lost, its fault
  scan                          which IDs answer on each line
  torque on|off [JOINT ...]     switch servos (default: all)
  clear [JOINT ...]             clear error flags (then torque on)
  reboot [JOINT ...]            reboot and set up again
  read REGISTER [JOINT ...]     a RAM register of each servo
  write REGISTER VALUE JOINT ...
  identify [--joints J ...] [--trajectory NAME] [--png FILE]

Every action takes --namespace and --timeout after it; see
`sweetie-motion servo ACTION --help`."""


def build_parser() -> CommandParser:
    """Return the parser of `sweetie-motion servo`."""
    parser = CommandParser(prog='sweetie-motion servo', description=DESCRIPTION)
    actions = parser.add_subparsers(dest='action', metavar='ACTION', parser_class=CommandParser)
    actions.required = True

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        command = actions.add_parser(name, help=help_text,
                                     description=help_text[0].upper() + help_text[1:] + '.')
        add_connection_options(command, 'sweetie_bot')
        return command
    action('status', 'every servo: ok, lost, its fault')
    action('scan', 'which IDs answer on each line')
    torque = action('torque', 'switch servos on or off')
    torque.add_argument('state', choices=('on', 'off'))
    torque.add_argument('joints', nargs='*', default=[], metavar='JOINT',
                        help='the servos (default: all)')
    for name, text in (('clear', 'clear the error flags (then torque on)'),
                       ('reboot', 'reboot and set up again')):
        command = action(name, text)
        command.add_argument('joints', nargs='*', default=[], metavar='JOINT',
                             help='the servos (default: all)')
    read = action('read', 'read a RAM register of servos')
    read.add_argument('register', help='register name, e.g. torque_policy, absolute_position')
    read.add_argument('joints', nargs='*', default=[], metavar='JOINT',
                      help='the servos (default: all)')
    write = action('write', 'write a RAM register of servos')
    write.add_argument('register', help='register name, e.g. led_control')
    write.add_argument('value', type=int)
    write.add_argument('joints', nargs='+', metavar='JOINT')
    ident = action('identify', 'identify the servo models: play an excitation motion, fit '
                   'each servo model to what it measured')
    ident.add_argument('--joints', nargs='+', default=[], metavar='JOINT',
                       help='the servos to identify (default: all with a model)')
    ident.add_argument('--trajectory', default=EXCITATION,
                       help='the stored excitation motion to play')
    ident.add_argument('--png', default='artifacts/servo_identification.png',
                       help='the convergence plot')
    ident.add_argument('--abort', action='store_true',
                       help='abort the identification that runs (one whose client is gone); '
                       'no model changes')
    ident.add_argument('--threshold', type=positive_number, default=0.01,
                       help='the threshold drawn in the plot [rad] (the node decides)')
    return parser


def check_register(args: argparse.Namespace) -> None:
    """
    Refuse a register (or value) of ``read``/``write`` before anything is sent.

    :raises SweetieMotionError: unknown, not in RAM, read-only, or the value does not fit.
    """
    from sweetie_motion.servo import herkulex as hx
    register = hx.register(args.register)
    register.address(hx.Memory.RAM)
    if args.action == 'write':
        if register.read_only:
            raise SweetieMotionError(f'{register.name} is read-only')
        register.encode(args.value)


def check_joints(client: ServoClient, joints: Sequence[str]) -> None:
    """
    Refuse joints that no servo of the bus drives, naming the closest.

    :raises SweetieMotionError: an unknown joint.
    """
    from sweetie_motion.errors import did_you_mean
    if not joints:
        return
    known = list(client.command('status').joints)
    unknown = [j for j in joints if j not in known]
    if unknown:
        raise SweetieMotionError(f'not servo joints of this bus: {", ".join(unknown)}'
                                 f'{did_you_mean(unknown[0], known)} (servo status lists them)')


def main(argv: Optional[List[str]] = None) -> int:
    """Run a `sweetie-motion servo` action."""
    args = build_parser().parse_args(argv)
    what = f'sweetie-motion servo {args.action}'
    try:
        if args.action in ('read', 'write'):
            check_register(args)
        client = ServoClient(args.namespace, args.timeout)
    except SweetieMotionError as error:
        return fail(what, str(error))
    try:
        if args.action == 'identify':
            return identify(client, args)
        commands = {'status': 'status', 'scan': 'scan', 'clear': 'clear_errors',
                    'reboot': 'reboot', 'read': 'read', 'write': 'write',
                    'torque': f'torque_{getattr(args, "state", "")}'}
        command = commands[args.action]
        joints = getattr(args, 'joints', [])
        check_joints(client, joints)
        if command in ('scan', 'reboot'):
            print(f'{command}: asking the servos (up to a minute on slow lines) ...',
                  flush=True)
        response = client.command(command, joints, getattr(args, 'register', ''),
                                  getattr(args, 'value', 0))
        return _print_response(response, command)
    except SweetieMotionError as error:
        return fail(what, str(error))
    finally:
        client.close()
