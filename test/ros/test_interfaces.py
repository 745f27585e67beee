"""The generated interfaces: wire layout of control_msgs, our messages, serialization."""

import math

from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointComponentTolerance, JointTolerance
from control_msgs.msg import JointTrajectoryControllerState
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sweetie_motion_msgs.action import PlayTrajectory
from sweetie_motion_msgs.msg import ResourceOwnership, ServoModel, SupportState
from trajectory_msgs.msg import JointTrajectoryPoint

# Field names and types of upstream control_msgs 5.x (ROS 2 Jazzy), in wire order. MoveIt 2 and
# ros2_controllers use exactly these; a difference here means a different wire type.
UPSTREAM = {
    FollowJointTrajectory.Goal: [
        ('trajectory', 'trajectory_msgs/JointTrajectory'),
        ('multi_dof_trajectory', 'trajectory_msgs/MultiDOFJointTrajectory'),
        ('path_tolerance', 'sequence<control_msgs/JointTolerance>'),
        ('component_path_tolerance', 'sequence<control_msgs/JointComponentTolerance>'),
        ('goal_tolerance', 'sequence<control_msgs/JointTolerance>'),
        ('component_goal_tolerance', 'sequence<control_msgs/JointComponentTolerance>'),
        ('goal_time_tolerance', 'builtin_interfaces/Duration')],
    FollowJointTrajectory.Result: [('error_code', 'int32'), ('error_string', 'string')],
    FollowJointTrajectory.Feedback: [
        ('header', 'std_msgs/Header'), ('joint_names', 'sequence<string>'),
        ('desired', 'trajectory_msgs/JointTrajectoryPoint'),
        ('actual', 'trajectory_msgs/JointTrajectoryPoint'),
        ('error', 'trajectory_msgs/JointTrajectoryPoint'),
        ('multi_dof_joint_names', 'sequence<string>'),
        ('multi_dof_desired', 'trajectory_msgs/MultiDOFJointTrajectoryPoint'),
        ('multi_dof_actual', 'trajectory_msgs/MultiDOFJointTrajectoryPoint'),
        ('multi_dof_error', 'trajectory_msgs/MultiDOFJointTrajectoryPoint')],
    JointTolerance: [('name', 'string'), ('position', 'double'), ('velocity', 'double'),
                     ('acceleration', 'double')],
    JointComponentTolerance: [('joint_name', 'string'), ('component', 'uint16'),
                              ('position', 'double'), ('velocity', 'double'),
                              ('acceleration', 'double')],
    JointTrajectoryControllerState: [('header', 'std_msgs/Header'),
                                     ('joint_names', 'sequence<string>')] + [
        (name, 'trajectory_msgs/JointTrajectoryPoint')
        for name in ('reference', 'feedback', 'error', 'output', 'desired', 'actual')] + [
        ('multi_dof_joint_names', 'sequence<string>')] + [
        (f'multi_dof_{name}', 'trajectory_msgs/MultiDOFJointTrajectoryPoint')
        for name in ('reference', 'feedback', 'error', 'output', 'desired', 'actual')],
}


@pytest.mark.parametrize('message', list(UPSTREAM), ids=lambda m: m.__name__)
def test_control_msgs_fields_are_those_of_upstream_jazzy(message):
    assert list(message.get_fields_and_field_types().items()) == UPSTREAM[message]


def test_result_codes_are_those_of_upstream():
    result = FollowJointTrajectory.Result
    assert (result.SUCCESSFUL, result.INVALID_GOAL, result.INVALID_JOINTS,
            result.OLD_HEADER_TIMESTAMP, result.PATH_TOLERANCE_VIOLATED,
            result.GOAL_TOLERANCE_VIOLATED) == (0, -1, -2, -3, -4, -5)
    assert (JointComponentTolerance.X_AXIS, JointComponentTolerance.ROTATION) == (1, 5)


def goal_with(points, joints):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [f'joint{j}' for j in range(joints)]
    for k in range(points):
        t = 0.1 * k
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=[math.sin(t + j) for j in range(joints)],
            velocities=[math.cos(t + j) for j in range(joints)],
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))))
    goal.path_tolerance = [JointTolerance(name=n, position=0.1)
                           for n in goal.trajectory.joint_names]
    goal.goal_time_tolerance = Duration(sec=1)
    return goal


def test_a_50_point_32_joint_goal_survives_serialization():
    goal = goal_with(50, 32)
    blob = serialize_message(goal)
    assert 25_000 < len(blob) < 40_000
    back = deserialize_message(blob, FollowJointTrajectory.Goal)
    assert back == goal
    assert back.trajectory.points[49].positions[31] == pytest.approx(math.sin(4.9 + 31))
    assert back.path_tolerance[7].name == 'joint7'
    # a truncated blob is an error, not a crash
    with pytest.raises(Exception):
        deserialize_message(blob[:100], FollowJointTrajectory.Goal)


def test_our_messages_exist_with_their_fields():
    assert SupportState.get_fields_and_field_types() == {
        'header': 'std_msgs/Header', 'name': 'sequence<string>', 'support': 'sequence<double>'}
    assert list(ServoModel.get_fields_and_field_types()) == [
        'name', 'kp', 'kgear', 'alpha', 'qs']
    assert len(ServoModel().alpha) == 4
    assert list(ResourceOwnership.get_fields_and_field_types()) == [
        'header', 'resources', 'owners']
    goal = PlayTrajectory.Goal(name='greeting', speed_scale=2.0, backward=True)
    assert deserialize_message(serialize_message(goal), PlayTrajectory.Goal) == goal
    assert PlayTrajectory.Result.NOT_FOUND == -10
