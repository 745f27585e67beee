"""The pure core imports without rclpy (design rule: ROS only at the edges)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Every module of sweetie_motion must import with rclpy, every ROS message package and Qt
# missing, except these: the ROS and Qt edges of the package (nodes, the GUIs, the clients
# and the message conversions). Everything else, including modules added later, is the core.
ROS_FACING = ('sweetie_motion.nodes', 'sweetie_motion.editor', 'sweetie_motion.console',
              'sweetie_motion.client', 'sweetie_motion.program_client',
              'sweetie_motion.conversions', 'sweetie_motion.storage.client',
              'sweetie_motion.demo')

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


def test_pure_core_imports_without_rclpy():
    result = subprocess.run([sys.executable, '-c', PROBE, ','.join(ROS_FACING)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    for core in ('sweetie_motion.model.robot_model', 'sweetie_motion.cartesian.planner',
                 'sweetie_motion.servo.virtual', 'sweetie_motion.cli'):
        assert core in result.stdout.split(), result.stdout
