"""
Goals that would hurt the robot are refused before anything moves (R-SYS-9, issue #22).

From another process, as MoveIt or the CLI sends them: two legs that cross, three feet lifted
with the weight beyond the fourth, a crouch on two legs that holds the knees above their rated
torque for longer than the servos allow, the arm's tool into its base. Each gets INVALID_GOAL
and an error_string naming what, where and when, and the robot does not move; an ordinary
motion still plays.
"""

from pathlib import Path

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from motion_process import motion_process, MotionClient
import pytest
from ros_util import wait_for, wait_future
from sweetie_motion.ros.action_client import ActionClient
from trajectory_msgs.msg import JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
Result = FollowJointTrajectory.Result
LEGS = ['leg1', 'leg2', 'leg3', 'leg4']

PROCESS = """sweetie_motion:
  namespace: {namespace}
  robot: {robot}
  period: 0.01
  components:
    - {{name: virtual_robot, type: virtual_robot}}
    - name: joint_trajectory
      type: joint_trajectory
      parameters:
        controlled_chains: {chains}
        constraints: {{path_tolerance: 0.3, goal_tolerance: 0.05, goal_time: 1.0}}
"""


def strict_pony(tmp: Path) -> Path:
    """Write the pony's robot description with every check set to refuse."""
    text = (ROOT / 'config' / 'sweetie_bot.yaml').read_text()
    config = ROOT / 'config'
    for name in ('sweetie_bot.urdf', 'sweetie_bot.srdf', 'sweetie_bot_servos.yaml'):
        text = text.replace(f': {name}', f': {config / name}')
    text = text.replace('mode: warn', 'mode: refuse')
    path = tmp / 'strict_pony.yaml'
    path.write_text(text)
    return path


def duration(seconds):
    return Duration(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))


def goal(joints, rows, times):
    message = FollowJointTrajectory.Goal()
    message.trajectory.joint_names = list(joints)
    message.trajectory.points = [
        JointTrajectoryPoint(positions=[float(v) for v in row], time_from_start=duration(t))
        for row, t in zip(rows, times)]
    return message


def flags(supporting):
    return [1.0 if leg in supporting else 0.0 for leg in LEGS]


def run(peer, action, message, timeout=30.0):
    handle = wait_future(action.send_goal_async(message), timeout, 'goal response')
    assert handle.accepted
    return wait_future(handle.get_result_async(), timeout, 'goal result')


@pytest.fixture(scope='module')
def pony(tmp_path_factory):
    from domains import own_domain
    tmp = tmp_path_factory.mktemp('checks')
    config = tmp / 'process.yaml'
    config.write_text(PROCESS.format(namespace='pony_checks', robot=strict_pony(tmp),
                                     chains='[leg1, leg2, leg3, leg4, head, nose, eyes]'))
    with own_domain() as domain:
        with motion_process(str(config), 'pony_checks'):
            with MotionClient('pony_checks', domain) as peer:
                peer.wait_ready(['joint_trajectory'])
                peer.action = ActionClient(
                    peer.node, FollowJointTrajectory,
                    '/pony_checks/joint_trajectory/follow_joint_trajectory')
                assert peer.action.wait_for_server(timeout_sec=20)
                yield peer


def unmoved(peer, joints, start):
    return all(abs(peer.position(j, 'reference') - start[j]) < 1e-6 for j in joints)


def test_two_legs_that_cross_are_refused_naming_the_links_and_the_time(pony):
    joints = ['joint11', 'joint21']
    start = {j: pony.position(j, 'reference') for j in joints}
    result = run(pony, pony.action, goal(joints, [[0.3, -0.3]], [2.0]))
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == Result.INVALID_GOAL
    text = result.result.error_string
    assert 'collision' in text and 'bone1' in text and 'bone2' in text, text
    assert 'at t = ' in text and 'mm' in text, text
    assert unmoved(pony, joints, start)


def test_three_feet_lifted_with_the_weight_beyond_the_fourth_is_refused(pony):
    joints = ['joint52'] + [f'support/{leg}' for leg in LEGS]
    start = pony.position('joint52', 'reference')
    result = run(pony, pony.action, goal(joints, [[start + 0.05] + flags({'leg1'})], [1.0]))
    assert result.result.error_code == Result.INVALID_GOAL
    text = result.result.error_string
    assert 'balance' in text and 'outside the support polygon' in text, text
    assert 'supporting: leg1)' in text, text


def test_a_crouch_held_on_two_legs_overloads_the_knees_and_is_refused(pony):
    # crouched on its bent hind legs for 3 s: each knee holds more than its rated torque for
    # longer than the HerkuleX overload detection (1.68 s). (A fast swing cannot get beyond
    # the stall torque here: the joint limits cap the acceleration at 20 rad/s^2; the unit
    # tests drive the dynamic case.)
    joints = ['joint32', 'joint33', 'joint34', 'joint42', 'joint43', 'joint44'] + \
        [f'support/{leg}' for leg in LEGS]
    crouch = [-1.1, 1.8, -0.7, -1.1, 1.8, -0.7] + flags({'leg3', 'leg4'})
    result = run(pony, pony.action, goal(joints, [crouch, crouch], [2.0, 5.0]))
    assert result.result.error_code == Result.INVALID_GOAL
    text = result.result.error_string
    assert 'load: joint' in text and '% of its rated' in text and 'above rated for' in text, text


def test_an_ordinary_motion_passes_the_checks_and_plays(pony):
    start = pony.position('joint53', 'reference')
    result = run(pony, pony.action, goal(['joint53'], [[start + 0.3], [start]], [1.0, 2.0]))
    assert result.status == GoalStatus.STATUS_SUCCEEDED, result.result.error_string
    assert 'warning' not in result.result.error_string


def test_the_arms_tool_into_its_base_is_refused(tmp_path, domain_id):
    config = tmp_path / 'arm.yaml'
    config.write_text(PROCESS.format(namespace='arm_checks', robot='winding_arm.yaml',
                                     chains='[arm]'))
    with motion_process(str(config), 'arm_checks'):
        with MotionClient('arm_checks', domain_id) as peer:
            peer.wait_ready(['joint_trajectory'])
            action = ActionClient(peer.node, FollowJointTrajectory,
                                  '/arm_checks/joint_trajectory/follow_joint_trajectory')
            assert action.wait_for_server(timeout_sec=20)
            joints = [f'joint{k}' for k in range(1, 7)]
            wait_for(lambda: peer.reference is not None, 10, message='joint_states_ref')
            result = run(peer, action, goal(joints, [[-1.57, 1.23, 0.99, 0.0, 0.0, 0.0]],
                                            [4.0]))
            assert result.result.error_code == Result.INVALID_GOAL
            text = result.result.error_string
            assert 'collision' in text and 'base_link and tool0' in text, text
