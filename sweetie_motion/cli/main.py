"""
The `sweetie-motion` command line.

Subcommands that need ROS import rclpy lazily, so `sweetie-motion describe` works anywhere the
pure core does.
"""

import argparse
import sys
from typing import Callable, Dict, List, Optional, TYPE_CHECKING

from sweetie_motion.cli.check import add_check_command
from sweetie_motion.cli.simulate import add_simulate_command
from sweetie_motion.command_line import (
    add_connection_options, CommandParser, fail, left_by, notice, positive_number,
)
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.ros.motion_client import UnknownTrajectoryError

if TYPE_CHECKING:   # for the types only: a command loads what it uses when it runs
    from sweetie_motion.model.robot_model import RobotModel
    from sweetie_motion.trajectory.goal import TrajectoryGoal


def describe_robot(robot: str, png: Optional[str]) -> int:
    """Print the chains, groups and joints of a robot description; optionally draw it."""
    from sweetie_motion.model import load_robot_description
    from sweetie_motion.model.report import describe_model
    model = load_robot_description(robot)
    model.configure()
    print(describe_model(model))
    if png:
        from sweetie_motion.plots import plot_kinematic_tree
        path = plot_kinematic_tree(model, png)
        print(f'\nkinematic tree in the zero pose: {path}')
    return 0


# --- stored trajectories -------------------------------------------------------------------------


def _client(args: argparse.Namespace):
    """Return a client of the motion process, once the names the command got are valid."""
    from sweetie_motion.ros.motion_client import MotionClient
    from sweetie_motion.trajectory.codec import check_name
    for name in [getattr(args, 'name', None), *(getattr(args, 'names', None) or [])]:
        if name is not None:
            check_name(name)  # a name that cannot be stored is refused before any waiting
    return MotionClient(args.namespace, timeout=args.timeout, notice=notice)


def _read_goal_file(path: str):
    """Read a trajectory from our YAML format or the old robot's JSON format."""
    from sweetie_motion.storage.migration import load_ros1_json
    from sweetie_motion.trajectory.codec import load_goal_file
    return load_ros1_json(path) if path.endswith('.json') else load_goal_file(path)


def list_trajectories(args: argparse.Namespace) -> int:
    """Print the stored trajectories with their joints, points and durations."""
    from sweetie_motion.tables import table
    with _client(args) as client:
        rows = []
        names = client.names()
        for name, goal in zip(names, client.load_many(names)):
            rows.append([name, len(goal.points), len(goal.joints()),
                         len(goal.support_chains()), f'{goal.duration:.2f}',
                         ' '.join(goal.joints()[:6]) + (' ...' if len(goal.joints()) > 6
                                                        else '')])
    if not rows:
        print('no stored trajectories')
        return 0
    print(table(rows, ['name', 'points', 'joints', 'support flags', 'duration [s]',
                       'first joints']))
    return 0


def show_trajectory(args: argparse.Namespace) -> int:
    """Print a stored trajectory as YAML; optionally plot it."""
    from sweetie_motion.trajectory.codec import dump_goal
    with _client(args) as client:
        goal = client.load(args.name)
    print(dump_goal(goal, args.name), end='')
    if args.png:
        from sweetie_motion.plots import plot_trajectory
        print(f'plot: {plot_trajectory(goal, args.png, args.name)}', file=sys.stderr)
    return 0


def play_trajectory(args: argparse.Namespace) -> int:
    """Play a stored trajectory by name, showing progress and the result."""
    tty = sys.stdout.isatty()
    last = [-1.0]

    def progress(elapsed: float, duration: float, fraction: float) -> None:
        if tty:
            bar = '#' * int(fraction * 30)
            print(f'\r{args.name}: [{bar:<30}] {elapsed:5.2f} / {duration:.2f} s',
                  end='', flush=True)
        elif fraction - last[0] >= 0.25 or fraction >= 1.0 > last[0]:
            last[0] = fraction
            print(f'{args.name}: {elapsed:5.2f} / {duration:.2f} s ({fraction:.0%})',
                  flush=True)
    from sweetie_motion.trajectory.validation import PlayCode
    with _client(args) as client:
        outcome = client.play(args.name, args.speed, args.backward, progress)
    if outcome.error_code == PlayCode.NOT_FOUND:
        raise UnknownTrajectoryError(outcome.error_string)
    if tty:
        print()
    print(f'{"succeeded" if outcome.succeeded else "FAILED"} (error_code '
          f'{outcome.error_code}): {outcome.error_string}')
    return 0 if outcome.succeeded else 1


def save_trajectory(args: argparse.Namespace) -> int:
    """Store a trajectory from a file or the controller's last executed goal."""
    goal = None if args.last else _read_goal_file(args.file)  # a bad file before any waiting
    with _client(args) as client:
        if goal is None:
            goal = client.last_goal(args.controller)
        client.save(args.name, goal)
    print(f'saved {args.name!r}: {len(goal.points)} points, {goal.duration:.2f} s')
    return 0


def delete_trajectory(args: argparse.Namespace) -> int:
    """Delete a stored trajectory."""
    with _client(args) as client:
        client.delete(args.name)
    print(f'deleted {args.name!r}')
    return 0


def retime_trajectory(args: argparse.Namespace) -> int:
    """Fit a stored trajectory to the limits: print the gain and the segments, store it."""
    from sweetie_motion.model import load_robot_description
    from sweetie_motion.tables import table
    from sweetie_motion.trajectory.codec import check_name
    from sweetie_motion.trajectory.retime import retime_goal
    target = check_name(args.save_as or args.name)
    model = load_robot_description(args.robot)
    model.configure()
    with _client(args) as client:
        goal = client.load(args.name)
        retimed, result = retime_goal(goal, model, args.interpolation,
                                      keep_pauses=args.keep_pauses)
        print(f'{args.name}: {result.describe()}')
        rows = [[f'{s.start_row + 1}-{s.end_row + 1}', f'{s.before:.3f}', f'{s.after:.3f}',
                 s.joint or '-', s.bound_by, f'{s.usage:.0%}'] for s in result.segments]
        if rows:
            print(table(rows, ['keyframes', 'before [s]', 'after [s]', 'joint', 'bound by',
                               'limit used']))
        if args.dry_run:
            print('not stored (--dry-run)')
            return 0
        client.save(target, retimed)
    print(f'saved {target!r}: {len(retimed.points)} points, {retimed.duration:.2f} s')
    return 0


def import_trajectories(args: argparse.Namespace) -> int:
    """Import trajectory files (old JSON or our YAML), reporting per file what happened."""
    from pathlib import Path
    from sweetie_motion.model import load_robot_description
    from sweetie_motion.storage.store import TrajectoryStore
    if args.name is not None and len(args.paths) != 1:
        raise SweetieMotionError(f'--name needs exactly one file, got {len(args.paths)}')
    target = TrajectoryStore(args.dir) if args.dir else None
    if target is not None:
        try:
            target.load()
        except OSError as error:
            raise SweetieMotionError(f'--dir {args.dir}: cannot create or read it '
                                     f'({error.strerror or error})') from None
    goals = _read_goal_files(args.paths)
    model = load_robot_description(args.robot)
    model.configure()
    client = None
    if target is not None:
        existing = set(target.names())
        save = target.save
    else:
        client = _client(args)
        existing = set(client.names())
        save = client.save
    stored = 0
    try:
        for path in args.paths:
            name = args.name or Path(path).stem
            stored += _import_goal(path, name, goals[path], model, args.clamp, save,
                                   name in existing)
    finally:
        if client is not None:
            client.close()
    print(f'{stored} imported, {len(args.paths) - stored} not imported')
    return 0 if stored == len(args.paths) else 1


def _read_goal_files(paths: List[str]) -> Dict[str, 'TrajectoryGoal']:
    """
    Return the goal of each file to import.

    A file that is missing or not a trajectory is bad input: said before anything is stored
    or waited for, one line each, exit 2.
    """
    from sweetie_motion.storage.migration import MigrationError
    from sweetie_motion.trajectory.codec import TrajectoryFileError
    goals, unreadable = {}, []
    for path in paths:
        try:
            goals[path] = _read_goal_file(path)
        except (MigrationError, TrajectoryFileError) as error:
            unreadable.append(str(error))
    for line in unreadable[:-1]:
        print(f'sweetie-motion import: {line}', file=sys.stderr)
    if unreadable:
        raise SweetieMotionError(unreadable[-1])
    return goals


def _import_goal(path: str, name: str, goal: 'TrajectoryGoal', model: 'RobotModel',
                 clamp: bool, save: Callable[[str, 'TrajectoryGoal'], object],
                 replaces: bool) -> bool:
    """Clamp, check and store one imported file's goal; print what happened; return stored."""
    from sweetie_motion.storage.migration import clamp_to_limits, MigrationError
    from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
    from sweetie_motion.trajectory.validation import GoalError, PositionLimitError, validate_goal
    prefix = f'{path}:'
    try:
        check_name(name)
        if not goal.points:
            print(f'{prefix} skipped: it has no points')
            return False
        goal, moved = clamp_to_limits(goal, model) if clamp else (goal, [])
        for violation in moved:
            print(f'{prefix} clamped {violation} to '
                  f'{min(max(violation.value, violation.lower), violation.upper):.4g}')
        validate_goal(goal, model)
        save(name, goal)
    except GoalError as error:
        hint = ' (use --clamp to move them into the limits)' if isinstance(
            error, PositionLimitError) else ''
        print(f'{prefix} not imported: {error}{hint}')
        return False
    except (MigrationError, TrajectoryFileError, SweetieMotionError) as error:
        print(f'{prefix} not imported: {error}')
        return False
    print(f'{prefix} imported as {name!r}: {len(goal.points)} points, '
          f'{len(goal.joints())} joints'
          + (f' + {len(goal.support_chains())} support flags'
             if goal.support_chains() else '') + f', {goal.duration:.2f} s'
          + (f', {len(moved)} waypoint(s) clamped' if moved else '')
          + (' (replaces the stored one of that name; `sweetie-motion delete '
             f'{name}` brings back a built-in)' if replaces else ''))
    return True


def export_trajectories(args: argparse.Namespace) -> int:
    """Write stored trajectories as YAML files into a folder (or one to standard output)."""
    from pathlib import Path
    from sweetie_motion.storage.files import write_atomically
    from sweetie_motion.trajectory.codec import dump_goal
    with _client(args) as client:
        goals = [(name, client.load(name)) for name in (args.names or client.names())]
    if args.out == '-':
        for k, (name, goal) in enumerate(goals):   # one YAML document per trajectory
            print(('---\n' if k else '') + dump_goal(goal, name), end='')
        return 0
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, goal in goals:
            write_atomically(out / f'{name}.yaml', dump_goal(goal, name))
            print(f'{name} -> {out / (name + ".yaml")}')
    except OSError as error:
        print(f'sweetie-motion export: cannot write to {out}: {error}', file=sys.stderr)
        return 2
    return 0


def reset_robot(args: argparse.Namespace) -> int:
    """Stand the physics robot up again (its ``~/reset`` service); print what was done."""
    from std_srvs.srv import Trigger
    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient(args.namespace, timeout=args.timeout, notice=notice,
                      pendant=False) as client:
        service = f'{client.ns}/{args.node}/reset'
        response = client.call_service(
            Trigger, service, what=f'physics robot (service {service}: a bringup with --bus '
            'physics)')
    if not response.success:
        print(f'sweetie-motion reset: {response.message}', file=sys.stderr)
        return 1
    print(response.message)
    return 0


def build_parser() -> CommandParser:
    """Return the argument parser of `sweetie-motion`."""
    parser = CommandParser(
        prog='sweetie-motion',
        description='Stored motions played by name on a ROS 2 robot: the motion process, '
                    'trajectory storage, servos, programs and tools.\n\n'
                    'Every command has its own help: sweetie-motion COMMAND --help.')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND', parser_class=CommandParser)
    commands.required = True

    describe = commands.add_parser(
        'describe', help='print the chains, groups and joints of a robot description',
        description='Print the chains, groups and joints of a robot description (no ROS '
                    'needed).')
    describe.add_argument('--robot', default='sweetie_bot.yaml',
                          help='robot description YAML (a name in config/ or a path)')
    describe.add_argument('--png', help='also draw the kinematic tree into this PNG file')
    describe.set_defaults(run=lambda a: describe_robot(a.robot, a.png))

    passthrough(commands, 'bringup', 'run the motion process (the ROS side, the cycle process '
                'and the state publisher) until Ctrl+C', _bringup)
    # the order of the commands is the order of the help's list
    _add_playing_commands(commands)
    _add_file_commands(commands)
    add_check_command(commands, add_connection_options)
    add_simulate_command(commands, add_connection_options)

    passthrough(commands, 'editor', 'the trajectory editor (Qt)', _editor)
    passthrough(commands, 'servo', 'the HerkuleX servos of the motion process: status, scan, '
                'torque, clear, reboot, read, write, identify', _servo)
    passthrough(commands, 'servo-sim', 'HerkuleX servos simulated behind a pseudo-terminal',
                _servo_sim)
    passthrough(commands, 'program', 'motion programs: check, plot, run, from-path', _program)
    passthrough(commands, 'console', 'the operator console (Qt): sliders, jog, programs',
                _console)
    passthrough(commands, 'demo', 'the main job on the virtual robot (what `make demo` runs)',
                _demo)
    return parser


def _motion_command(commands, name: str, help_text: str, run) -> argparse.ArgumentParser:
    """Add a command that talks to the motion process (its namespace and timeout options)."""
    command = commands.add_parser(name, help=help_text,
                                  description=help_text[0].upper() + help_text[1:] + '.')
    add_connection_options(command, 'sweetie_bot')
    command.set_defaults(run=run)
    return command


def _add_playing_commands(commands) -> None:
    """Add status, list, show, play, save and delete: the motion process and its storage."""
    _motion_command(commands, 'status', 'every node of the motion process with its lifecycle '
                    'state, its chains and what it owns; the safety stage, the servos, the '
                    'cycle', _status)
    _motion_command(commands, 'list', 'list the stored trajectories', list_trajectories)
    show = _motion_command(commands, 'show', 'print a stored trajectory as YAML',
                           show_trajectory)
    show.add_argument('name')
    show.add_argument('--png', help='also plot it (positions and velocities) into this PNG')
    play = _motion_command(commands, 'play', 'play a stored trajectory by name (Ctrl+C stops '
                           'it)', play_trajectory)
    play.add_argument('name')
    play.add_argument('--speed', type=positive_number, default=1.0,
                      help='time scale (2: twice as fast)')
    play.add_argument('--backward', action='store_true', help='play it backwards')
    save = _motion_command(commands, 'save', 'store a trajectory from a file or the last '
                           'executed goal', save_trajectory)
    save.add_argument('name')
    source = save.add_mutually_exclusive_group(required=True)
    source.add_argument('--file', help='a trajectory file (our YAML or the old JSON)')
    source.add_argument('--last', action='store_true',
                        help='the last goal the trajectory controller executed (MoveIt)')
    save.add_argument('--controller', default='joint_trajectory',
                      help='the controller whose last goal --last takes')
    delete = _motion_command(commands, 'delete', 'delete a stored trajectory',
                             delete_trajectory)
    delete.add_argument('name')


def _add_file_commands(commands) -> None:
    """Add retime, import, export and reset."""
    retime = _motion_command(commands, 'retime', 'fit a stored trajectory to the velocity and '
                             'acceleration limits (the fastest keyframe times)',
                             retime_trajectory)
    retime.add_argument('name')
    retime.add_argument('--save-as', metavar='NEW',
                        help='store the result under NEW (default: back under NAME)')
    retime.add_argument('--keep-pauses', action=argparse.BooleanOptionalAction, default=True,
                        help='segments between equal keyframes keep their duration (default; '
                        '--no-keep-pauses shortens them too)')
    retime.add_argument('--interpolation', default='akima', choices=('akima', 'cubic'),
                        help="the controller's interpolation")
    retime.add_argument('--robot', default='sweetie_bot.yaml',
                        help='robot description whose limits apply')
    retime.add_argument('--dry-run', action='store_true',
                        help='print the new timing, store nothing')
    importer = _motion_command(commands, 'import', "import trajectory files (the old robot's "
                               'JSON or our YAML)', import_trajectories)
    importer.add_argument('paths', nargs='+', metavar='PATH')
    importer.add_argument('--clamp', action='store_true',
                          help='move waypoints outside the position limits into them')
    importer.add_argument('--name', help='store under this name (one file only)')
    importer.add_argument('--dir', help='write the files into this folder instead of the '
                          'running storage node')
    importer.add_argument('--robot', default='sweetie_bot.yaml',
                          help='robot description whose limits apply')
    exporter = _motion_command(commands, 'export', 'write stored trajectories as YAML files',
                               export_trajectories)
    exporter.add_argument('names', nargs='*', default=[],
                          help='trajectories (default: all)')
    exporter.add_argument('--out', default='-', help='folder, or - for standard output')
    reset = _motion_command(commands, 'reset', 'stand the physics robot (bringup --bus '
                            'physics) up again where it is', reset_robot)
    reset.add_argument('--node', default='physics_robot', help='the physics robot node')


def passthrough(commands, name: str, help_text: str, run) -> None:
    """Add a subcommand that parses its own options (and --ros-args) with its own parser."""
    command = commands.add_parser(name, add_help=False, help=f'{help_text}; see its --help')
    command.set_defaults(run=run, passthrough=True)


def _status(args: argparse.Namespace) -> int:
    from sweetie_motion.cli.status import show_status
    return show_status(args)


def _editor(args: argparse.Namespace) -> int:
    from sweetie_motion.editor.app import main as editor_main
    return editor_main(args.rest)


def _servo(args: argparse.Namespace) -> int:
    from sweetie_motion.cli.servo import main as servo_main
    return servo_main(args.rest)


def _servo_sim(args: argparse.Namespace) -> int:
    from sweetie_motion.servo.sim import main as simulator_main
    return simulator_main(args.rest)


def _program(args: argparse.Namespace) -> int:
    from sweetie_motion.cli.program import main as program_main
    return program_main(args.rest)


def _console(args: argparse.Namespace) -> int:
    from sweetie_motion.console.app import main as console_main
    return console_main(args.rest)


def _demo(args: argparse.Namespace) -> int:
    from sweetie_motion.ros.demo import main as demo_main
    return demo_main(args.rest)


def _bringup(args: argparse.Namespace) -> int:
    from sweetie_motion.nodes.bringup import main as bringup_main
    return bringup_main(args.rest)


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of `sweetie-motion`: run a subcommand, report errors without a traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if getattr(args, 'passthrough', False):
        args.rest = rest  # the subcommand parses its own options (and --ros-args)
    elif rest:
        left_by(args, parser).reject_unrecognized(rest)
    try:
        return args.run(args)
    except UnknownTrajectoryError as error:
        return fail(f'sweetie-motion {args.command}',
                    f'{error}; `sweetie-motion list` shows the stored ones')
    except SweetieMotionError as error:
        return fail(f'sweetie-motion {args.command}', str(error))
    except KeyboardInterrupt as error:
        from sweetie_motion.ros.motion_client import interrupt_message
        print(f'sweetie-motion {args.command}: {interrupt_message(error)}', file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
