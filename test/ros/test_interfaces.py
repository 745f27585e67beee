"""The generated interfaces: wire layout of control_msgs, our messages, serialization."""

import math
import sys

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


#: RIHS01 type hashes of ros2_control's controller_manager_msgs on the jazzy branch (4.46.0),
#: from its own definitions built here: equal hashes, the same wire type
CONTROLLER_MANAGER_HASHES = {
    'msg/ChainConnection': '2daecd1da4b171f48b291c79747657a651eb1ab8821b68e38b1c88c736bba91c',
    'msg/ControllerManagerActivity':
        '35b7de5d611b6780e89732de325f2f765eacdb8a7adfe5821a27af4a03a7c244',
    'msg/ControllerState': '9a8780ab9814b6032978a07c6c7033cf1a7894ac8d948a6fb72afea07b04cc83',
    'msg/HardwareComponentState':
        '8723f76b60e3ea54920065e3e777d93c68b76fc12839ad6a6ca4e0a6439b384c',
    'msg/HardwareInterface': 'b4c556991db81ca56a49338b5e8f0675a6707faee54fba161d2bbd4d963d418a',
    'msg/NamedLifecycleState': 'b7947b6f8df8f7e93d1cb8d115842fb0eeddfa6fb5c7b86cc0f3cafd55be4c1f',
    'srv/CleanupController': '0e5e0da84cf97150abbb3a4e2249c67e6f43dba01ed9b7228b4deaab8838ec4b',
    'srv/ConfigureController': 'b5de498113f4eabc7b932e019ca0498d67304b1ca465fe8a426ea89644865ff9',
    'srv/ListControllerTypes': '873e8d2bb81b8b5903ca736d299ba959f929efec4b4a18d17354b8b322822e05',
    'srv/ListControllers': '4f8e36bb1fa5afdeba45c2d56ae6a2097b1493a253f961dd6290c085033bd189',
    'srv/ListHardwareComponents':
        '2ff105e609928671af16413362c0fdd089e1dd50c5a49d830db603ba8e4439c8',
    'srv/ListHardwareInterfaces':
        'c3e561a6e8cc7b9d577d8065c783038e51f6950cbe9bed67fb117a3e2e04d8f1',
    'srv/LoadController': 'e37f7596c50c88cf8cb7a10cd376ff7579850cc63b5e787e9c8f11981f9ab4d2',
    'srv/ReloadControllerLibraries':
        '485cd0040f8a343a9596155b967363e1bc715f034bbb111f795c73d9d8056a9b',
    'srv/SetHardwareComponentState':
        '940b15846ed3e1fb561ab45edf77a992b811fd59c574f45d5205a84a0deb2f65',
    'srv/SwitchController': 'd4ad10aa5da7808bc522d55d4123d8ef79de73d049d165639d7663ac37cc9895',
    'srv/UnloadController': '4055728e84c041348648d7f808c6681562000e3a9ce9fbb42c3350df25773f16',
}


@pytest.mark.parametrize('name', sorted(CONTROLLER_MANAGER_HASHES))
def test_controller_manager_msgs_are_upstream_jazzys_on_the_wire(name):
    import json
    import os
    from ament_index_python.packages import get_package_share_directory
    os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    share = get_package_share_directory('controller_manager_msgs')
    with open(os.path.join(share, f'{name}.json'), encoding='utf-8') as stream:
        described = json.load(stream)
    assert described['type_hashes'][0]['type_name'] == f'controller_manager_msgs/{name}'
    assert described['type_hashes'][0]['hash_string'] == \
        f'RIHS01_{CONTROLLER_MANAGER_HASHES[name]}'


def _rihs01(description, referenced) -> str:
    """Return the RIHS01 hash of a type description (REP 2011: its fields, no default values)."""
    import hashlib
    import json

    def hashable(td):
        return {'type_name': td['type_name'],
                'fields': [{'name': f['name'], 'type': f['type']} for f in td['fields']]}
    document = {'type_description': hashable(description),
                'referenced_type_descriptions': [hashable(r) for r in sorted(
                    referenced, key=lambda r: r['type_name'])]}
    text = json.dumps(document, separators=(', ', ': '))
    return 'RIHS01_' + hashlib.sha256(text.encode()).hexdigest()


def test_tf2_msgs_tfmessage_is_upstream_jazzys_on_the_wire():
    # upstream geometry2 (jazzy, 0.36.x) tf2_msgs/msg/TFMessage.msg is one field,
    # `geometry_msgs/TransformStamped[] transforms`; its hash is computed here from that
    # definition and geometry_msgs' own description (the wheel's, built upstream), and must be
    # the hash of the tf2_msgs the setup built
    import json
    import os
    from ament_index_python.packages import get_package_share_directory
    from tf2_msgs.msg import TFMessage
    os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    assert TFMessage.get_fields_and_field_types() == {
        'transforms': 'sequence<geometry_msgs/TransformStamped>'}

    def described(package, name):
        path = os.path.join(get_package_share_directory(package), 'msg', f'{name}.json')
        with open(path, encoding='utf-8') as stream:
            return json.load(stream)
    stamped = described('geometry_msgs', 'TransformStamped')
    inner = stamped['type_description_msg']
    # the method reproduces the wheel's own hash of TransformStamped
    assert _rihs01(inner['type_description'], inner['referenced_type_descriptions']) == \
        stamped['type_hashes'][0]['hash_string']
    upstream = {'type_name': 'tf2_msgs/msg/TFMessage', 'fields': [{'name': 'transforms', 'type': {
        'type_id': 145,   # a nested type (1) in an unbounded sequence (+144)
        'capacity': 0, 'string_capacity': 0,
        'nested_type_name': 'geometry_msgs/msg/TransformStamped'}}]}
    expected = _rihs01(upstream, [inner['type_description']] +
                       inner['referenced_type_descriptions'])
    ours = described('tf2_msgs', 'TFMessage')['type_hashes'][0]
    assert ours == {'type_name': 'tf2_msgs/msg/TFMessage', 'hash_string': expected}
    assert expected == 'RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'


def test_foot_contacts_has_its_fields():
    from sweetie_motion_msgs.msg import FootContacts
    assert FootContacts.get_fields_and_field_types() == {
        'header': 'std_msgs/Header', 'name': 'sequence<string>',
        'in_contact': 'sequence<boolean>', 'position': 'sequence<geometry_msgs/Point>',
        'force': 'sequence<geometry_msgs/Vector3>'}
