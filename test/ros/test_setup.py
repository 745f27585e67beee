"""The venv made by `make setup` works from any shell, without sourcing anything."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)


def clean_env():
    """Return a login-shell-like environment: none of the ROS or venv variables are set."""
    keep = ('HOME', 'PATH', 'LANG', 'TERM', 'USER')
    env = {k: v for k, v in os.environ.items() if k in keep}
    env['PATH'] = '/usr/local/bin:/usr/bin:/bin'
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_DOMAIN_ID'] = os.environ['ROS_DOMAIN_ID']
    return env


@pytest.mark.skipif(not os.path.exists(os.path.join(VENV_BIN, 'sweetie-motion')),
                    reason='not running inside the venv of make setup')
def test_venv_python_has_ros_and_our_interfaces_without_sourcing(tmp_path):
    code = ('import rclpy, pinocchio, control_msgs.action, sweetie_motion_msgs.msg;'
            'from ament_index_python.packages import get_package_share_directory as g;'
            'rclpy.init(); n = rclpy.create_node("probe"); print(n.get_name(), '
            'g("control_msgs")); n.destroy_node(); rclpy.shutdown()')
    result = subprocess.run([os.path.join(VENV_BIN, 'python'), '-c', code], env=clean_env(),
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('probe ')


@pytest.mark.skipif(not os.path.exists(os.path.join(VENV_BIN, 'sweetie-motion')),
                    reason='not running inside the venv of make setup')
def test_console_script_runs_from_anywhere(tmp_path):
    png = tmp_path / 'tree.png'
    result = subprocess.run([os.path.join(VENV_BIN, 'sweetie-motion'), 'describe', '--png',
                             str(png)], env=clean_env(), capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert '32 joints, 6 chains, 6 resource groups' in result.stdout
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


@pytest.mark.skipif(not os.path.exists(os.path.join(VENV_BIN, 'sweetie-motion')),
                    reason='not running inside the venv of make setup')
def test_bad_robot_description_is_a_clear_error(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('robot:\n  urdf: missing.urdf\n  chains: {a: {first_link: x, last_link: y}}\n')
    result = subprocess.run([os.path.join(VENV_BIN, 'sweetie-motion'), 'describe', '--robot',
                             str(bad)], env=clean_env(), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert 'cannot read URDF file' in result.stderr and 'Traceback' not in result.stderr
