"""
``sweetie-motion servo``: the HerkuleX servos of a running motion process (R-SERVO-1..3).

    sweetie-motion servo status                      every servo: ok, lost, its fault
    sweetie-motion servo scan                        which IDs answer on each line
    sweetie-motion servo torque on|off [JOINT ...]   switch servos (default: all)
    sweetie-motion servo clear [JOINT ...]           clear error flags (then torque on)
    sweetie-motion servo reboot [JOINT ...]          reboot and set up again
    sweetie-motion servo read REGISTER [JOINT ...]   a RAM register of each servo
    sweetie-motion servo write REGISTER VALUE JOINT ...
    sweetie-motion servo identify [--servos J ...] [--trajectory NAME] [--png FILE]

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
from typing import List, Optional, Sequence

from sweetie_motion.errors import SweetieMotionError

#: the stored motion that excites the servos for identification
EXCITATION = 'servo_excitation'


class ServoClient:
    """Calls the servo_bus and servo_ident services of the motion process in ``namespace``."""

    def __init__(self, namespace: str, timeout: float = 15.0) -> None:
        from sweetie_motion.nodes.background import BackgroundNode
        from sweetie_motion_msgs.srv import ServoCommand, ServoIdentification
        self.ns = '/' + namespace.strip('/')
        self.timeout = timeout
        self._background = BackgroundNode('sweetie_motion_servo_cli')
        self.node = self._background.node
        self._command_type, self._ident_type = ServoCommand, ServoIdentification
        self._command = self.node.create_client(ServoCommand, f'{self.ns}/servo_bus/command')
        self._ident = self.node.create_client(ServoIdentification,
                                              f'{self.ns}/servo_ident/identification')

    def close(self) -> None:
        """Release the node and its context."""
        self._background.close()

    def _call(self, client, request, what: str, timeout: float):
        from sweetie_motion.cli import notice
        from sweetie_motion.nodes.background import wait_future
        started = time.monotonic()
        noticed = False
        while not client.service_is_ready():
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
    from sweetie_motion.client import ClientError, MotionClient
    with MotionClient(args.namespace.strip('/'), timeout=args.timeout) as motion:
        started = client.identification('start', args.servos)
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
            from sweetie_motion.client import interrupt_message
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
    if aborted.is_set():
        raise SweetieMotionError('the identification was ended or aborted elsewhere: the '
                                 'excitation motion was stopped; no model changed')
    if outcome is None or not outcome.succeeded:
        client.identification('abort')
        raise SweetieMotionError(f'the excitation motion failed ({outcome.error_code}): '
                                 f'{outcome.error_string}' if outcome is not None else
                                 'the excitation motion failed')
    ended = client.identification('end')
    print(ended.message)
    for name, samples, error, done in zip(ended.servos, ended.samples, ended.error,
                                          ended.identified):
        print(f'  {name}: {samples} samples, prediction error {error:.4f} rad'
              f'{" (identified)" if done else ""}')
    if args.png and history:
        from sweetie_motion.plots import plot_identification
        print(f'convergence plot: {plot_identification(args.png, history, args.threshold)}')
    return 0 if ended.success else 1


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of `sweetie-motion servo`."""
    parser = argparse.ArgumentParser(prog='sweetie-motion servo',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--namespace', default='sweetie_bot',
                        help='robot namespace of the motion process')
    parser.add_argument('--timeout', type=float, default=15.0,
                        help='seconds to wait for the motion process')
    actions = parser.add_subparsers(dest='action', metavar='ACTION')
    actions.required = True
    actions.add_parser('status', help='every servo: ok, lost, its fault')
    actions.add_parser('scan', help='which IDs answer on each line')
    torque = actions.add_parser('torque', help='switch servos on or off')
    torque.add_argument('state', choices=('on', 'off'))
    torque.add_argument('joints', nargs='*')
    for name, text in (('clear', 'clear the error flags'), ('reboot', 'reboot and set up')):
        command = actions.add_parser(name, help=text)
        command.add_argument('joints', nargs='*')
    read = actions.add_parser('read', help='read a RAM register of servos')
    read.add_argument('register')
    read.add_argument('joints', nargs='*')
    write = actions.add_parser('write', help='write a RAM register of servos')
    write.add_argument('register')
    write.add_argument('value', type=int)
    write.add_argument('joints', nargs='+')
    ident = actions.add_parser('identify', help='identify the servo models (seed 003)')
    ident.add_argument('--servos', nargs='*', default=[],
                       help='the servos (joints) to identify (default: all with a model)')
    ident.add_argument('--trajectory', default=EXCITATION,
                       help='the stored excitation motion to play')
    ident.add_argument('--png', default='artifacts/servo_identification.png',
                       help='the convergence plot')
    ident.add_argument('--threshold', type=float, default=0.01,
                       help='the threshold drawn in the plot [rad] (the node decides)')
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run a `sweetie-motion servo` action."""
    args = build_parser().parse_args(argv)
    try:
        client = ServoClient(args.namespace, args.timeout)
    except SweetieMotionError as error:
        print(f'sweetie-motion servo: {error}', file=sys.stderr)
        return 2
    try:
        if args.action == 'identify':
            return identify(client, args)
        mapping = {'status': ('status', []), 'scan': ('scan', []),
                   'torque': (f'torque_{getattr(args, "state", "")}',
                              getattr(args, 'joints', [])),
                   'clear': ('clear_errors', getattr(args, 'joints', [])),
                   'reboot': ('reboot', getattr(args, 'joints', [])),
                   'read': ('read', getattr(args, 'joints', [])),
                   'write': ('write', getattr(args, 'joints', []))}
        command, joints = mapping[args.action]
        if command in ('scan', 'reboot'):
            print(f'{command}: asking the servos (up to a minute on slow lines) ...',
                  flush=True)
        response = client.command(command, joints, getattr(args, 'register', ''),
                                  getattr(args, 'value', 0))
        return _print_response(response, command)
    except SweetieMotionError as error:
        print(f'sweetie-motion servo {args.action}: {error}', file=sys.stderr)
        return 2
    finally:
        client.close()
