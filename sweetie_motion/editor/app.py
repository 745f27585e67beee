"""
`sweetie-motion editor` / `trajectory_editor`: start the trajectory editor.

    sweetie-motion editor [--with-robot] [--screenshot FILE --quit-after S] [--ros-args ...]

``--with-robot`` also starts the motion process on the virtual robot (everything on this
machine), so the editor works on its own. Without a display (QT_QPA_PLATFORM=offscreen)
``--screenshot`` and ``--quit-after`` render the window to a PNG and exit.
"""

import sys
from typing import List, NamedTuple, Optional, TYPE_CHECKING

if TYPE_CHECKING:
    from sweetie_motion.editor.bridge import EditorBridge
    from sweetie_motion.editor.presenter import EditorPresenter
    from sweetie_motion.editor.window import EditorWindow


def load_poses(path: Optional[str] = None) -> dict:
    """Return the named poses of config/poses.yaml (or ``path``)."""
    import yaml
    from sweetie_motion.paths import config_path
    try:
        with open(path or config_path('poses.yaml'), encoding='utf-8') as stream:
            document = yaml.safe_load(stream) or {}
    except (OSError, yaml.YAMLError):
        return {}
    poses = document.get('poses') or {}
    return {str(name): {str(j): float(v) for j, v in (pose or {}).items()}
            for name, pose in poses.items()}


def main(argv: Optional[List[str]] = None) -> int:
    """Run the editor until its window closes."""
    from sweetie_motion.command_line import (
        CommandParser, fail, namespace, positive_seconds,
    )
    from sweetie_motion.errors import SweetieMotionError
    from sweetie_motion.gui.app import own_robot
    from sweetie_motion.ros.background import split_ros_args
    argv, ros_args = split_ros_args(sys.argv[1:] if argv is None else argv)
    parser = CommandParser(
        prog='sweetie-motion editor',
        description='The trajectory editor: pose the robot, record keyframes, play and store '
                    'trajectories. With --with-robot it also starts the motion process on the '
                    'virtual robot, so it works on its own. Without a display '
                    '(QT_QPA_PLATFORM=offscreen), --screenshot with --quit-after renders the '
                    'window into a PNG and exits. ROS arguments go after --ros-args.')
    parser.add_argument('--with-robot', action='store_true',
                        help='also start the motion process on the virtual robot')
    parser.add_argument('--namespace', type=namespace, default='sweetie_bot',
                        help='robot namespace of the motion process')
    parser.add_argument('--screenshot', help='save a PNG of the window (see --quit-after)')
    parser.add_argument('--quit-after', type=positive_seconds,
                        help='close after this many seconds')
    args = parser.parse_args(argv)
    with own_robot(['--namespace', args.namespace] if args.with_robot else None):
        try:
            return run(['trajectory_editor', *(ros_args or ['--ros-args']), '-p',
                        f'namespace:={args.namespace}'], args.screenshot, args.quit_after)
        except SweetieMotionError as error:
            return fail('sweetie-motion editor', str(error))


class Editor(NamedTuple):
    """The parts of a running editor."""

    window: 'EditorWindow'
    presenter: 'EditorPresenter'
    bridge: 'EditorBridge'


def build_editor(node, model: object = False, poses: Optional[dict] = None,
                 streams=None) -> Editor:
    """
    Build the editor on ``node``: the bridge (robot, storage), the presenter and the window.

    :param node: the editor's rclpy node; the caller spins and destroys it.
    :param streams: a node spun apart for ``joint_states`` (BackgroundNode.streams); None:
        ``node``.
    :param model: the configured RobotModel; default (False): the ``robot_description``
        parameter's; None: work without limits.
    :param poses: named poses; default: config/poses.yaml.
    """
    from sweetie_motion.editor.bridge import EditorBridge
    from sweetie_motion.editor.presenter import EditorPresenter
    from sweetie_motion.editor.window import EditorWindow
    from sweetie_motion.editor.workspace import Workspace
    bridge = EditorBridge(node, streams)
    values = bridge.values
    if model is False:
        model = load_model(values['robot_description'])
    presenter = EditorPresenter(bridge.submit, model,
                                Workspace(values['workspace_dir'], values['backups_kept']),
                                values['legs'], values['interpolation'],
                                values['backup_period'])
    window = EditorWindow(presenter, bridge.poll, load_poses() if poses is None else poses)
    return Editor(window, presenter, bridge)


def load_model(description: str):
    """Return the configured robot model of ``description`` (None, with a note, if none)."""
    from sweetie_motion.errors import SweetieMotionError
    from sweetie_motion.model import load_robot_description
    try:
        model = load_robot_description(description)
        model.configure()
    except SweetieMotionError as error:
        print(f'trajectory editor: no robot model ({error}); limits, sliders and the robot '
              'view are off', file=sys.stderr)
        return None
    return model


def run(ros_args: List[str], screenshot: Optional[str] = None,
        quit_after: Optional[float] = None) -> int:
    """Create the application, the node and the editor; run the Qt loop."""
    from sweetie_motion.gui.app import run_window, STOP_ANNOUNCEMENT, WindowParts

    def build(ros) -> WindowParts:
        editor = build_editor(ros.node, streams=ros.streams)
        # the bridge destroys its clients: once nothing spins any more
        return WindowParts(editor.window, release=editor.bridge.close)
    return run_window('trajectory_editor', ros_args, build,
                      f'trajectory editor: {STOP_ANNOUNCEMENT}', screenshot, quit_after)


if __name__ == '__main__':
    sys.exit(main())
