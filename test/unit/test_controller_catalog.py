"""The registry of component types, the controllers in ros2_control's terms, the status table."""

import pytest
from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.controllers.catalog import (
    component_type, COMPONENT_TYPES, CONTROLLER, CONTROLLER_TYPES, ControllerEntry, HARDWARE,
    hardware_interfaces, HARDWARE_TYPES, owned_by, status_table, StatusRow,
)
from sweetie_motion.errors import ConfigError


class HoldCore(ControllerCore):
    """A user's controller core (never created here)."""


class HoldNode:
    """A user's controller node as the registry sees one: a table and a controller core."""

    PARAMETERS: list = []
    COMPONENT = HoldCore


class SensorNode:
    """A user's node that is no controller: a table, no controller core."""

    PARAMETERS: list = []


def test_one_registry_names_every_type_with_its_role_and_ros2_control_name():
    assert CONTROLLER_TYPES == {name: t.ros2_control for name, t in COMPONENT_TYPES.items()
                                if t.role == CONTROLLER}
    assert list(HARDWARE_TYPES) == ['virtual_robot', 'physics_robot', 'herkulex_bus']
    assert component_type('joint_trajectory').ros2_control == \
        'joint_trajectory_controller/JointTrajectoryController'
    assert component_type('herkulex_bus').role == HARDWARE
    assert component_type('trajectory_storage').role == ''
    assert COMPONENT_TYPES['gripper'].node == 'sweetie_motion.nodes.gripper:GripperNode'


def test_a_users_module_class_is_resolved_as_a_built_in_is():
    holder = component_type(f'{__name__}:HoldNode')
    assert (holder.role, holder.ros2_control) == (CONTROLLER, f'{__name__}/HoldNode')
    assert holder.node_class() is HoldNode
    assert ControllerEntry('eyes_holder', holder.name, 'active').ros2_control_type == \
        holder.ros2_control
    sensor = component_type(f'{__name__}:SensorNode')
    assert (sensor.role, sensor.ros2_control) == ('', '')
    for name, words in (('folow_joint_state', "did you mean 'follow_joint_state'"),
                        (f'{__name__}:Nothing', "has no node class 'Nothing'"),
                        ('no_such_module:Node', "module 'no_such_module' does not import")):
        with pytest.raises(ConfigError, match=words):
            component_type(name)


def head(state: str = 'active', owned=('head',)) -> ControllerEntry:
    return ControllerEntry('head_trajectory', 'joint_trajectory', state, ('head', 'eyes'),
                           ('joint51', 'joint52', 'eyes_yaw'), ('head', 'eyes'), tuple(owned),
                           ('joint51', 'joint52') if 'head' in owned else ())


def test_a_trajectory_controller_is_a_joint_trajectory_controller_to_ros2_control():
    entry = head()
    assert entry.ros2_control_type == 'joint_trajectory_controller/JointTrajectoryController'
    assert entry.command_interfaces() == ['joint51/position', 'joint52/position',
                                          'eyes_yaw/position']
    # rqt_joint_trajectory_controller takes the joints from the position state interfaces
    assert [i for i in entry.state_interfaces() if i.endswith('/position')] == \
        entry.command_interfaces()
    assert entry.claimed_interfaces() == ['joint51/position', 'joint52/position']


def test_an_inactive_controller_claims_nothing_and_other_types_keep_their_name():
    assert head('inactive').claimed_interfaces() == []
    assert ControllerEntry('x', 'follow_joint_state', 'active').ros2_control_type == \
        'sweetie_motion/FollowJointStateController'
    assert ControllerEntry('x', 'new_kind', 'active').ros2_control_type == \
        'sweetie_motion/new_kind'


def test_owners_and_hardware_interfaces():
    owners = {'leg1': 'follow_joint_state', 'head': 'head_trajectory', 'eyes': ''}
    assert owned_by(owners, 'head_trajectory') == ['head']
    assert owned_by(owners, 'nobody') == []
    commands, states = hardware_interfaces(['joint11', 'joint51'], ['joint51/position'])
    assert commands == [('joint11/position', False), ('joint51/position', True)]
    assert states == ['joint11/position', 'joint11/velocity', 'joint11/effort',
                      'joint51/position', 'joint51/velocity', 'joint51/effort']


def test_the_status_table_has_every_node_the_owners_and_the_notes():
    text = status_table(
        [StatusRow('head_trajectory', 'JointTrajectoryController', 'active', 'head eyes',
                   'head'), StatusRow('motion', '', 'active')],
        {'head': 'head_trajectory', 'eyes': ''},
        [('safety stage', 'every reference within the joint limits'),
         ('sync cycle', '100.0 Hz')])
    lines = text.splitlines()
    assert lines[0].split() == ['node', 'type', 'state', 'chains', 'owns', 'now']
    assert lines[2].split() == ['head_trajectory', 'JointTrajectoryController', 'active',
                                'head', 'eyes', 'head']
    assert lines[3].split() == ['motion', '-', 'active', '-', '-']
    assert 'resources: head head_trajectory, eyes free' in lines
    assert 'safety stage  every reference within the joint limits' in lines
    assert 'sync cycle    100.0 Hz' in lines
