"""The pure core imports without rclpy (design rule: ROS only at the edges)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every module of these packages must import with rclpy and all ROS message packages missing.
PURE_PACKAGES = ['sweetie_motion.model', 'sweetie_motion.core', 'sweetie_motion.trajectory',
                 'sweetie_motion.servo', 'sweetie_motion.storage', 'sweetie_motion.controllers',
                 'sweetie_motion.host']
PURE_MODULES = ['sweetie_motion.errors', 'sweetie_motion.paths', 'sweetie_motion.plots']

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
names = []
for package in sys.argv[1].split(','):
    module = importlib.import_module(package)
    names.append(package)
    for info in pkgutil.walk_packages(module.__path__, package + '.'):
        importlib.import_module(info.name)
        names.append(info.name)
for name in sys.argv[2].split(','):
    importlib.import_module(name)
    names.append(name)
print(len(names), 'modules:', ' '.join(names))
'''


def test_pure_core_imports_without_rclpy():
    result = subprocess.run(
        [sys.executable, '-c', PROBE, ','.join(PURE_PACKAGES), ','.join(PURE_MODULES)],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'sweetie_motion.model.robot_model' in result.stdout
