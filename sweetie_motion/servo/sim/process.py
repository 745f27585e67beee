"""
Running a bus simulator: the program ``sweetie-motion servo-sim``, a child process, its control.

``sweetie-motion servo-sim --servos CONFIG [--bus NAME] [--fault SPEC ...]`` prints the pty's
path and serves it until SIGTERM / SIGINT (:func:`main`); the faults are those of
:mod:`sweetie_motion.servo.sim.faults`. With ``--priority N`` it asks for SCHED_FIFO priority N
where the system allows it (real servos answer on time whatever the PC does; a simulator
starved by a busy machine would not): :class:`SimulatorProcess`, which tests, benchmarks and
``--bus sim-serial`` use, asks for :data:`SIM_PRIORITY`. :class:`SimulatorControl` is a client
of the control channel (:mod:`sweetie_motion.servo.sim.server`).
"""

import dataclasses
import json
import math
import os
import select
import signal
import socket
import sys
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, TYPE_CHECKING, Union

from sweetie_motion.command_line import CommandParser, fail
from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.paths import config_path
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.sim.config import load_sim_config_file, number, SimulatorConfigError
from sweetie_motion.servo.sim.faults import parse_faults
from sweetie_motion.servo.sim.line import BusSimulator
from sweetie_motion.servo.sim.server import PtyServer

if TYPE_CHECKING:
    import subprocess

#: the SCHED_FIFO priority of the simulators that tests and ``--bus sim-serial`` start: above
#: the motion process's cycle (50), as hardware would be
SIM_PRIORITY = 60


class SimulatorControl:
    """
    Client of a simulator's control channel.

    :param path: the UNIX socket path given to ``--control``.
    :param timeout: socket timeout [s].
    """

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout
        self._socket: Optional[socket.socket] = None
        self._buffer = b''
        self._lock = threading.Lock()

    def request(self, **request: object) -> Dict[str, Any]:
        """
        Send one request; return the answer.

        :raises SimulatorConfigError: the simulator answered with an error.
        :raises OSError: the channel is not there.
        """
        with self._lock:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._socket.settimeout(self.timeout)
                self._socket.connect(self.path)
            self._socket.sendall(json.dumps(request).encode() + b'\n')
            while b'\n' not in self._buffer:
                chunk = self._socket.recv(65536)
                if not chunk:
                    self.close()
                    raise ConnectionError('simulator closed the control channel')
                self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b'\n')
        answer = json.loads(line)
        if 'error' in answer:
            raise SimulatorConfigError(f'control {request.get("op")}', answer['error'])
        return answer

    def state(self) -> Dict[str, Any]:
        """Return servos, counters and time."""
        return self.request(op='state')

    def move(self, positions: Mapping[int, float]) -> List[int]:
        """Move torque-off servos by hand (servo angle [rad] by ID); return the moved IDs."""
        return self.request(op='move', positions={str(k): v for k, v in positions.items()})[
            'moved']

    def external_torque(self, torques: Mapping[int, float]) -> None:
        """Set external torques [N*m] by servo ID."""
        self.request(op='external_torque', torques={str(k): v for k, v in torques.items()})

    def fault(self, spec: str) -> None:
        """Inject a fault now (the --fault grammar, times from now)."""
        self.request(op='fault', spec=spec)

    def reset_statistics(self) -> None:
        """Start the sample gaps and the lateness again (to measure from now on)."""
        self.request(op='reset_statistics')

    def close_port(self, reopen: float = math.inf) -> None:
        """Close the port now; reopen after ``reopen`` s."""
        self.request(op='close', reopen=reopen)

    def close(self) -> None:
        """Close the channel."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class SimulatorProcess:
    """
    Runs ``servo-sim`` in a child process (what tests, benchmarks and ``sim-serial`` use).

    The port is a symlink in ``directory`` that stays valid when the simulated port reopens;
    the control channel is a socket next to it.

    :param config: the ``servo_sim`` mapping, or a path to a configuration file.
    :param directory: where the configuration, the link and the socket go.
    :param name: a name for those files.
    :param args: further ``servo-sim`` arguments (e.g. ``['--fault', 'drop=0.01']``).
    :param priority: its SCHED_FIFO priority where allowed (0: normal scheduling).
    """

    def __init__(self, config: Union[str, Mapping[str, object]], directory: str, name: str = 'sim',
                 args: Sequence[str] = (), priority: int = SIM_PRIORITY) -> None:
        self.directory = directory
        self.name = name
        self.args = list(args)
        self.priority = int(priority)
        self.link = os.path.join(directory, f'{name}.tty')
        self.control_path = os.path.join(directory, f'{name}.sock')
        if isinstance(config, str):
            self.config_path = config
        else:
            import yaml
            self.config_path = os.path.join(directory, f'{name}.yaml')
            with open(self.config_path, 'w', encoding='utf-8') as stream:
                yaml.safe_dump(config, stream)
        self.process: Optional['subprocess.Popen[str]'] = None
        self.port = ''
        self.control: Optional[SimulatorControl] = None

    def start(self, timeout: float = 20.0) -> str:
        """
        Start the child; return the port path once it is served.

        :raises SimulatorConfigError: the child failed to start.
        """
        import subprocess
        command = [sys.executable, '-m', 'sweetie_motion.servo.sim', '--servos',
                   self.config_path, '--link', self.link, '--control', self.control_path,
                   '--priority', str(self.priority)]
        self.process = subprocess.Popen(command + self.args, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        stdout = self.process.stdout
        assert stdout is not None  # stdout=PIPE
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = stdout.readline().strip() if ready else ''
        if not line:
            if self.process.poll() is None:
                self.process.terminate()
            try:
                error = self.process.communicate(timeout=5)[1] or ''
            except subprocess.TimeoutExpired:
                self.process.kill()
                error = ''
            self.stop()
            raise SimulatorConfigError('servo-sim', f'did not start: {error.strip()}')
        self.port = line
        self.control = SimulatorControl(self.control_path)
        return line

    def stop(self, timeout: float = 5.0) -> Optional[int]:
        """Stop the child (SIGTERM, then SIGKILL); return its exit status."""
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except Exception:   # noqa: B902 - subprocess.TimeoutExpired: kill it
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode

    def __enter__(self) -> 'SimulatorProcess':
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- the program --------------------------------------------------------------------------------


def build_parser() -> CommandParser:
    """Return the argument parser of ``servo-sim``."""
    parser = CommandParser(
        prog='sweetie-motion servo-sim',
        description='HerkuleX servos behind a pseudo-terminal. Prints the port path, then '
                    'serves until SIGTERM/SIGINT.')
    parser.add_argument('--servos', required=True, metavar='CONFIG',
                        help='servo configuration (YAML, a name in config/ or a path: servo_sim, '
                             'or the servo_bus of the driver with --bus)')
    parser.add_argument('--bus', help='the bus of a driver configuration to simulate')
    parser.add_argument('--baud', type=int, help='line speed [Bd] (default: the configuration)')
    parser.add_argument('--latency', type=float, help='reply latency [s] (default 0.0003)')
    parser.add_argument('--reboot-time', type=float, help='deaf time after REBOOT [s]')
    parser.add_argument('--fault', action='append', default=[], metavar='SPEC',
                        help='fault to inject (repeatable): corrupt=RATE, drop=RATE, '
                             'late=RATE[:DELAY], error=ID:FLAG[@T][+D], random-errors=RATE[@T], '
                             'jam=ID[@T][+D], silent=ID[@T][+D], close=T[+REOPEN]')
    parser.add_argument('--seed', type=int, default=0, help='seed of the fault draws')
    parser.add_argument('--chunk', type=float, default=0.0005,
                        help='reply bytes are written at most this often [s]')
    parser.add_argument('--link', help='symlink to the pty, kept valid when the port reopens')
    parser.add_argument('--control', help='UNIX socket path of the control channel')
    parser.add_argument('--priority', type=int, default=0,
                        help='SCHED_FIFO priority where the system allows it (0: normal '
                             'scheduling)')
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """
    Run ``sweetie-motion servo-sim``.

    :param argv: the arguments (default: sys.argv[1:]).
    :return: exit status (0 after SIGTERM/SIGINT, 2 for bad arguments or configuration).
    """
    args = build_parser().parse_args(argv)
    try:
        config = load_sim_config_file(str(config_path(args.servos)), args.bus)
        faults = parse_faults(args.fault)
        changes = {}
        if args.baud is not None:
            hx.baud_code(args.baud)
            changes['baud'] = args.baud
        if args.latency is not None:
            changes['latency'] = number('--latency', args.latency, 0.0, 1.0)
        if args.reboot_time is not None:
            changes['reboot_time'] = number('--reboot-time', args.reboot_time, 0.0, 10.0)
        if changes:
            config = dataclasses.replace(config, **changes)
        sim = BusSimulator(config, faults, args.seed, start=time.monotonic())
        server = PtyServer(sim, args.link, args.control,
                           chunk=number('--chunk', args.chunk, 0.0, 0.1))
        path = server.start()
    except (SweetieMotionError, OSError) as error:
        return fail('sweetie-motion servo-sim', str(error))
    if args.priority:
        scheduling = set_realtime_priority(args.priority)
        if not scheduling.startswith('SCHED_FIFO'):
            print(f'sweetie-motion servo-sim: {scheduling}', file=sys.stderr)
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, lambda *_: server.stop())
    print(path, flush=True)
    try:
        server.serve()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0
