"""
Proof that the ROS side really works here: real DDS between separate processes.

Every process of these tests keeps discovery on the loopback (conftest) and its own domain.
"""

import os
import time

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
import pytest
from ros_util import call_idempotent, HERE, python_process, RosPeer, wait_for, wait_future
from std_msgs.msg import String
from sweetie_motion.ros.action_client import ActionClient
from trajectory_msgs.msg import JointTrajectoryPoint

pytestmark = pytest.mark.ros


def make_goal(points: int, joints: int, step: float) -> FollowJointTrajectory.Goal:
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [f'joint{i}' for i in range(joints)]
    for k in range(points):
        t = (k + 1) * step
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=[0.01 * k + i for i in range(joints)],
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))))
    return goal


def test_action_goal_feedback_result_and_cancel_across_processes(domain_id):
    server = os.path.join(HERE, 'helpers', 'fjt_server.py')
    with python_process(server, '/test_arm/follow_joint_trajectory', name='fjt_server'):
        with RosPeer('fjt_test_client', domain_id) as peer:
            client = ActionClient(peer.node, FollowJointTrajectory,
                                  '/test_arm/follow_joint_trajectory')
            assert client.wait_for_server(timeout_sec=20.0), 'server not discovered'

            feedback = []
            goal = make_goal(50, 32, 0.01)
            handle = wait_future(client.send_goal_async(
                goal, feedback_callback=lambda msg: feedback.append(msg.feedback)), 10)
            assert handle.accepted
            result = wait_future(handle.get_result_async(), 20)
            assert result.status == GoalStatus.STATUS_SUCCEEDED
            assert result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
            assert result.result.error_string == '50 points'
            wait_for(lambda: len(feedback) >= 45, 5, message='feedback of every point')
            assert feedback[-1].joint_names[31] == 'joint31'
            assert feedback[-1].desired.positions[31] == pytest.approx(31 + 0.49)

            long_goal = make_goal(10, 3, 1.0)
            feedback.clear()
            handle = wait_future(client.send_goal_async(
                long_goal, feedback_callback=lambda msg: feedback.append(msg.feedback)), 10)
            wait_for(lambda: feedback, 5, message='first feedback of the long goal')
            cancel = wait_future(handle.cancel_goal_async(), 10)
            assert len(cancel.goals_canceling) == 1
            result = wait_future(handle.get_result_async(), 10)
            assert result.status == GoalStatus.STATUS_CANCELED
            assert len(feedback) < 10


def _change(peer, node_name, transition_id):
    client = peer.node.create_client(ChangeState, f'/{node_name}/change_state')
    assert client.wait_for_service(timeout_sec=20.0)
    return wait_future(client.call_async(
        ChangeState.Request(transition=Transition(id=transition_id))), 10).success


def _state(peer, node_name):
    client = peer.node.create_client(GetState, f'/{node_name}/get_state')
    assert client.wait_for_service(timeout_sec=20.0)
    return call_idempotent(client, GetState.Request(), 10).current_state.id


def numbers(heard):
    """Return the counters of the talker's messages ('lc_talker 17' -> 17), in order."""
    return [int(text.rsplit(' ', 1)[1]) for text in list(heard)]


def test_lifecycle_node_driven_from_another_process(domain_id):
    talker = os.path.join(HERE, 'helpers', 'lifecycle_talker.py')
    with python_process(talker, 'lc_talker', name='lc_talker'):
        with RosPeer('lifecycle_driver', domain_id) as peer:
            heard = []
            peer.node.create_subscription(String, '/chatter', lambda m: heard.append(m.data),
                                          10)
            assert _state(peer, 'lc_talker') == State.PRIMARY_STATE_UNCONFIGURED
            assert _change(peer, 'lc_talker', Transition.TRANSITION_CONFIGURE)
            assert _state(peer, 'lc_talker') == State.PRIMARY_STATE_INACTIVE
            assert _change(peer, 'lc_talker', Transition.TRANSITION_ACTIVATE)
            assert _state(peer, 'lc_talker') == State.PRIMARY_STATE_ACTIVE
            wait_for(lambda: len(heard) >= 3, 10, message='messages while active')
            assert _change(peer, 'lc_talker', Transition.TRANSITION_DEACTIVATE)
            # Something that must not happen for a while: the talker's timer keeps counting
            # while it is inactive (12 periods here), and none of those messages may arrive.
            time.sleep(0.6)
            before = numbers(heard)
            assert _change(peer, 'lc_talker', Transition.TRANSITION_ACTIVATE)
            wait_for(lambda: len(heard) > len(before), 10, message='messages once active again')
            after = numbers(heard)[len(before):]
            # the numbers skip the ticks while inactive: a gap, not a stream
            assert after[0] - before[-1] > 1, \
                f'an inactive lifecycle publisher kept talking: {before[-3:]} then {after[:3]}'
            assert _change(peer, 'lc_talker', Transition.TRANSITION_DEACTIVATE)
            # A transition that is not valid from this state is refused, not crashed on.
            assert not _change(peer, 'lc_talker', Transition.TRANSITION_DEACTIVATE)
            assert _change(peer, 'lc_talker', Transition.TRANSITION_CLEANUP)
            assert _state(peer, 'lc_talker') == State.PRIMARY_STATE_UNCONFIGURED
            assert _change(peer, 'lc_talker', Transition.TRANSITION_UNCONFIGURED_SHUTDOWN)
            assert _state(peer, 'lc_talker') == State.PRIMARY_STATE_FINALIZED
