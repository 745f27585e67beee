"""
The `sweetie-motion` command line.

Subcommands that need ROS import rclpy lazily, so `sweetie-motion describe` works anywhere the
pure core does.
"""

import argparse
import sys
from typing import List, Optional

from sweetie_motion.errors import SweetieMotionError


def _table(rows: List[List[str]], header: List[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = '  '.join('-' * w for w in widths)
    out = ['  '.join(str(h).ljust(w) for h, w in zip(header, widths)), line]
    out += ['  '.join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return '\n'.join(row.rstrip() for row in out)


def describe_robot(robot: str, png: Optional[str]) -> int:
    """Print the chains, groups and joints of a robot description; optionally draw it."""
    from sweetie_motion.model import load_robot_description
    model = load_robot_description(robot)
    model.configure()
    tree = model.urdf_tree()
    print(f'robot {tree.name!r}: {len(model.list_all_joints())} joints, '
          f'{len(model.list_chains())} chains, {len(model.list_groups())} resource groups\n')
    rows = []
    for chain in model.list_chains():
        first, last, virtual = model.get_chain_links(chain)
        joints = model.list_joints(chain)
        rows.append([chain, model.get_chain_group(chain), f'{first} -> {last}',
                     virtual or '', len(joints), ' '.join(joints)])
    print(_table(rows, ['chain', 'group', 'links', 'virtual tip', 'n', 'joints']))
    print()
    rows = [[g, ' '.join(model.get_group_chains(g)) or '-', len(model.get_group_joints(g))]
            for g in model.list_groups()]
    print(_table(rows, ['group', 'chains', 'joints']))
    print()
    rows = []
    for name in model.list_all_joints():
        info = model.get_joint_info(name)
        rows.append([info.index, name, info.chain or '-', info.group,
                     'virtual' if info.virtual else info.joint_type,
                     f'{info.lower:+.3f}', f'{info.upper:+.3f}', f'{info.velocity:.2f}'])
    print(_table(rows, ['#', 'joint', 'chain', 'group', 'type', 'lower', 'upper',
                        'vel']))
    if png:
        from sweetie_motion.plots import plot_kinematic_tree
        path = plot_kinematic_tree(model, png)
        print(f'\nkinematic tree in the zero pose: {path}')
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of `sweetie-motion`."""
    parser = argparse.ArgumentParser(
        prog='sweetie-motion',
        description='sweetie_motion: stored motions played by name, the motion process, '
                    'trajectory storage and tools.')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND')
    commands.required = True

    describe = commands.add_parser(
        'describe', help='print the chains, groups and joints of a robot description')
    describe.add_argument('--robot', default='sweetie_bot.yaml',
                          help='robot description YAML (a name in config/ or a path)')
    describe.add_argument('--png', help='also draw the kinematic tree into this PNG file')
    describe.set_defaults(run=lambda a: describe_robot(a.robot, a.png))

    bringup = commands.add_parser(
        'bringup', add_help=False,
        help='run the motion process (all components in one process); --help for options')
    bringup.set_defaults(run=_bringup, passthrough=True)

    demo = commands.add_parser('demo', add_help=False,
                               help='the main job on the virtual robot (what `make demo` runs)')
    demo.set_defaults(run=_demo, passthrough=True)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from sweetie_motion.demo import main as demo_main
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
        parser.error(f'unrecognized arguments: {" ".join(rest)}')
    try:
        return args.run(args)
    except SweetieMotionError as error:
        print(f'sweetie-motion {args.command}: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


if __name__ == '__main__':
    sys.exit(main())
