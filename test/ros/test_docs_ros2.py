"""
Every `ros2 ...` command of the README and docs/*.md runs as written against a bringup.

The commands are read with the ros2 CLI's own parsing (:mod:`ros2_commands`: YAML, then the
message filled in field by field as rosidl_runtime_py does; parameters typed by rclpy's
``get_parameter_value``, the function `ros2 param set` calls) and sent to the motion process of
`sweetie-motion bringup` (default config and namespace) in a domain of the test's own.
`ros2 launch` cannot run here (the wheels have no launch package): its file and every
argument it is given are checked instead.
"""

import ast
from pathlib import Path
import re
import shlex

from motion_process import motion_process, MotionClient
import pytest
from ros2_commands import CommandFailed, message, ros2_commands, Ros2Cli
from ros_util import ROOT

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DOCUMENTS = [Path(ROOT) / 'README.md'] + sorted((Path(ROOT) / 'docs').glob('*.md'))


def all_commands():
    """Return (document, command) of every `ros2` command, README first."""
    return [(path.name, command) for path in DOCUMENTS
            for command in ros2_commands(path.read_text())]


def console_scripts():
    """Return 'package executable' -> 'module:function' from setup.py's console_scripts."""
    tree = ast.parse((Path(ROOT) / 'setup.py').read_text())
    package = re.search(r'<name>(\w+)</name>', (Path(ROOT) / 'package.xml').read_text())[1]
    scripts = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                re.fullmatch(r'[\w-]+ = [\w.]+:\w+', node.value):
            name, entry = node.value.split(' = ')
            scripts[f'{package} {name}'] = entry
    return scripts


def test_the_documents_command_what_a_ros_user_types():
    commands = [c for _, c in all_commands()]
    verbs = {' '.join(shlex.split(c)[1:3]) for c in commands}
    assert {'topic pub', 'service call', 'action send_goal', 'lifecycle set', 'param set',
            'control list_controllers'} <= verbs, verbs
    assert any(c.startswith('ros2 launch ') for c in commands)
    assert any(c.startswith('ros2 run ') for c in commands)
    # the un-jamming command of the README and the mention in docs/motion_process.md
    assert "ros2 param set /sweetie_bot/virtual_robot blocked_joints '[]'" in commands
    # a span that only names the tool is not a command
    assert 'ros2 param' not in commands


def test_a_yaml_boolean_field_name_fails_as_in_the_cli():
    from sweetie_motion_msgs.srv import SetChainsTorque
    with pytest.raises(CommandFailed, match='attribute name must be string'):
        message(SetChainsTorque.Request, '{chains: [leg1], off: false}')
    request = message(SetChainsTorque.Request, '{chains: [leg1], torque_off: true}')
    assert list(request.chains) == ['leg1'] and request.torque_off is True


def check_launch(command: str) -> None:
    """Check that `ros2 launch PACKAGE FILE name:=value ...` names a file and its arguments."""
    words = shlex.split(command)
    assert words[2] == 'sweetie_motion', command
    launch = Path(ROOT) / 'launch' / words[3]
    assert launch.is_file(), command
    assert "glob('launch/*.launch.py')" in (Path(ROOT) / 'setup.py').read_text()
    declared = set(re.findall(r"DeclareLaunchArgument\(\s*'(\w+)'", launch.read_text()))
    for word in words[4:]:
        assert ':=' in word and word.split(':=')[0] in declared, (command, declared)


def test_every_ros2_command_of_the_docs_runs_as_written(tmp_path, domain_id):
    commands = all_commands()
    with motion_process('sweetie_bot_motion.yaml', 'sweetie_bot', '--storage-dir',
                        str(tmp_path / 'store')):
        with MotionClient('sweetie_bot', domain_id) as peer:
            peer.wait_ready(['motion', 'trajectory_storage', 'joint_trajectory',
                             'follow_joint_state', 'virtual_robot'], 60.0)
            cli = Ros2Cli(peer.node, scripts=console_scripts(), cwd=ROOT)
            ran = []
            for document, command in commands:
                if command.startswith('ros2 launch '):
                    check_launch(command)
                    continue
                try:
                    cli.run(command)
                except CommandFailed as error:
                    pytest.fail(f'{document}: `{command}` fails: {error}')
                ran.append(command)
            assert len(ran) >= 12, ran
