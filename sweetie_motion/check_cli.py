"""
`sweetie-motion check`: will these motions hurt the robot? Self-collision, balance, servo load.

The motions come from the running storage node (by name, or ``--all``) or, without ROS, from
trajectory files and folders (``--files``: our YAML or the old robot's JSON). Each is checked
as the trajectory controller plays it, with the robot description's ``checks:`` settings; a
table gives the worst figure of each check, then what each flagged motion breaks and when.
``--png DIR`` draws each flagged motion's figures over time.
"""

import argparse
from pathlib import Path
import sys
from typing import List, Tuple

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import TrajectoryGoal


def add_check_command(commands, add_connection_options) -> None:
    """Add the ``check`` command to the ``sweetie-motion`` sub-commands."""
    check = commands.add_parser(
        'check', help='check stored motions for self-collision, balance and servo load',
        description='Check stored motions for self-collision, balance on the supporting legs '
                    "and servo load, with the robot description's checks: settings; print a "
                    'table (worst figures) and what each flagged motion breaks. Exit code 1 '
                    'if a motion would be refused.')
    add_connection_options(check, 'sweetie_bot')
    check.add_argument('names', nargs='*', default=[], metavar='NAME',
                       help='stored motions (of the running storage node)')
    check.add_argument('--all', action='store_true', help='every stored motion')
    check.add_argument('--files', nargs='+', metavar='PATH', default=[],
                       help='trajectory files or folders of them instead (no ROS needed)')
    check.add_argument('--robot', default='sweetie_bot.yaml',
                       help='robot description (a name in config/ or a path)')
    check.add_argument('--interpolation', default='akima', choices=('akima', 'cubic'),
                       help="the controller's interpolation")
    check.add_argument('--png', metavar='DIR', help='draw each flagged motion into DIR')
    check.set_defaults(run=run_check)


def _motions(args: argparse.Namespace) -> List[Tuple[str, TrajectoryGoal]]:
    """Return (name, goal) of the motions the command names."""
    from sweetie_motion.storage.migration import load_ros1_json
    from sweetie_motion.trajectory.codec import load_goal_file
    if args.files:
        paths: List[Path] = []
        for given in args.files:
            path = Path(given)
            if path.is_dir():
                paths += sorted(p for p in path.iterdir() if p.suffix in ('.yaml', '.json'))
            else:
                paths.append(path)
        motions: List[Tuple[str, TrajectoryGoal]] = []
        for path in paths:
            try:
                goal = load_ros1_json(path) if path.suffix == '.json' else load_goal_file(path)
            except (SweetieMotionError, OSError, ValueError) as error:
                print(f'sweetie-motion check: {path}: skipped: {error}', file=sys.stderr)
                continue
            motions.append((path.stem, goal))
        return motions
    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient(args.namespace, timeout=args.timeout) as client:
        names = client.names() if args.all else args.names
        return [(name, client.load(name)) for name in names]


def run_check(args: argparse.Namespace) -> int:
    """Check the motions the command names; print the table and the findings."""
    from sweetie_motion.checks.library import check_motion, library_table
    from sweetie_motion.checks.motion import checker_for
    from sweetie_motion.model import load_robot_description
    if not (args.names or args.all or args.files):
        print('sweetie-motion check: name motions, or give --all or --files', file=sys.stderr)
        return 2
    model = load_robot_description(args.robot)
    model.configure()
    checker = checker_for(model)
    checked = []
    for name, goal in _motions(args):
        try:
            checked.append(check_motion(checker, name, goal, args.interpolation))
        except (SweetieMotionError, ValueError) as error:
            print(f'sweetie-motion check: {name}: skipped: {error}', file=sys.stderr)
    if not checked:
        print('sweetie-motion check: no motion to check', file=sys.stderr)
        return 2
    print(library_table(checked))
    flagged = [m for m in checked if m.report.findings]
    for motion in flagged:
        print(f'\n{motion.name} ({motion.verdict}):')
        for finding in motion.report.findings:
            print(f'  {finding.severity:6s} {finding.check}: {finding.message}')
    if args.png and flagged:
        from sweetie_motion.checks.figures import plot_checked
        out = Path(args.png)
        out.mkdir(parents=True, exist_ok=True)
        for motion in flagged:
            print(f'{motion.name} -> {plot_checked(checker, motion, out / f"{motion.name}.png")}')
    settings = checker.settings
    print(f'\nchecks of {args.robot}: collision {settings.collision} (margin '
          f'{settings.collision_margin * 1e3:.1f} mm), balance {settings.balance} (hooves '
          f'{settings.foot_radius * 1e3:.0f} mm discs), load {settings.load}')
    return 1 if any(m.report.refused for m in checked) else 0
