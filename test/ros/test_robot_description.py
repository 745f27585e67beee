"""
The URDF from ROS, as robot_state_publisher has it: the robot_description topic or parameter.

The chains, groups and limits still come from the robot config; the URDF given over ROS
replaces the file's (here: joint51's upper limit lowered to 0.10 rad, which FollowJointState
then respects).
"""

from pathlib import Path
import subprocess
import sys

from motion_process import motion_process, MotionClient
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_util import ROOT, wait_for
from std_msgs.msg import String

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_description'
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def narrowed_urdf() -> str:
    text = (Path(ROOT) / 'config' / 'sweetie_bot.urdf').read_text()
    old = '<limit lower="-1.5708" upper="0.26" effort="1.18" velocity="1.5708"/>'
    assert text.count(old) >= 1
    start = text.index('<joint name="joint51"')
    at = text.index(old, start)
    return text[:at] + old.replace('upper="0.26"', 'upper="0.10"') + text[at + len(old):]


def joint51_stops_at_the_narrowed_limit(peer) -> None:
    peer.wait_ready(['motion', 'follow_joint_state'])
    wait_for(lambda: (peer.publish('joint_states_set', ['joint51'], [0.25]) or
                      abs(peer.position('joint51', 'reference') - 0.10) < 1e-3), 20,
             period=0.1, message='joint51 at the URDF limit of 0.10')
    assert peer.position('joint51', 'reference') < 0.10 + 1e-6


def test_the_urdf_comes_from_the_latched_robot_description_topic(domain_id):
    with MotionClient(NS, domain_id) as peer:
        publisher = peer.node.create_publisher(String, f'/{NS}/robot_description', LATCHED)
        publisher.publish(String(data=narrowed_urdf()))
        with motion_process('sweetie_bot_motion.yaml', NS, '--robot-description', 'topic'):
            joint51_stops_at_the_narrowed_limit(peer)


def test_the_urdf_comes_from_the_robot_description_parameter(domain_id, tmp_path):
    import yaml
    # a URDF is no one-line value: launch files and users pass it in a parameters file
    params = tmp_path / 'description.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'robot_description': narrowed_urdf()}}}))
    with MotionClient(NS, domain_id) as peer:
        with motion_process('sweetie_bot_motion.yaml', NS, '--robot-description',
                            'parameter', '--ros-args', '--params-file', str(params)):
            joint51_stops_at_the_narrowed_limit(peer)


def test_no_robot_description_is_one_clear_error(domain_id):
    done = subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', 'bringup',
                           '--namespace', NS, '--robot-description', 'topic',
                           '--description-timeout', '1'], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert f'no URDF on /{NS}/robot_description within 1 s' in done.stderr
    assert 'Traceback' not in done.stderr
    done = subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', 'bringup',
                           '--namespace', NS, '--robot-description', 'parameter'],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and 'robot_description' in done.stderr
    assert '--params-file' in done.stderr
