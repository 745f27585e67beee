"""
The topics joint_trajectory_controller users rely on, from another process (R-FJT-1).

``~/joint_trajectory`` (trajectory_msgs/JointTrajectory) replaces the running trajectory, an
empty one stops; ``~/controller_state`` (control_msgs/JointTrajectoryControllerState) reports
reference, feedback, error and output of the controller's joints.
"""

from pathlib import Path

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from motion_process import motion_process, MotionClient
import numpy as np
import pytest
from ros_util import HERE, wait_for, wait_future
from sweetie_motion.ros.action_client import ActionClient
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_jtc_topics'
CONTROLLER = f'/{NS}/head_trajectory'


def write_config(tmp: Path) -> str:
    text = (Path(HERE) / 'config' / 'trajectory_test.yaml').read_text()
    path = tmp / 'topics.yaml'
    path.write_text(text.replace('STORAGE_DIR', str(tmp / 'store')))
    return str(path)


def point(seconds: float, positions) -> JointTrajectoryPoint:
    whole = int(seconds)
    return JointTrajectoryPoint(positions=list(positions), time_from_start=Duration(
        sec=whole, nanosec=int(round((seconds - whole) * 1e9))))


def test_joint_trajectory_topic_and_controller_state_as_joint_trajectory_controller(
        tmp_path, domain_id):
    with motion_process(write_config(tmp_path), NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(['motion', 'head_trajectory'])
            states = []
            peer.node.create_subscription(JointTrajectoryControllerState,
                                          f'{CONTROLLER}/controller_state', states.append, 10)
            wait_for(lambda: len(states) >= 3, 10, message='controller_state messages')
            state = states[-1]
            assert 'joint51' in state.joint_names and 'joint11' not in state.joint_names
            n = len(state.joint_names)
            assert len(state.reference.positions) == len(state.feedback.positions) == n
            error = np.subtract(state.reference.positions, state.feedback.positions)
            np.testing.assert_allclose(state.error.positions, error, atol=1e-12)
            assert list(state.output.positions) == list(state.reference.positions)

            # a trajectory on the topic moves the head, as with joint_trajectory_controller
            publisher = peer.node.create_publisher(JointTrajectory,
                                                   f'{CONTROLLER}/joint_trajectory', 10)
            wait_for(lambda: publisher.get_subscription_count() > 0, 10,
                     message='the controller subscribed')
            publisher.publish(JointTrajectory(joint_names=['joint51'],
                                              points=[point(1.0, [0.2])]))
            wait_for(lambda: abs(peer.position('joint51', 'reference') - 0.2) < 1e-3, 10,
                     message='joint51 at 0.2')

            # an action goal running, then an empty trajectory: the goal ends (aborted), the
            # head decelerates and holds short of the goal's target
            client = ActionClient(peer.node, FollowJointTrajectory,
                                  f'{CONTROLLER}/follow_joint_trajectory')
            assert client.wait_for_server(timeout_sec=10)
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = ['joint51']
            goal.trajectory.points = [point(4.0, [-0.2])]
            handle = wait_future(client.send_goal_async(goal), 10)
            assert handle.accepted
            wait_for(lambda: peer.position('joint51', 'reference') < 0.15, 10,
                     message='the goal moving joint51')
            publisher.publish(JointTrajectory(joint_names=['joint51']))
            result = wait_future(handle.get_result_async(), 10)
            assert result.status == GoalStatus.STATUS_ABORTED, result

            def resting():
                with peer.lock:
                    recent = [m.position[list(m.name).index('joint51')]
                              for m in peer.history[-15:]]
                return len(recent) == 15 and np.ptp(recent) < 1e-7
            wait_for(resting, 10, message='joint51 at rest after the stop')
            assert peer.position('joint51', 'reference') > -0.19  # stopped on the way
            states.clear()
            wait_for(lambda: len(states) >= 2, 10, message='controller_state after the stop')
