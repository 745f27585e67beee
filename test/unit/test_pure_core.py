"""The pure core imports without rclpy (design rule: ROS only at the edges)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Every module of sweetie_motion must import with rclpy, every ROS message package and Qt
# missing, except those of five folders: the ROS and Qt edges of the package (nodes/, the GUIs
# editor/ and console/ and their kit gui/, and ros/: the clients and the message conversions).
# Everything else, including modules added later, is the core; setup.cfg's mypy rule names the
# same folders.
ROS_FACING = ('sweetie_motion.nodes', 'sweetie_motion.editor', 'sweetie_motion.console',
              'sweetie_motion.gui', 'sweetie_motion.ros')

PROBE = r'''
import importlib, pkgutil, sys

class Block:
    """Refuse rclpy and every ROS interface package."""
    banned = ('rclpy', 'rcl_interfaces', 'sensor_msgs', 'trajectory_msgs', 'control_msgs',
              'std_msgs', 'std_srvs', 'builtin_interfaces', 'sweetie_motion_msgs',
              'diagnostic_msgs', 'lifecycle_msgs', 'action_msgs', 'PyQt5')
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in self.banned:
            raise ImportError(f'pure core imported {name}')
        return None

sys.meta_path.insert(0, Block())
facing = tuple(sys.argv[1].split(','))
import sweetie_motion
names = []
for info in pkgutil.walk_packages(sweetie_motion.__path__, 'sweetie_motion.'):
    if info.name.startswith(facing) and (info.name in facing or
                                         info.name.startswith(tuple(f + '.' for f in facing))):
        continue
    importlib.import_module(info.name)
    names.append(info.name)
print(len(names), 'modules:', ' '.join(names))
'''


def test_the_ros_facing_modules_are_those_of_the_five_folders_and_mypy_skips_just_them():
    import configparser
    import re
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, 'setup.cfg'))
    exclude = re.compile(config['mypy']['exclude'], re.X)
    for folder in ('nodes', 'editor', 'console', 'gui', 'ros'):
        assert exclude.search(f'sweetie_motion/{folder}/x.py'), folder
    for core in ('core/cycle.py', 'controllers/base.py', 'host/host.py', 'cli.py'):
        assert not exclude.search(f'sweetie_motion/{core}'), core
    loose = [name for name in os.listdir(os.path.join(ROOT, 'sweetie_motion'))
             if name.endswith('.py')]
    for name in loose:   # no loose module of the top level imports ROS or Qt when it loads
        with open(os.path.join(ROOT, 'sweetie_motion', name), encoding='utf-8') as stream:
            text = stream.read()
        assert not re.search(r'^(from|import) (rclpy|PyQt5)', text, re.M), name


def test_pure_core_imports_without_rclpy():
    result = subprocess.run([sys.executable, '-c', PROBE, ','.join(ROS_FACING)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    for core in ('sweetie_motion.model.robot_model', 'sweetie_motion.cartesian.planner',
                 'sweetie_motion.servo.virtual', 'sweetie_motion.cli'):
        assert core in result.stdout.split(), result.stdout
