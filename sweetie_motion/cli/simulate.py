"""
`sweetie-motion simulate`: what will the real pony do? Each motion played on the floor in physics.

Each motion goes through the trajectory controller's own planning (the approach from the
standing pose, the retiming to the joint limits, the speed) and is played on the robot of the
description's ``physics:`` section, first settled on the floor, for its duration and 1.5 s
more. A table gives per motion whether the robot stays up or falls (and when), the longest
time a servo held its stall torque, the largest torque over stall, the farthest a supporting
hoof slipped, the longest a supporting hoof was off the floor and the largest tilt; then each
servo's and each hoof's figures. The exit code is 1 when a motion falls or a servo holds its
stall torque longer than its overload time (the ``checks: load: overload_time``). The motions
come from the trajectory store's files (the built-in library config/trajectories and the
storage folder, as the storage node serves them: no ROS needed), from a running storage node
(``--node``), or from trajectory files (``--files``: our YAML or the old robot's JSON).
"""

import argparse
from pathlib import Path
import sys
from typing import List, Tuple

from sweetie_motion.command_line import non_negative_number, notice, positive_number
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import MAX_SPEED, MIN_SPEED, TrajectoryGoal

#: where the storage node keeps saved trajectories by default (its storage_dir)
STORAGE_DIR = '~/.local/share/sweetie_motion/trajectories'


def add_simulate_command(commands, add_connection_options) -> None:
    """Add the ``simulate`` command to the ``sweetie-motion`` sub-commands."""
    simulate = commands.add_parser(
        'simulate', help='play stored motions on the robot on a floor in physics: does it '
                         'fall, which servo holds its stall torque, which hoof slips',
        description=__doc__.split('\n\n', 1)[1].replace('\n', ' ').replace('``', ''))
    add_connection_options(simulate, 'sweetie_bot')
    simulate.add_argument('names', nargs='*', default=[], metavar='NAME',
                          help='stored motions (of the trajectory store)')
    simulate.add_argument('--all', action='store_true', help='every stored motion')
    simulate.add_argument('--files', nargs='+', metavar='PATH', default=[],
                          help='trajectory files or folders of them instead')
    simulate.add_argument('--node', action='store_true',
                          help='take the motions from the running storage node (ROS) '
                               "instead of the store's files")
    simulate.add_argument('--storage-dir', default=STORAGE_DIR,
                          help="the storage node's folder of saved trajectories")
    simulate.add_argument('--robot', default='sweetie_bot.yaml',
                          help='robot description (a name in config/ or a path)')
    simulate.add_argument('--speed', type=positive_number, default=1.0,
                          help=f'time scale, {MIN_SPEED}..{MAX_SPEED} (2: twice as fast)')
    simulate.add_argument('--after', type=non_negative_number, default=None,
                          help='seconds simulated after the end (default: the '
                               "description's physics: after_time, 1.5)")
    simulate.add_argument('--interpolation', default='akima', choices=('akima', 'cubic'),
                          help="the controller's interpolation")
    simulate.add_argument('--png', metavar='DIR', help='draw each motion into DIR')
    simulate.set_defaults(run=run_simulate)


def _files(given: List[str]) -> List[Path]:
    paths: List[Path] = []
    for item in given:
        path = Path(item).expanduser()
        if path.is_dir():
            paths += sorted(p for p in path.iterdir() if p.suffix in ('.yaml', '.json'))
        elif path.is_file():
            paths.append(path)
        else:
            raise SweetieMotionError(f'{item}: no such file or folder')
    return paths


def _store_files(args: argparse.Namespace) -> List[Path]:
    """Return the store's files by name: the library's, then the storage folder's over them."""
    from sweetie_motion.paths import config_path
    by_name = {}
    for folder in (config_path('trajectories'), Path(args.storage_dir).expanduser()):
        if folder.is_dir():
            by_name.update({p.stem: p for p in sorted(folder.glob('*.yaml'))})
    if args.all:
        return [by_name[name] for name in sorted(by_name)]
    from sweetie_motion.errors import did_you_mean
    unknown = [name for name in args.names if name not in by_name]
    if unknown:
        raise SweetieMotionError(f'no stored motion {unknown[0]!r}'
                                 f'{did_you_mean(unknown[0], by_name)} (stored: '
                                 f'{", ".join(sorted(by_name))})')
    return [by_name[name] for name in args.names]


def _motions(args: argparse.Namespace) -> List[Tuple[str, TrajectoryGoal]]:
    """Return (name, goal) of the motions the command names."""
    from sweetie_motion.storage.migration import load_ros1_json
    from sweetie_motion.trajectory.codec import load_goal_file
    if args.node and not args.files:
        from sweetie_motion.ros.motion_client import MotionClient
        with MotionClient(args.namespace, timeout=args.timeout) as client:
            names = client.names() if args.all else args.names
            return [(name, client.load(name)) for name in names]
    motions = []
    paths = _files(args.files) if args.files else _store_files(args)
    stems = [path.stem for path in paths]
    for path in paths:
        try:
            goal = load_ros1_json(path) if path.suffix == '.json' else load_goal_file(path)
        except (SweetieMotionError, OSError, ValueError) as error:
            print(f'sweetie-motion simulate: {path}: skipped: {error}', file=sys.stderr)
            continue
        # two files of one name (ours and the old robot's greeting): say which
        name = path.stem if stems.count(path.stem) == 1 else f'{path.parent.name}/{path.stem}'
        motions.append((name, goal))
    return motions


def run_simulate(args: argparse.Namespace) -> int:
    """Simulate the motions the command names; print the table and each one's figures."""
    from dataclasses import replace
    from sweetie_motion.model import load_robot_description
    from sweetie_motion.physics.builder import build_physics
    from sweetie_motion.physics.motion import MotionSimulator
    from sweetie_motion.trajectory.validation import GoalError
    if not (args.names or args.all or args.files):
        print('sweetie-motion simulate: name motions, or give --all or --files',
              file=sys.stderr)
        return 2
    if not MIN_SPEED <= args.speed <= MAX_SPEED:
        raise SweetieMotionError(f'--speed {args.speed} is outside {MIN_SPEED}..{MAX_SPEED}')
    robot = load_robot_description(args.robot)
    robot.configure()
    settings = robot.physics_settings
    if args.after is not None:
        settings = replace(settings, after_time=args.after)
    motions = _motions(args)
    simulator = MotionSimulator(robot, build_physics(robot, settings), args.interpolation)
    results, refused = [], []
    for number, (name, goal) in enumerate(motions, 1):
        # a motion takes a second or two: say which, on standard error (the table is output)
        notice(f'simulating {name} ({number}/{len(motions)})')
        if not goal.points:
            print(f'sweetie-motion simulate: {name}: skipped: no points', file=sys.stderr)
            continue
        try:
            results.append(simulator.simulate(name, goal, args.speed))
        except GoalError as error:
            refused.append((name, str(error)))
    if not results and not refused:
        print('sweetie-motion simulate: no motion to simulate', file=sys.stderr)
        return 2
    print(simulation_table(results, refused))
    for motion in results:
        print()
        print(describe_motion(motion))
    if args.png and results:
        from sweetie_motion.physics.figures import plot_simulated
        out = Path(args.png)
        out.mkdir(parents=True, exist_ok=True)
        for motion in results:
            file = out / f"{motion.name.replace('/', '_')}.png"
            print(f'{motion.name} -> {plot_simulated(motion, file)}')
    from sweetie_motion.physics.servos import describe_actuators
    print(f'\nphysics of {args.robot}: {simulator.physics.mass:.2f} kg, step '
          f'{settings.timestep * 1e3:g} ms, floor friction {settings.floor_friction:g}; '
          + describe_actuators(simulator.physics.actuators).replace('\n', '; '))
    print(f'a fall: {settings.fall_tilt:g} rad beyond the planned stance or '
          f'{settings.fall_height:g} m below it for {settings.fall_time:g} s; overload after '
          f'{simulator.overload_time:g} s at stall')
    return 1 if any(m.findings() for m in results) else 0


def simulation_table(results: list, refused: List[Tuple[str, str]]) -> str:
    """Return the table: one row per simulated motion, then the refused ones."""
    from sweetie_motion.model.report import table
    from sweetie_motion.physics.figures import verdict
    import numpy as np
    rows = []
    for motion in results:
        s = motion.summary()
        rows.append([motion.name, f'{motion.duration:.2f}', verdict(motion),
                     f'{np.degrees(s["tilt"]):.1f}',
                     f'{s["stall"]:.2f} ({s["stall_servo"]})' if s['stall'] else '0',
                     f'{s["peak"]:.2f} ({s["peak_servo"]})',
                     f'{s["slip"] * 1e3:.1f} ({s["slip_leg"]})' if motion.legs else '-',
                     f'{s["off_ground"]:.2f}' if motion.legs else '-'])
    rows += [[name, '-', 'REFUSED by the controller', '', '', '', '', '']
             for name, _ in refused]
    text = table(rows, ['motion', 'seconds', 'verdict', 'tilt [deg]', 'at stall [s]',
                        'peak / stall', 'slip [mm]', 'off floor [s]'])
    return text + ''.join(f'\n{name}: refused: {reason}' for name, reason in refused)


def describe_motion(motion) -> str:
    """Return a motion's findings, each servo's and each hoof's figures."""
    lines = [f'{motion.name}:'] + [f'  {finding}' for finding in motion.findings()]
    lines += [f'  note: {note}' for note in motion.notes]
    servos = [f'{servo} {held:.2f}/{peak:.2f}' for servo, (held, _), peak in zip(
        motion.servos, motion.stall_runs(), motion.peak_share())]
    lines.append('  servos (s at stall / peak over stall): ' + ', '.join(servos))
    if motion.legs:
        hooves = [f'{leg} {slip * 1e3:.1f} mm/{off:.2f} s' for leg, slip, off in zip(
            motion.legs, motion.slip(), motion.off_ground())]
        lines.append('  hooves (slip / off the floor while supporting): ' + ', '.join(hooves))
    return '\n'.join(lines)
