"""
`sweetie-motion check`: will these motions hurt the robot? Self-collision, balance, servo load.

The motions come from the running storage node (by name, or ``--all``) or, without ROS, from
trajectory files and folders (``--files``: our YAML or the old robot's JSON). Each is checked
as the trajectory controller plays it (the approach from the standing pose, the retiming to
the joint limits, ``--speed``), with the robot description's ``checks:`` settings; a table
gives the worst figure of each check, then what each flagged motion breaks and when, and the
motions the controller refuses to play. ``--png DIR`` draws each flagged motion's figures.
"""

import argparse
from pathlib import Path
import sys
from typing import List, Tuple

from sweetie_motion.command_line import positive_number
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import MAX_SPEED, MIN_SPEED, TrajectoryGoal


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
    check.add_argument('--speed', type=positive_number, default=1.0,
                       help=f'time scale, {MIN_SPEED}..{MAX_SPEED} (2: twice as fast)')
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
        kept: List[Path] = []
        for path in paths:
            try:
                goal = load_ros1_json(path) if path.suffix == '.json' else load_goal_file(path)
            except (SweetieMotionError, OSError, ValueError) as error:
                print(f'sweetie-motion check: {path}: skipped: {error}', file=sys.stderr)
                continue
            if not goal.points:
                print(f'sweetie-motion check: {path}: skipped: no points', file=sys.stderr)
                continue
            kept.append(path)
            motions.append((path.stem, goal))
        stems = [name for name, _ in motions]
        # two files of one name (ours and the old robot's greeting): say which
        return [(name if stems.count(name) == 1 else f'{path.parent.name}/{name}', goal)
                for (name, goal), path in zip(motions, kept)]
    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient(args.namespace, timeout=args.timeout) as client:
        names = client.names() if args.all else args.names
        return [(name, client.load(name)) for name in names]


def run_check(args: argparse.Namespace) -> int:
    """Check the motions the command names; print the table and the findings."""
    from sweetie_motion.checks.library import library_table
    from sweetie_motion.controllers.played_checks import check_motion, motion_planner
    from sweetie_motion.checks.motion import checker_for
    from sweetie_motion.model import load_robot_description
    if not (args.names or args.all or args.files):
        print('sweetie-motion check: name motions, or give --all or --files', file=sys.stderr)
        return 2
    if not MIN_SPEED <= args.speed <= MAX_SPEED:
        raise SweetieMotionError(f'--speed {args.speed} is outside {MIN_SPEED}..{MAX_SPEED}')
    model = load_robot_description(args.robot)
    model.configure()
    checker = checker_for(model)
    planner = motion_planner(model, args.interpolation)
    checked = []
    motions = _motions(args)
    for name, goal in motions:
        try:
            checked.append(check_motion(checker, name, goal, planner, args.speed))
        except (SweetieMotionError, ValueError) as error:
            print(f'sweetie-motion check: {name}: skipped: {error}', file=sys.stderr)
    if not checked:
        print('sweetie-motion check: no motion to check', file=sys.stderr)
        return 2
    print(library_table(checked))
    for motion in checked:
        if motion.refused:
            print(f'\n{motion.name}: refused by the controller: {motion.refused}')
    flagged = [m for m in checked if m.report.findings]
    for motion in flagged:
        print(f'\n{motion.name} ({motion.verdict}):')
        for finding in motion.report.findings:
            print(f'  {finding.severity:6s} {finding.check}: {finding.message}')
    playable = {m.name for m in checked if not m.refused}
    physics_refused = _judge(model, {n: g for n, g in motions if n in playable}, args.speed,
                             args.interpolation)
    if args.png and flagged:
        from sweetie_motion.checks.figures import plot_checked
        out = Path(args.png)
        out.mkdir(parents=True, exist_ok=True)
        for motion in flagged:
            print(f'{motion.name} -> {plot_checked(checker, motion, out / f"{motion.name}.png")}')
    settings = checker.settings
    print(f'\nchecks of {args.robot}: collision {settings.collision} (at contact; within '
          f'{settings.collision_margin * 1e3:.1f} mm: warn), balance {settings.balance} (a '
          f'fall), load {settings.load} (a servo at stall past {settings.overload_time:.2f} s)'
          f'; lesser findings warn')
    return 1 if physics_refused or any(m.report.refused or m.refused for m in checked) else 0


def _judge(model, motions: dict, speed: float, interpolation: str) -> bool:
    """
    Print the physics' verdict of each motion (``physics: judge`` of the description).

    :return: whether the physics refuses one (with ``judge: refuse``).
    """
    mode = model.physics_settings.judge
    if mode == 'off' or not motions:
        return False
    from sweetie_motion.physics.judge import judge_motion
    from sweetie_motion.physics.motion import MotionSimulator
    simulator = MotionSimulator(model, interpolation=interpolation)
    print(f'\nthe physics (judge: {mode}; `sweetie-motion simulate` shows more):')
    refused = False
    for name, goal in motions.items():
        try:
            verdict = judge_motion(simulator, name, goal, speed)
        except (SweetieMotionError, ValueError) as error:
            print(f'  {name}: not simulated: {error}')
            continue
        refused = refused or (verdict.refused and mode == 'refuse')
        word = ('REFUSED' if mode == 'refuse' else 'warning') if verdict.refused else 'ok'
        print(f'  {name}: {word}: {verdict.summary}')
        for finding in verdict.findings:
            print(f'    {finding}')
    return refused
