"""
`sweetie-motion console`: the operator console of a motion process (R-CART-5).

    sweetie-motion console [--config winding_arm_motion.yaml | --namespace NS --robot ROBOT.yaml
                            --chain CHAIN] [--with-robot] [--program FILE]
                           [--screenshot FILE --quit-after S] [--ros-args ...]

With ``--config`` (the default: the winding-line arm's bringup) the console takes the
namespace, the robot, the Cartesian motion node (its chain and its speeds, for the offline
plan) and the gripper from the motion process's configuration; ``--namespace``, ``--robot`` and
``--chain`` override them or stand for a configuration. ``--with-robot`` also starts that
bringup on the virtual robot (everything on this machine), so the console works on its own.
``--screenshot`` with ``--quit-after`` saves a PNG of the window and exits.
"""

from dataclasses import dataclass, replace
import math
import sys
import time
from typing import Any, Dict, List, NamedTuple, Optional, TYPE_CHECKING

from sweetie_motion.command_line import (
    CommandParser, namespace, positive_number, positive_seconds,
)
from sweetie_motion.console.presenter import JOG_TURN_LIMIT_DEG
from sweetie_motion.console.reconfiguration import RECONFIGURATION_LIMIT_DEG
from sweetie_motion.errors import SweetieMotionError, UnknownChainError
from sweetie_motion.gui.app import own_robot, run_window, STOP_ANNOUNCEMENT, WindowParts
from sweetie_motion.gui.backups import BackupFolder, UnsavedBackups

if TYPE_CHECKING:
    from sweetie_motion.console.bridge import ConsoleBridge
    from sweetie_motion.console.planning import OfflinePlanner
    from sweetie_motion.console.presenter import ConsolePresenter
    from sweetie_motion.console.window import ConsoleWindow

#: the configuration the console opens without options
DEFAULT_CONFIG = 'winding_arm_motion.yaml'
#: the default folder of the console's backups
DEFAULT_WORKSPACE = '~/.local/share/sweetie_motion/console'


@dataclass(frozen=True)
class ConsoleSettings:
    """
    What the console connects to.

    :param namespace: the motion process's robot namespace; :param robot: its robot description.
    :param chain: the chain programs and jogs move ('' : the Cartesian node's, else the first).
    :param cartesian: the Cartesian motion node; :param gripper: the gripper node;
    :param controller: the trajectory controller.
    :param period: the cycle period [s]; :param max_velocity: [m/s],
        :param max_acceleration: [m/s^2], :param lateral_acceleration: [m/s^2] (0: none) --
        the Cartesian node's, for the offline plan.
    :param config: the motion process configuration file ('' : none).
    :param workspace_dir: the folder of the program's backups (``backups/``);
        :param backup_period: [s] between two backups while unsaved; :param backups_kept.
    :param jog_turn_limit: a jog step that turns a joint further than this asks first [deg].
    :param reconfiguration_limit: a program's reconfiguration that turns a joint further than
        this asks before Run and Step [deg].
    """

    namespace: str = 'winding_arm'
    robot: str = 'winding_arm.yaml'
    chain: str = ''
    cartesian: str = 'cartesian'
    gripper: str = 'gripper'
    controller: str = 'joint_trajectory'
    period: float = 0.01
    max_velocity: float = 0.25
    max_acceleration: float = 0.1
    lateral_acceleration: float = 0.5
    config: str = ''
    workspace_dir: str = DEFAULT_WORKSPACE
    backup_period: float = 30.0
    backups_kept: int = 20
    jog_turn_limit: float = JOG_TURN_LIMIT_DEG
    reconfiguration_limit: float = RECONFIGURATION_LIMIT_DEG


def console_settings(config: Optional[str] = None, namespace: Optional[str] = None,
                     robot: Optional[str] = None, chain: Optional[str] = None
                     ) -> ConsoleSettings:
    """
    Return what the console connects to, from a motion process configuration and overrides.

    :raises SweetieMotionError: an unreadable or invalid configuration.
    """
    from sweetie_motion.process_config import load_process_config
    if config is None and robot is None and namespace is None:
        config = DEFAULT_CONFIG
    # what the configuration says, by ConsoleSettings' field names (values of mixed types)
    values: Dict[str, Any] = {}
    if config is not None:
        process = load_process_config(config)
        values.update(namespace=process.namespace, robot=str(process.robot),
                      period=process.period, config=str(process.path))
        for component in process.components:
            parameters = component.parameters
            if component.type_name == 'cartesian_motion':
                values.update(cartesian=component.name, chain=parameters.get('chain', ''),
                              controller=parameters.get('controller', 'joint_trajectory'))
                for key in ('max_velocity', 'max_acceleration', 'lateral_acceleration'):
                    if key in parameters:
                        values[key] = float(parameters[key])
            elif component.type_name == 'gripper':
                values['gripper'] = component.name
    for key, value in (('namespace', namespace), ('robot', robot), ('chain', chain)):
        if value is not None:
            values[key] = value.strip('/') if key == 'namespace' else value
    return ConsoleSettings(**values)


class Console(NamedTuple):
    """The parts of a running console."""

    window: 'ConsoleWindow'
    presenter: 'ConsolePresenter'
    bridge: 'ConsoleBridge'
    planner: 'OfflinePlanner'

    def close(self) -> None:
        """Stop the bridge's worker and the planner (the node's owner destroys the node)."""
        self.bridge.close()
        self.planner.close()


def build_console(node, settings: ConsoleSettings, model=None, streams=None) -> Console:
    """
    Build the console on ``node``: the offline planner, the bridge, the presenter, the window.

    :param node: the console's rclpy node; the caller spins and destroys it.
    :param streams: a node spun apart for the 100 Hz joint topics (BackgroundNode.streams);
        None: ``node``.
    :param model: the configured RobotModel; default: the settings' robot.
    :raises SweetieMotionError: an unknown robot or chain.
    """
    from sweetie_motion.console.bridge import ConsoleBridge
    from sweetie_motion.console.planning import OfflinePlanner
    from sweetie_motion.cartesian.runner import chain_home
    from sweetie_motion.console.presenter import ConsolePresenter
    from sweetie_motion.console.window import ConsoleWindow
    from sweetie_motion.model import load_robot_description
    if model is None:
        model = load_robot_description(settings.robot)
        model.configure()
    chain = settings.chain or model.list_chains()[0]
    if chain not in model.list_chains():
        raise UnknownChainError(chain, model.list_chains())
    planner = OfflinePlanner(model, chain, chain_home(model, chain), settings.period,
                             settings.max_velocity, settings.max_acceleration,
                             settings.lateral_acceleration or None)
    bridge = ConsoleBridge(node, model, chain, settings.namespace, settings.cartesian,
                           settings.gripper, settings.controller, planner=planner,
                           streams=streams)
    backups = UnsavedBackups(BackupFolder(settings.workspace_dir, '.txt', settings.backups_kept),
                             settings.backup_period, time.monotonic, 'an untitled program')
    presenter = ConsolePresenter(bridge.submit, model, chain, backups=backups,
                                 joint_travel=planner.joint_travel,
                                 jog_turn_limit=math.radians(settings.jog_turn_limit),
                                 move_check=planner.check_joint_move,
                                 reconfiguration_limit=math.radians(
                                     settings.reconfiguration_limit))
    window = ConsoleWindow(presenter, bridge.poll, f'/{settings.namespace} ({chain})')
    return Console(window, presenter, bridge, planner)


def build_parser() -> CommandParser:
    """Return the parser of `sweetie-motion console`."""
    parser = CommandParser(
        prog='sweetie-motion console',
        description='The operator console of a motion process: joint sliders, Cartesian jog, '
                    "motion programs. With --config (default: the winding-line arm's bringup) "
                    'it takes the namespace, the robot, the chain and the gripper from the '
                    "motion process's configuration; --namespace, --robot and --chain override "
                    'them. --with-robot also starts that bringup on the virtual robot. '
                    '--screenshot with --quit-after saves a PNG of the window and exits. ROS '
                    'arguments go after --ros-args.')
    parser.add_argument('--config', help='the motion process configuration (a name in config/ '
                        f'or a path; default {DEFAULT_CONFIG} when no --robot/--namespace)')
    parser.add_argument('--namespace', type=namespace,
                        help='robot namespace of the motion process')
    parser.add_argument('--robot', help='robot description (a name in config/ or a path)')
    parser.add_argument('--chain', help='the chain programs and jogs move')
    parser.add_argument('--with-robot', action='store_true',
                        help='also start the bringup of --config on the virtual robot')
    parser.add_argument('--program', help='a motion program to open')
    parser.add_argument('--workspace', default=DEFAULT_WORKSPACE, metavar='DIR',
                        help='the folder of the backups of unsaved programs (default '
                        f'{DEFAULT_WORKSPACE})')
    parser.add_argument('--jog-turn-limit', type=positive_number, default=JOG_TURN_LIMIT_DEG,
                        metavar='DEG', help='a jog step that turns a joint further than this '
                        f'asks first (default {JOG_TURN_LIMIT_DEG:g} deg)')
    parser.add_argument('--reconfiguration-limit', type=positive_number,
                        default=RECONFIGURATION_LIMIT_DEG, metavar='DEG',
                        help="a program's reconfiguration (the joints turning with the tool "
                        'still, before a path) that turns a joint further than this asks before '
                        f'Run and Step (default {RECONFIGURATION_LIMIT_DEG:g} deg)')
    parser.add_argument('--screenshot', help='save a PNG of the window (see --quit-after)')
    parser.add_argument('--quit-after', type=positive_seconds,
                        help='close after this many seconds')
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the console until its window closes."""
    from sweetie_motion.ros.background import split_ros_args
    argv, ros_args = split_ros_args(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        settings = replace(console_settings(args.config, args.namespace, args.robot,
                                            args.chain), workspace_dir=args.workspace,
                           jog_turn_limit=args.jog_turn_limit,
                           reconfiguration_limit=args.reconfiguration_limit)
    except SweetieMotionError as error:
        print(f'sweetie-motion console: {error}', file=sys.stderr)
        return 2
    if args.with_robot and not settings.config:
        print('sweetie-motion console: --with-robot starts the bringup of --config; give one',
              file=sys.stderr)
        return 2
    bringup = ['--config', settings.config, '--namespace', settings.namespace]
    with own_robot(bringup if args.with_robot else None):
        try:
            return run(settings, ros_args, args.program, args.screenshot, args.quit_after)
        except SweetieMotionError as error:
            print(f'sweetie-motion console: {error}', file=sys.stderr)
            return 2


def run(settings: ConsoleSettings, ros_args: Optional[List[str]] = None,
        program: Optional[str] = None, screenshot: Optional[str] = None,
        quit_after: Optional[float] = None) -> int:
    """Create the application, the node and the console; run the Qt loop."""
    def build(ros) -> WindowParts:
        console = build_console(ros.node, settings, streams=ros.streams)
        if program:
            console.presenter.load_file(program)
        # the bridge stops its job and says goodbye to the motion process: while it spins
        return WindowParts(console.window, close=console.close)
    return run_window('sweetie-motion console', ['sweetie_motion_console', *(ros_args or [])],
                      build, f'sweetie-motion console: {STOP_ANNOUNCEMENT}', screenshot,
                      quit_after)


if __name__ == '__main__':
    sys.exit(main())
