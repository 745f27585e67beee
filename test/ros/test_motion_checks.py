"""
Goals that would hurt the robot are refused before anything moves (R-SYS-9, issues #22, #35).

From another process, as MoveIt or the CLI sends them, against the pony's description as
shipped (its checks refuse by default): two legs that cross, a lean past the front hooves, a
hoof put down forward and dragged back (a servo held at stall after the motion), the arm's
tool into its base. Each gets INVALID_GOAL and an error_string naming what, where and when,
and the robot does not move; an ordinary motion still plays, without a warning.
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


def default_pony(tmp: Path) -> Path:
    """Write the pony's robot description as shipped (its checks refuse by default)."""
    text = (ROOT / 'config' / 'sweetie_bot.yaml').read_text()
    config = ROOT / 'config'
    for name in ('sweetie_bot.urdf', 'sweetie_bot.srdf', 'sweetie_bot_servos.yaml',
                 'meshes/proto2_collision'):
        text = text.replace(f': {name}', f': {config / name}')
    assert 'mode: warn' not in text
    path = tmp / 'pony.yaml'
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
    config.write_text(PROCESS.format(namespace='pony_checks', robot=default_pony(tmp),
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


def test_a_lean_past_the_front_hooves_is_refused_as_a_fall_naming_when_it_tips(pony):
    # every leg swung back, the hooves kept flat: the body ends leaning past its front hooves
    joints = [f'joint{leg}{k}' for leg in (1, 2, 3, 4) for k in (2, 4)]
    lean = [-0.9, 0.9] * 4
    start = {j: pony.position(j, 'reference') for j in joints}
    result = run(pony, pony.action, goal(joints, [lean, lean], [1.5, 2.5]))
    assert result.result.error_code == Result.INVALID_GOAL
    text = result.result.error_string
    assert 'balance: tips over from t = ' in text and 'leg1' in text, text
    assert unmoved(pony, joints, start)


def test_a_hoof_put_down_forward_and_dragged_back_is_refused_as_a_held_stall(pony):
    # the greeting before #35: its hoof came down 0.6 s before its flag, still forward, and
    # was pulled back 7 cm along the floor: joint12 held at stall after the motion (physics)
    from sweetie_motion.trajectory.codec import load_goal_file
    stored = load_goal_file(ROOT / 'test' / 'data' / 'checks' / 'greeting_before.yaml')
    message = goal(stored.joint_names, [p.positions for p in stored.points[1:]],
                   [p.time for p in stored.points[1:]])
    result = run(pony, pony.action, message)
    assert result.result.error_code == Result.INVALID_GOAL
    text = result.result.error_string
    assert 'load: the hoof of leg1' in text and 'joint12 holds its stall torque' in text, text


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
