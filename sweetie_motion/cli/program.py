"""
`sweetie-motion program`: check, plot, run motion programs and write them from paths (R-CART-3).

Offline (check, plot) a program starts from the chain's home pose (the chain property
``home``, else zeros) unless ``--start`` gives the joints [deg]; on the robot it starts where
the robot is. Errors name the program line.
"""

import argparse
import math
from pathlib import Path
import sys
from typing import List, Optional

import numpy as np

from sweetie_motion.command_line import (add_connection_options, CommandParser, fail,
                                         non_negative_number, positive_number, positive_seconds)
from sweetie_motion.errors import SweetieMotionError


def _model(robot: str):
    from sweetie_motion.model import load_robot_description
    model = load_robot_description(robot)
    model.configure()
    return model


def _offline(args: argparse.Namespace):
    """Plan the program of ``args.file`` offline; return (model, runner, backend)."""
    from sweetie_motion.cartesian.limiter import WorkspaceLimiter
    from sweetie_motion.cartesian.plan_checks import PathChecks
    from sweetie_motion.cartesian.program import load_program
    from sweetie_motion.cartesian.runner import (chain_home, OfflineBackend, program_steps,
                                                 ProgramRunner)
    model = _model(args.robot)
    home = chain_home(model, args.chain)
    start = np.radians(args.start) if args.start else home
    workspace = WorkspaceLimiter.from_config(model.get_chain_property(args.chain, 'workspace'))
    backend = OfflineBackend(model, args.chain, start, args.period, args.speed / 1e3,
                             args.acceleration / 1e3, args.lateral / 1e3 or None, workspace,
                             PathChecks(model, args.chain, workspace))
    runner = ProgramRunner(program_steps(load_program(args.file)), backend,
                           model.list_joints(args.chain), home)
    return model, runner, backend


def check(args: argparse.Namespace) -> int:
    """Plan every step offline and print what each does."""
    _, runner, backend = _offline(args)
    for report in runner.run():
        print(f'{report.step.describe()}: {report.message}')
    record = backend.record
    print(f'{args.file}: {len(runner.steps)} steps plan within the limits and the checks, '
          f'{record.times[-1]:.2f} s, {len(record.times)} samples')
    return 0


def plot(args: argparse.Namespace) -> int:
    """Plan offline and write the four figures."""
    from sweetie_motion.plots import plot_cartesian_motion
    model, runner, backend = _offline(args)
    runner.run()
    record = backend.record
    waypoints = np.array(record.waypoints) if record.waypoints else None
    written = plot_cartesian_motion(args.out, record.times, np.array(record.positions),
                                    np.array(record.tool), model.list_joints(args.chain),
                                    waypoints, model, title=Path(args.file).stem)
    for path in written:
        print(path)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the program on the motion process."""
    from sweetie_motion.cartesian.program import load_program
    from sweetie_motion.cartesian.runner import chain_home, program_steps, ProgramRunner
    from sweetie_motion.ros.program_client import ArmClient
    model = _model(args.robot)
    steps = program_steps(load_program(args.file))
    from sweetie_motion.command_line import notice
    with ArmClient(args.namespace, model, args.chain, timeout=args.timeout,
                   notice=notice) as robot:
        runner = ProgramRunner(steps, robot, model.list_joints(args.chain),
                               chain_home(model, args.chain))

        def before(step) -> bool:
            if not args.step:
                print(f'{step.describe()} ...', flush=True)
                return True
            # step mode: every MOVL of a path is a step, the tool stops at its waypoint
            answer = input(f'{runner.describe_next(single_move=True)} -- Enter to run, q to '
                           'stop: ')
            return answer.strip().lower() != 'q'

        def after(report) -> None:
            print(f'  done in {report.seconds:.2f} s: {report.message}', flush=True)
        try:
            runner.run(before, after, single_move=args.step)
        except KeyboardInterrupt as error:
            from sweetie_motion.ros.motion_client import interrupt_message
            runner.stop()
            print(f'sweetie-motion program run: {interrupt_message(error)}', file=sys.stderr)
            return 130
    if not runner.finished:
        print(f'stopped before {runner.describe_next(single_move=args.step)}')
        return 1
    print(f'{args.file}: {len(steps)} steps done')
    return 0


def from_path(args: argparse.Namespace) -> int:
    """Write the program of a path file (waypoints in mm and ZYZ degrees)."""
    from sweetie_motion.cartesian.frames import Pose
    from sweetie_motion.cartesian.path import CartesianPath
    from sweetie_motion.cartesian.program import format_program, from_path as program_of, Home
    from sweetie_motion.paths import load_yaml
    document = load_yaml(args.path, SweetieMotionError)
    if not isinstance(document, dict) or not isinstance(document.get('waypoints'), list):
        raise SweetieMotionError(f'{args.path}: expected a mapping with "waypoints": a list of '
                                 '[x, y, z, a, b, c] (mm, ZYZ degrees)')
    poses = []
    for number, entry in enumerate(document['waypoints'], start=1):
        if not (isinstance(entry, list) and len(entry) == 6 and
                all(isinstance(v, (int, float)) and math.isfinite(v) for v in entry)):
            raise SweetieMotionError(f'{args.path}: waypoint {number} must be six numbers '
                                     f'[x, y, z, a, b, c], got {entry!r}')
        x, y, z, a, b, c = entry
        poses.append(Pose.from_mm_zyz(x, y, z, a, b, c, degrees=True))
    radius = float(args.radius if args.radius is not None else document.get('radius', 0.0))
    feed = float(args.feed if args.feed is not None else document.get('feed', 0.0))
    path = CartesianPath(poses, radius * 1e-3)
    commands = program_of(path, feed * 1e-3 if feed > 0 else None)
    if args.home:
        commands.insert(0, Home())
    text = format_program(commands, header=[
        f'generated by sweetie-motion program from-path {args.path}',
        f'{len(poses)} waypoints, blend radius {radius:g} mm, feed {feed:g} mm/s; '
        f'{len(path.segments)} path segments, {path.length * 1e3:.1f} mm'])
    if args.out == '-':
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding='utf-8')
        print(f'{args.out}: {len(commands)} commands')
    return 0


DESCRIPTION = """\
Motion programs: plan them offline, plot them, run them on a motion process, write them from
Cartesian paths.

  check FILE                 parse and plan every step offline (no robot needed)
  plot FILE [--out DIR]      the four figures of the planned motion
  run FILE [--step]          run it on the motion process (Ctrl+C stops the robot)
  from-path PATH.yaml [--out FILE]   a program from waypoints

FILE is a path, or a shipped program by name (programs/paper_path.txt). Offline the program
starts from the chain's home pose unless --start gives the joints [deg]; on the robot it
starts where the robot is. Errors name the program's file, line and column."""


def build_parser() -> CommandParser:
    """Return the parser of `sweetie-motion program`."""
    parser = CommandParser(prog='sweetie-motion program', description=DESCRIPTION)
    commands = parser.add_subparsers(dest='action', metavar='ACTION', parser_class=CommandParser)
    commands.required = True

    def with_robot(command: argparse.ArgumentParser) -> None:
        command.add_argument('file', metavar='FILE', help='the program')
        command.add_argument('--robot', default='winding_arm.yaml',
                             help='robot description (a name in config/ or a path)')
        command.add_argument('--chain', default='arm', help='the chain the program moves')

    def offline(name: str, help_text: str, function) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text, description=help_text + '.')
        with_robot(command)
        command.add_argument('--start', type=float, nargs='+', metavar='DEG',
                             help='joint positions to start from [deg] (default: home)')
        command.add_argument('--period', type=positive_seconds, default=0.01,
                             help='sample period [s]')
        command.add_argument('--speed', type=positive_number, default=250.0,
                             help='path speed of moves without F [mm/s]')
        command.add_argument('--acceleration', type=positive_number, default=100.0,
                             help='path acceleration [mm/s^2]')
        command.add_argument('--lateral', type=non_negative_number, default=500.0,
                             help='centripetal acceleration limit on blends [mm/s^2]; 0: none')
        command.set_defaults(function=function)
        return command
    offline('check', 'Parse and plan every step offline', check)
    plotter = offline('plot', 'Plan offline and write the figures (PNG)', plot)
    plotter.add_argument('--out', default='artifacts/program',
                         help='folder of the figures')
    runner = commands.add_parser('run', help='run the program on the motion process',
                                 description='Run the program on the motion process, step by '
                                 'step; Ctrl+C stops the robot.')
    with_robot(runner)
    add_connection_options(runner, 'winding_arm')
    runner.add_argument('--step', action='store_true',
                        help='ask before each step (each MOVL of a path: the tool stops at '
                        'its waypoint)')
    runner.set_defaults(function=run)
    generator = commands.add_parser('from-path', help='write the program of a path file',
                                    description='Write the program of a path file.')
    generator.add_argument('path', help='YAML: waypoints [[x, y, z, a, b, c], ...] (mm, deg), '
                           'radius (mm), feed (mm/s)')
    generator.add_argument('--radius', type=non_negative_number,
                           help='blend radius [mm] (default: the file)')
    generator.add_argument('--feed', type=non_negative_number,
                           help='path speed [mm/s] (default: the file)')
    generator.add_argument('--out', default='-', help='the program file (- : print it)')
    generator.add_argument('--home', action='store_true',
                           help="start the program with HOME (the chain's home pose)")
    generator.set_defaults(function=from_path)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run a `sweetie-motion program` action."""
    from sweetie_motion.paths import config_path
    args = build_parser().parse_args(argv)
    for key in ('file', 'path'):  # a shipped program by name, as config files are
        typed = getattr(args, key, None)
        if typed and not Path(typed).exists() and config_path(typed).exists():
            setattr(args, key, str(config_path(typed)))
    try:
        return args.function(args)
    except SweetieMotionError as error:
        where = f'{args.file}: ' if getattr(args, 'file', '') and \
            args.file not in str(error) else ''
        return fail(f'sweetie-motion program {args.action}', f'{where}{error}')
