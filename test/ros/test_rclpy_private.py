"""The private rclpy names the package relies on still exist (fails loudly on an upgrade)."""

import importlib

from control_msgs.action import FollowJointTrajectory
import pytest
import rclpy
import rclpy._rclpy_pybind11 as extension
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sweetie_motion.nodes import rclpy_private
from unique_identifier_msgs.msg import UUID

SendGoalResponse = FollowJointTrajectory.Impl.SendGoalService.Response

pytestmark = pytest.mark.ros


@pytest.fixture(scope='module')
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def instance_of(cls, context):
    if issubclass(cls, Node):
        return cls('rclpy_private_check', context=context)
    if cls in (ActionClient, ClientGoalHandle):
        node = Node('rclpy_private_check', context=context)
        client = ActionClient(node, FollowJointTrajectory, 'rclpy_private_check')
        if cls is ActionClient:
            client.destroy_node = node.destroy_node
            return client
        handle = ClientGoalHandle(client, UUID(), SendGoalResponse(accepted=True))
        handle.destroy_node = node.destroy_node
        return handle
    if cls is rclpy.executors.Executor:
        return SingleThreadedExecutor(context=context)
    return cls(num_threads=2, context=context)


@pytest.mark.parametrize('path, attribute', rclpy_private.PRIVATE_ATTRIBUTES)
def test_a_private_rclpy_attribute_the_motion_process_uses_exists(path, attribute, context):
    module_name, class_name = path.rsplit('.', 1)
    cls = getattr(importlib.import_module(module_name), class_name)
    present = callable(getattr(cls, attribute, None))  # a method, on the class itself
    if not present:  # an instance attribute, set up by the constructor
        instance = instance_of(cls, context)
        present = hasattr(instance, attribute)
        (instance.destroy_node if hasattr(instance, 'destroy_node') else instance.shutdown)()
    assert present, (
        f'rclpy changed: {path}.{attribute} is gone (checked with rclpy '
        f'{rclpy_private.CHECKED_RCLPY}); see sweetie_motion/nodes/rclpy_private.py for what '
        'relies on it')


def test_the_exceptions_of_rclpys_extension_are_where_we_take_them_from():
    assert rclpy_private.RCLError is extension.RCLError
    assert rclpy_private.InvalidHandle is extension.InvalidHandle
